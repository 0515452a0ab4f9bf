"""What the neighbour-graph blocks cost: candidate searches and their tables."""

from __future__ import annotations

import math

from ..core.parts import Cost
from ..numerics.neighbors import resolve_algorithm

_FLOAT = 8


def graph_cost(size, count: int, *, fresh: bool) -> Cost:
    """``count`` adaptive graphs of a fit of ``size`` (:class:`~causefs.model.fit_size.FitSize`).

    A fresh graph searches the data's d dimensions from nothing (exact, or an HNSW
    index); an update searches the h dimensions of an embedding, warm-started from the
    graph it replaces. Memory: the candidate table joined with the prior's support.
    """
    n, d, h = size.n_samples, size.n_features, size.n_clusters
    c, M = size.n_neighbors + 1, size.n_granularities
    dims = d if fresh else h
    algorithm = resolve_algorithm(size.settings.neighbor_algorithm, n, dims)
    flops, ops = 0.0, 0.0
    if algorithm in ("exact", "brute", "all"):  # distances (BLAS), selection of the nearest
        flops, ops = 2.0 * n * n * dims, 3.0 * n * n
    elif algorithm in ("kd_tree", "ball_tree"):  # calibrated on Gaussian points
        ops = 200.0 * n * math.log2(max(n, 2)) * dims
    elif fresh:  # HNSW build and search
        ops = 30.0 * n * math.log2(max(n, 2)) * dims
    else:  # a local search from the previous graph
        ops = n * (c + 4 * c * c) * (h + 5.0)
    width = c + M * size.n_neighbors  # kNN candidates plus the prior's support
    memory = 6 * n * width * _FLOAT + 2 * n * max(h, 1) * _FLOAT
    advice = {}
    if size.settings.neighbor_algorithm == "all":
        memory = 5 * n * n * _FLOAT
        advice = {"graph_candidates": "use a kNN candidate search: neighbor_algorithm='auto'"}
    return Cost(flops=count * flops, ops=count * ops,
                memory={"graph_candidates": memory}, advice=advice)
