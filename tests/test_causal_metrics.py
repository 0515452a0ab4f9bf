"""Causal precision@k, spurious@k and out-of-distribution k-means scores."""

import numpy as np
import pytest
from sklearn.cluster import KMeans

from causefs.app.evaluation import evaluate_shift
from causefs.app.metrics import clustering_accuracy, share_at_k
from causefs.datasets import make_shifted_clusters


def test_share_at_k_counts_the_top_k():
    ranking = [5, 2, 9, 0, 7]
    assert share_at_k(ranking, [2, 0, 1], 1) == 0.0
    assert share_at_k(ranking, [2, 0, 1], 2) == 0.5
    assert share_at_k(ranking, [2, 0, 1], 4) == 0.5
    assert share_at_k(ranking, [5, 2, 9, 0, 7], 99) == 1.0  # k capped at the ranking
    with pytest.raises(ValueError, match="k must be"):
        share_at_k(ranking, [1], 0)


def test_ood_scores_are_k_means_on_the_scaled_test_environment():
    data = make_shifted_clusters(n_train=200, n_test=300, train_bias=1.0, seed=0)
    ranking = np.concatenate([data.spurious, data.causal, data.noise])
    out = evaluate_shift(data.X_test, data.y_test, ranking, rhos=[16], n_runs=3, seed=7)
    X = data.X_test[:, ranking[:16]]
    X = (X - X.min(axis=0)) / np.ptp(X, axis=0)  # min-max, by hand
    accs = [clustering_accuracy(data.y_test, KMeans(4, n_init=1, random_state=7 + r)
                                .fit_predict(X)) for r in range(3)]
    assert out[16]["acc_mean"] == pytest.approx(np.mean(accs))
    # the spurious features alone do not cluster the test environment
    good = evaluate_shift(data.X_test, data.y_test, data.causal, rhos=[8], n_runs=3)
    assert good[8]["acc_mean"] > 0.9 > 0.6 > out[16]["acc_mean"]
