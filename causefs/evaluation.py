"""The paper's evaluation protocol for a feature ranking, and causal-feature recovery."""

from __future__ import annotations

import numpy as np

from .metrics import kmeans_scores

#: numbers of selected features of the paper's protocol
PAPER_RHOS = (20, 40, 60, 80, 100)


def evaluate_ranking(X, y, ranking, rhos=PAPER_RHOS, *, n_clusters=None, n_runs=50, seed=0,
                     nmi_average="arithmetic", select_all=False) -> dict:
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

    Returns
    -------
    dict
        ``{rho: {"acc_mean", "acc_std", "nmi_mean", "nmi_std", "n_runs", "features"}}``.
    """
    X = np.asarray(X, dtype=float)
    out = {}
    cache = {}
    for rho in rhos:
        k = X.shape[1] if select_all else min(int(rho), X.shape[1])
        if k not in cache:
            columns = np.arange(X.shape[1]) if select_all else np.asarray(ranking)[:k]
            cache[k] = kmeans_scores(X[:, columns], y, n_clusters=n_clusters, n_runs=n_runs,
                                     seed=seed, nmi_average=nmi_average)
        out[int(rho)] = {**cache[k], "features": k}
    return out


def causal_recovery(ranking, causal, rhos=PAPER_RHOS, spurious=None) -> dict:
    """Precision and recall of the known causal features among the top rho.

    Also the fraction of the top rho that are spurious (confounded) features, if given.
    """
    causal = set(np.asarray(causal).tolist())
    spurious = set(np.asarray(spurious).tolist()) if spurious is not None else None
    out = {}
    for rho in rhos:
        top = set(np.asarray(ranking)[: int(rho)].tolist())
        hits = len(top & causal)
        row = {"precision": hits / max(len(top), 1), "recall": hits / max(len(causal), 1)}
        if spurious is not None:
            row["spurious_fraction"] = len(top & spurious) / max(len(top), 1)
        out[int(rho)] = row
    return out
