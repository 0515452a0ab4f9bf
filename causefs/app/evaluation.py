"""The paper's evaluation protocol for a feature ranking, and causal-feature recovery."""

from __future__ import annotations

import numpy as np

from ..numerics.scaling import scale_features
from .metrics import kmeans_scores, share_at_k

#: numbers of selected features of the paper's protocol
PAPER_RHOS = (20, 40, 60, 80, 100)


def evaluate_ranking(X, y, ranking, rhos=PAPER_RHOS, *, n_clusters=None, n_runs=50, seed=0,
                     nmi_average="arithmetic", select_all=False,
                     progress: str | None = None) -> dict:
    """k-means (k-means++, ``n_runs`` seeds) on the top rho features, for every rho.

    Parameters
    ----------
    X : ndarray (n, d)
        Data scaled as the selector saw it.
    y : ndarray (n,)
        Labels (used only for ACC and NMI).
    ranking : ndarray of int
        Features, best first.
    rhos : iterable of int
        Numbers of features; a rho above d is capped at d.
    select_all : bool
        Evaluate all features once for every rho (the AllFea baseline).
    progress : str, optional
        Show a progress bar of the k-means runs with this title (on a terminal only).

    Returns
    -------
    dict
        ``{rho: {"acc_mean", "acc_std", "nmi_mean", "nmi_std", "n_runs", "features"}}``.
    """
    from tqdm.auto import tqdm

    X = np.asarray(X, dtype=float)
    sizes = {int(rho): X.shape[1] if select_all else min(int(rho), X.shape[1]) for rho in rhos}
    out, cache = {}, {}
    with tqdm(total=n_runs * len(set(sizes.values())), desc=progress, unit="run",
              leave=False, disable=None if progress else True) as bar:
        for rho, k in sizes.items():
            if k not in cache:
                columns = np.arange(X.shape[1]) if select_all else np.asarray(ranking)[:k]
                cache[k] = kmeans_scores(X[:, columns], y, n_clusters=n_clusters,
                                         n_runs=n_runs, seed=seed, nmi_average=nmi_average,
                                         on_run=bar.update)
            out[rho] = {**cache[k], "features": k}
    return out


def causal_recovery(ranking, causal, rhos=PAPER_RHOS, spurious=None) -> dict:
    """Precision and recall of the known causal features among the top rho.

    Also the fraction of the top rho that are spurious (confounded) features, if given.
    """
    causal = np.asarray(causal)
    out = {}
    for rho in rhos:
        hits = int(np.isin(np.asarray(ranking)[: int(rho)], causal).sum())
        row = {"precision": share_at_k(ranking, causal, rho),
               "recall": hits / max(causal.size, 1)}
        if spurious is not None:
            row["spurious_fraction"] = share_at_k(ranking, spurious, rho)
        out[int(rho)] = row
    return out


def evaluate_shift(X_test, y_test, ranking, rhos=PAPER_RHOS, *, preprocessing="minmax",
                   **options) -> dict:
    """Out-of-distribution ACC/NMI: k-means on the test environment, top rho features.

    The test environment is scaled by the same rule the selector's training data was
    (``preprocessing``), with its own statistics: an unsupervised method meets a new
    environment without the old one's ranges. ``options`` go to :func:`evaluate_ranking`.

    Parameters
    ----------
    X_test : ndarray (n_test, d)
        Test environment, unscaled, same columns as the training data.
    y_test : ndarray (n_test,)
    ranking : ndarray of int
        Features, best first (learnt on the training environment).
    """
    return evaluate_ranking(scale_features(np.asarray(X_test, dtype=float), preprocessing),
                            y_test, ranking, rhos, **options)
