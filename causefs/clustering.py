"""Hierarchical clustering of features with the number of groups chosen by Calinski-Harabasz."""

from __future__ import annotations

import numpy as np
from scipy.cluster.hierarchy import fcluster
from sklearn.metrics import calinski_harabasz_score


def relabel_by_first_occurrence(labels: np.ndarray) -> np.ndarray:
    """Map labels to 0..M-1 in order of first appearance (a canonical labelling)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty_like(first)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse]


def choose_groups(build_tree, points: np.ndarray, max_groups: int):
    """Cut a dendrogram at the M in 2..max_groups with the best Calinski-Harabasz score.

    Parameters
    ----------
    build_tree : callable
        Returns the :func:`scipy.cluster.hierarchy.linkage` matrix over the d features;
        called only when there are enough features (d >= 3) to cut into groups.
    points : ndarray of shape (d, p)
        The features as points, for the Calinski-Harabasz score.
    max_groups : int
        Largest M tried.

    Returns
    -------
    labels : ndarray of int, shape (d,)
        Groups 0..M-1 (first-occurrence order).
    scores : dict
        Calinski-Harabasz score of every M that produced exactly M groups.

    Notes
    -----
    When no cut yields between 2 and d - 1 groups (fewer than 3 features, or all
    features identical), every feature goes to one group (M = 1).
    """
    d = points.shape[0]
    scores = {}
    best = None
    tree = build_tree() if d >= 3 else None
    for m in range(2, min(max_groups, d - 1) + 1):
        labels = fcluster(tree, m, criterion="maxclust")
        if np.unique(labels).size != m:
            continue
        score = calinski_harabasz_score(points, labels)
        scores[m] = float(score)
        if np.isfinite(score) and (best is None or score > best[0]):
            best = (score, labels)
    if best is None:
        return np.zeros(d, dtype=np.int64), scores
    return relabel_by_first_occurrence(best[1]).astype(np.int64), scores
