"""Hierarchical clustering of features with the number of groups chosen by Calinski-Harabasz."""

from __future__ import annotations

import heapq

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

from .correlation import pearson_similarity
from .threads import threads_for


def relabel_by_first_occurrence(labels: np.ndarray) -> np.ndarray:
    """Map labels to 0..M-1 in order of first appearance (a canonical labelling)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty_like(first)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse]


def calinski_harabasz(points: np.ndarray, labels: np.ndarray) -> float:
    """Calinski-Harabasz score ``[B / (M - 1)] / [W / (d - M)]`` of a partition.

    The same score as :func:`sklearn.metrics.calinski_harabasz_score`, from the cluster
    sums in one (M, d) x (d, p) product instead of a pass per cluster: choosing the
    groups of d = 10,000 features scores 9 partitions of a 10,000 x 10,000 array.
    ``W = 0`` (every cluster a point) gives 1.0, as scikit-learn does, and so do points
    that are all 0 (W and the total both 0). So does any W of at most ``1e-12`` times the
    points' sum of squares, the threshold included: a W that rounding alone made (equal
    points whose sums round), which the ratio would divide by.
    """
    d = points.shape[0]
    _, labels, counts = np.unique(labels, return_inverse=True, return_counts=True)
    n_groups = counts.size
    indicator = np.zeros((n_groups, d))
    indicator[labels, np.arange(d)] = 1.0
    with threads_for(2.0 * n_groups * points.size):
        sums = indicator @ points
    total = points.sum(axis=0)
    squares = float(np.einsum("ij,ij->", points, points))
    between_means = float((np.einsum("ij,ij->i", sums, sums) / counts).sum())
    within = squares - between_means
    between = between_means - float(total @ total) / d
    if within <= 1e-12 * max(squares, 1e-300):
        return 1.0
    return between * (d - n_groups) / (within * (n_groups - 1))


def ward_tree_1d(values: np.ndarray) -> np.ndarray:
    """Ward linkage of scalars in SciPy's format, O(d log d) instead of O(d^2).

    On a line, Ward's merges join neighbouring clusters (tested against
    :func:`scipy.cluster.hierarchy.linkage`): a heap of the adjacent pairs' merge costs
    ``sqrt(2 n_a n_b / (n_a + n_b)) |mean_a - mean_b|`` (SciPy's Ward distance) replaces
    the d x d distance matrix. Ties go to the leftmost pair, and equal values are laid
    on the line in index order (a stable sort): the tree, its ids included, is the same
    on every machine, where NumPy's default sort orders equal values as its CPU's SIMD
    kernel happens to.
    """
    d = values.size
    order = np.argsort(values, kind="stable")
    ident = [int(i) for i in order]  # linkage id of each run, left to right
    count = [1] * d
    total = [float(values[i]) for i in order]
    left = list(range(-1, d - 1))
    right = list(range(1, d + 1))
    alive = [True] * d

    def cost(a, b):
        na, nb = count[a], count[b]
        return np.sqrt(2.0 * na * nb / (na + nb)) * abs(total[a] / na - total[b] / nb)

    heap = [(cost(a, a + 1), a, a + 1) for a in range(d - 1)]
    heapq.heapify(heap)
    tree = np.empty((d - 1, 4))
    for step in range(d - 1):
        while True:
            height, a, b = heapq.heappop(heap)
            if alive[a] and alive[b] and right[a] == b and height == cost(a, b):
                break
        tree[step] = (min(ident[a], ident[b]), max(ident[a], ident[b]), height,
                      count[a] + count[b])
        count[a] += count[b]
        total[a] += total[b]
        ident[a] = d + step
        alive[b] = False
        right[a] = right[b]
        if right[b] < d:
            left[right[b]] = a
            heapq.heappush(heap, (cost(a, right[a]), a, right[a]))
        if left[a] >= 0:
            heapq.heappush(heap, (cost(left[a], a), left[a], a))
    return tree


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
    Of cuts of equal score the one of fewer groups is taken (the coarser
    granularity).

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
        score = calinski_harabasz(points, labels)
        scores[m] = float(score)
        if np.isfinite(score) and (best is None or score > best[0]):
            best = (score, labels)
    if best is None:
        return np.zeros(d, dtype=np.int64), scores
    return relabel_by_first_occurrence(best[1]).astype(np.int64), scores


def correlation_groups(similarity: np.ndarray, max_groups: int) -> np.ndarray:
    """Groups of features by average linkage on ``1 - |corr|``, M by Calinski-Harabasz.

    Parameters
    ----------
    similarity : ndarray of shape (d, d)
        ``|corr|`` of the features (:func:`causefs.numerics.correlation.pearson_similarity`);
        overwritten by nothing (the condensed distances are a new array). A ``|corr|``
        that rounding put above 1 (equal or opposite features: 1 + 2^-52) is a distance
        of 0, not a negative one, which SciPy's ``fcluster`` refuses.
    max_groups : int
        Largest number of groups M tried.

    Returns
    -------
    ndarray of int, shape (d,)
        Groups 0..M-1 (first-occurrence order).
    """
    def tree():
        # the condensed distances 1 - |corr| built in place: no second (d, d) array
        distance = squareform(similarity, checks=False)
        np.subtract(1.0, distance, out=distance)
        np.clip(distance, 0.0, None, out=distance)
        return linkage(distance, method="average")

    groups, _ = choose_groups(tree, similarity, max_groups)
    return groups


def sampled_correlation_groups(X, n_sampled: int, max_groups: int, seed: int) -> np.ndarray:
    """:func:`correlation_groups` for many features: the tree of a sample, then assignment.

    The groups of ``n_sampled`` features drawn at random (``seed``) are
    :func:`correlation_groups`'s; every other feature joins the group whose sampled
    members it correlates with most on average (``|corr|``, the similarity average linkage
    merges by), the sampled ones keep their own. Time O(n d s + s^2) and memory
    ``d s`` floats for ``s = n_sampled``, instead of O(n d^2) and ``2.5 d^2``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    n_sampled : int
        Features in the sample (< n_features).
    max_groups : int
    seed : int

    Returns
    -------
    ndarray of int, shape (n_features,)
        Groups 0..M-1 (first-occurrence order).
    """
    d = X.shape[1]
    sample = np.sort(np.random.default_rng(seed).choice(d, size=n_sampled, replace=False))
    similarity = pearson_similarity(X, columns=sample)  # (d, s)
    sampled_groups = correlation_groups(np.ascontiguousarray(similarity[sample]), max_groups)
    n_groups = int(sampled_groups.max()) + 1
    indicator = np.zeros((n_sampled, n_groups))
    indicator[np.arange(n_sampled), sampled_groups] = 1.0 / np.bincount(sampled_groups)[
        sampled_groups]
    with threads_for(2.0 * similarity.size * n_groups):
        groups = np.argmax(similarity @ indicator, axis=1)  # ties: the lower group
    groups[sample] = sampled_groups
    return relabel_by_first_occurrence(groups).astype(np.int64)
