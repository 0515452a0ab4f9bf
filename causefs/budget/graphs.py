"""What the neighbour-graph blocks cost: candidate searches and their tables."""

from __future__ import annotations

import math

from ..core.parts import Cost
from ..numerics.anchors import resolve_anchors
from ..numerics.neighbors import (
    TREE_DIMS,
    exact_search_work,
    fresh_exact_limit,
    resolve_algorithm,
)

_FLOAT = 8
#: operations per point of an HNSW index built and searched (and the local-search round
#: and closed form that follow), per graph and per dimension searched: the initial fused
#: graph of the default fits of 50,000 and 100,000 x 64 (9.4 and 29 s of wall time,
#: docs/PERFORMANCE.md, "Large n, now"); the CPU seconds of uniform data measured by
#: benchmarks/bench_estimate.py had given 2.8x these
HNSW_POINT_OPS, HNSW_DIM_OPS = 1600.0, 200.0
#: operations per point, candidate and dimension of a warm-started local search with its
#: closed form (same measurements)
UPDATE_OPS = 60.0
#: operations per point, tree level and dimension of a search of the anchors' k-d tree
#: (the graph updates of anchor fits at 50,000 x 64, docs/PERFORMANCE.md, "Anchor graphs")
ANCHOR_TREE_OPS = 20.0


def graph_cost(size, count: int, *, fresh: bool, granular: bool = False) -> Cost:
    """``count`` adaptive graphs of a fit of ``size`` (:class:`~causefs.model.fit_size.FitSize`).

    Fresh graphs search the data's d dimensions between them (the fused graph all of
    them, the granular graphs a group each); an update searches the h dimensions of an
    embedding. The search is the one the ``neighbor_algorithm`` setting resolves to
    (:func:`~causefs.numerics.neighbors.resolve_algorithm`): exact, a k-d tree, or an
    approximate one: for a fresh graph an HNSW index and a round of local search (exact
    up to :func:`~causefs.numerics.neighbors.fresh_exact_limit` points of the dimensions
    one graph searches; the initial granular graphs measured about as costly); for an
    update a local search warm-started from the graph it replaces, among the candidates
    joined with the supports of its prior graphs (G for S[m]; the M graphs S[m] for G),
    priced alike whatever their number. Memory: the candidate tables, the graphs and
    embeddings held, and, for the updates of ``granular`` graphs, the feature groups'
    slices of X (measured for the updates only: a fresh graph's search buffers are not
    counted, docs/PERFORMANCE.md, "Three granular graphs"). With anchors
    (:mod:`causefs.numerics.anchors`) every graph is an exact search of the n points
    against the m anchors.
    """
    n, d, h = size.n_samples, size.n_features, size.n_clusters
    k, M = size.n_neighbors, size.n_granularities
    # the local search refines k + 1 candidates from a warm start of about as many; the
    # priors' supports only join the table: the fused graph's update (M priors) took as
    # long as one granular graph's (one prior) at n = 20,000 to 100,000 (docs/PERFORMANCE.md,
    # "Large n, now")
    width = 2 * k + 1
    searched = d if fresh else count * h  # the dimensions the count graphs search together
    dims = max(1, searched // count)
    algorithm = resolve_algorithm(size.settings.neighbor_algorithm, n, dims)
    hnsw = algorithm == "approximate" and fresh
    anchors = resolve_anchors(size.settings.n_anchors, n)
    flops, ops = 0.0, 0.0
    if anchors is not None:
        # n points against m anchors: a k-d tree of the anchors, or products with them
        # (a fresh graph of sparse data; the updates search the dense embeddings);
        # then the candidate table and closed form (ANCHOR_TREE_OPS, UPDATE_OPS)
        if dims <= TREE_DIMS and (not fresh or size.density == 1.0):
            ops = ANCHOR_TREE_OPS * n * math.log2(max(anchors, 2)) * searched
        else:
            flops, ops = 2.0 * n * anchors * searched, 3.0 * n * anchors * count
        ops += UPDATE_OPS * n * width * count
    elif algorithm in ("exact", "brute", "all") or (hnsw and n <= fresh_exact_limit(dims)):
        # distances (BLAS) and the selection of the nearest; the exact search of a fresh
        # graph multiplies sparse rows where that costs less (its data's non-zeros,
        # spread evenly over the features here)
        work = float(n) * n * searched
        if fresh and algorithm not in ("brute", "all"):
            _, sparse_work = exact_search_work(n, dims, dims * (size.density * n) ** 2)
            work = min(work, count * sparse_work)
        flops, ops = 2.0 * work, 3.0 * n * n * count
    elif algorithm in ("kd_tree", "ball_tree"):  # calibrated on Gaussian points
        ops = 200.0 * n * math.log2(max(n, 2)) * searched
    elif hnsw:
        ops = n * math.log2(max(n, 2)) * (HNSW_POINT_OPS * count + HNSW_DIM_OPS * searched)
    else:
        ops = UPDATE_OPS * n * width * (searched + 5.0 * count)
    # per point, measured by tracemalloc around the updates (n = 2000 to 6000; k 3 to
    # 15, h 3 to 10, M 1 to 10): about ten arrays of a candidate row (k + 1 nearest, the
    # prior's and the old graph's k) while a graph is built, every graph built (k
    # entries), the groups' embeddings (h); the groups' slices of X together hold at
    # most its d columns whatever the threads (sparse: 12 bytes a stored entry)
    memory = (n * (10 * (3 * k + 1) + 3 * M * k + max(h, 1) * (17 + M)) * _FLOAT
              + (n * d * _FLOAT * min(1.0, 1.5 * size.density) if granular else 0))
    advice = {}
    if size.settings.neighbor_algorithm == "all":
        memory = 5 * n * n * _FLOAT
        advice = {"graph_candidates": "use a kNN candidate search: neighbor_algorithm='auto'"}
    return Cost(flops=flops, ops=ops, memory={"graph_candidates": memory}, advice=advice)
