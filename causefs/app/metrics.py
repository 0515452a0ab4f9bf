"""Clustering metrics and the paper's evaluation protocol for selected features."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.metrics import confusion_matrix, normalized_mutual_info_score

NMI_AVERAGES = ("arithmetic", "max", "sqrt", "geometric", "min")


def clustering_accuracy(y_true, y_pred) -> float:
    """ACC: the best one-to-one map of clusters to classes (Hungarian algorithm).

    With more clusters than classes (or the reverse) the unmatched ones count as errors.
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred differ in shape: {y_true.shape} vs {y_pred.shape}")
    table = confusion_matrix(y_true, y_pred)
    rows, cols = linear_sum_assignment(-table)
    return float(table[rows, cols].sum() / y_true.size)


def nmi(y_true, y_pred, average: str = "arithmetic") -> float:
    """Normalized mutual information.

    ``arithmetic`` (scikit-learn's default) divides by the mean of the two entropies;
    ``max`` is the normalization of the MATLAB ``MutualInfo.m`` many UFS papers copy;
    ``sqrt`` (= ``geometric``) is Strehl and Ghosh's.
    """
    if average not in NMI_AVERAGES:
        raise ValueError(f"unknown NMI average {average!r}; allowed: {', '.join(NMI_AVERAGES)}")
    method = "geometric" if average == "sqrt" else average
    return float(normalized_mutual_info_score(y_true, y_pred, average_method=method))


def kmeans_scores(X, y, n_clusters: int | None = None, n_runs: int = 50, seed: int = 0,
                  nmi_average: str = "arithmetic", on_run: Callable | None = None) -> dict:
    """The paper's protocol: k-means (k-means++ init) ``n_runs`` times with seeds
    ``seed .. seed + n_runs - 1``; mean and std of ACC and NMI (fractions, not %).
    ``on_run()`` is called after every run (a progress bar's ``update``).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    n_clusters = n_clusters or int(np.unique(y).size)
    acc, mi = [], []
    for run in range(n_runs):
        labels = KMeans(n_clusters=n_clusters, init="k-means++", n_init=1,
                        random_state=seed + run).fit_predict(X)
        acc.append(clustering_accuracy(y, labels))
        mi.append(nmi(y, labels, nmi_average))
        if on_run is not None:
            on_run()
    return {"acc_mean": float(np.mean(acc)), "acc_std": float(np.std(acc)),
            "nmi_mean": float(np.mean(mi)), "nmi_std": float(np.std(mi)), "n_runs": n_runs}


def share_at_k(ranking, features, k: int) -> float:
    """Share of the top ``k`` of ``ranking`` (best first) that lies in ``features``.

    With the known causal features this is causal precision@k; with the spurious ones,
    spurious@k. ``k`` above the ranking's length counts the whole ranking.
    """
    if int(k) < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    top = np.asarray(ranking)[: int(k)]
    return float(np.isin(top, np.asarray(features)).sum() / top.size)
