"""
Select pixels of handwritten digits
===================================

CAUSE-FS as a scikit-learn selector on scikit-learn's digits (1797 images of 8 x 8
pixels): fit it, look at the score of every pixel, and compare k-means on the 20 selected
pixels with k-means on all 64, with the paper's clustering accuracy (ACC). A few
iterations keep the example short; the default is 30.
"""

# %%
# Fit the selector
# ----------------
# ``n_clusters`` is the number of clusters the embedding has (here the ten digits);
# ``n_features_to_select`` is how many features :meth:`~causefs.CauseFS.transform` keeps.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits

from causefs import CauseFS
from causefs.app.metrics import kmeans_scores

X, y = load_digits(return_X_y=True)
selector = CauseFS(n_clusters=10, n_features_to_select=20, max_iter=15,
                   random_state=0)
selector.fit(X)
print(f"{selector.n_iter_} iterations, "
      f"objective {selector.objective_history_[-1]:.4g}")
print("the 20 pixels, best first:")
print(np.argsort(selector.ranking_)[:20])

# %%
# The score of every pixel
# ------------------------
# ``scores_`` is the norm of each row of the selection matrix W; the border pixels of the
# digits never vary (constant features score 0).
fig, axes = plt.subplots(1, 2, figsize=(7, 3.2))
axes[0].imshow(selector.scores_.reshape(8, 8), cmap="viridis")
axes[0].set_title("score of every pixel")
axes[1].imshow(X[0].reshape(8, 8), cmap="gray_r")
selected_pixels = selector.get_support(indices=True)
rows, cols = np.unravel_index(selected_pixels, (8, 8))
axes[1].scatter(cols, rows, s=30, c="red")
axes[1].set_title("the 20 selected pixels")
for ax in axes:
    ax.set_xticks([])
    ax.set_yticks([])
fig.tight_layout()

# %%
# Clustering on the selected pixels
# ---------------------------------
# The paper's protocol, shortened to 10 k-means runs: ACC and NMI of k-means++ on the
# selected features against those on all features.
selected = kmeans_scores(selector.transform(X), y, n_runs=10)
everything = kmeans_scores(X, y, n_runs=10)
print(f"ACC on 20 pixels: {100 * selected['acc_mean']:.1f} %, "
      f"on all 64: {100 * everything['acc_mean']:.1f} %")
