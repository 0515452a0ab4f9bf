"""A rough time estimate of a fit, to say before it starts that it will be long.

Counts the floating-point work of the dominant operations (the graph searches, the W
system, the balance products, the feature clustering of the initialization) and divides
by assumed rates. It is an order of magnitude, not a bound: against
``benchmarks/bench_speed.py`` (docs/PERFORMANCE.md, one BLAS thread) it ranged from 3x the
measured time (JAFFE: 10 s for 3.3 s) to a third of it (n = 100,000: 378 s for 1167 s).
"""

from __future__ import annotations

import math

from .blocks.selection_matrix import selection_system_cost
from .graphs import EXACT_N
from .treatments import treatment_cap

#: operations per second assumed for dense linear algebra (BLAS, one thread) and for the
#: rest (gathers, sorting, selection of nearest neighbours)
BLAS_RATE = 2e10
OTHER_RATE = 1e9
#: a fit estimated above this many seconds is announced (logging WARNING + LongFitWarning)
LONG_FIT_SECONDS = 600.0
#: products with the mu Hessian per iteration (the block's budget plus its checks)
PRODUCTS_PER_ITERATION = 15


def estimate_fit_seconds(n: int, d: int, *, n_clusters: int, n_neighbors: int = 5,
                         max_granularity: int = 10, max_iter: int = 30,
                         neighbor_algorithm: str = "auto", max_treatments="auto",
                         beta: float = 1.0) -> float:
    """Estimated seconds of a default-schedule fit of n samples and d features."""
    h, c, M = n_clusters, n_neighbors + 1, max_granularity
    exact = neighbor_algorithm in ("exact", "brute", "all") or (
        neighbor_algorithm == "auto" and n <= EXACT_N)
    if exact:  # distances (BLAS) and the selection of the nearest
        fresh, fresh_other = 2.0 * n * n * d, 3.0 * n * n
        update, update_other = 2.0 * n * n * h, 3.0 * n * n
    else:  # HNSW build and search; then a local search from the previous graph
        fresh, fresh_other = 0.0, n * math.log2(max(n, 2)) * d * 30.0
        update, update_other = 0.0, n * (c + 4 * c * c) * (h + 5.0)
    system = min(selection_system_cost(n, d, [max(1, d // M)] * M).values())
    blas = (M + 1) * fresh + 2.0 * n * d * d + max_iter * ((2 * M + 1) * update + 2 * system)
    other = (M + 1) * fresh_other + 10.0 * d * d + max_iter * (2 * M + 1) * update_other
    if beta:
        treatments = treatment_cap(max_treatments, n, d, d)
        blas += max_iter * PRODUCTS_PER_ITERATION * 4.0 * n * d * treatments
    return blas / BLAS_RATE + other / OTHER_RATE
