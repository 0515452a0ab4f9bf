"""Initial kNN graphs: adaptive neighbours on raw distances."""

from __future__ import annotations

import numpy as np

from ...budget.graphs import graph_cost
from ...core.parts import Cost
from ...core.state import State
from ...model.settings import DEFAULTS, check_setting
from ...numerics.adaptive_graphs import adaptive_graph
from ...numerics.anchors import anchor_seeds
from ...numerics.given_neighbors import given_candidates
from ...numerics.sparse import row_major
from ...numerics.threads import graph_threads, parallel_map
from ..base import Block


class InitialGranularGraphsBlock(Block):
    """``S[m]`` from the raw distances of the features of group m (no prior).

    Where the candidate search is approximate (large n, groups of more than
    :data:`~causefs.numerics.neighbors.LOW_DIMS` features), every group has a fresh
    search of its own (an HNSW index and a round of local search); the initial fused
    graph ``G``, when the schedule has built it, only adds its support to each group's
    candidates: its k neighbours a sample are too few to seed the local search (k + 1),
    and neighbours by all features are seldom neighbours by a group's (3 % of them,
    averaged over the groups of a 50,000 x 64 case; docs/PERFORMANCE.md, "Large n, now"). Groups of few features are
    searched exactly by a k-d tree. The graphs are built in parallel on the caller's
    threads (one after another below
    :data:`~causefs.numerics.threads.PARALLEL_GRAPHS_N` samples).

    Parameters
    ----------
    neighbor_algorithm : str
        Candidate search (:data:`causefs.numerics.neighbors.NEIGHBOR_ALGORITHMS`).
    """

    name = "initial_granular_graphs"
    accepts_sparse = True
    kind = "init"
    reads = ("X_adjusted", "groups")
    optional_reads = ("G",)
    writes = ("S", "gamma")
    requires = ("neighbor_algorithm",)

    def __init__(self, neighbor_algorithm: str = DEFAULTS.neighbor_algorithm):
        self.neighbor_algorithm = check_setting("neighbor_algorithm", neighbor_algorithm)

    def cost(self, size) -> Cost:
        return graph_cost(size, size.n_granularities, fresh=True)

    def step(self, state: State) -> State:
        p = state.problem

        def build(m):
            X_m = row_major(state.X_adjusted[:, np.flatnonzero(state.groups == m)])
            return adaptive_graph(X_m, p.n_neighbors, algorithm=self.neighbor_algorithm,
                                  warm=[state.G],
                                  seeds=anchor_seeds(X_m, p.anchors, p.n_neighbors))

        graphs = parallel_map(build, range(int(state.groups.max()) + 1),
                              threads=graph_threads(state.X_adjusted.shape[0]))
        return state.replace(S=tuple(g for g, _ in graphs), gamma=tuple(c for _, c in graphs))


class InitialFusedGraphBlock(Block):
    """``G`` from the raw distances of all features (the fixed graph of ablation II).

    Neighbours the fit was given (:attr:`causefs.model.problem.Problem.neighbors`: a
    precomputed kNN graph, or a search object fitted here on the scaled data) replace
    the candidate search; the closed form re-scores them with the data's distances.

    Parameters
    ----------
    neighbor_algorithm : str
        Candidate search (:data:`causefs.numerics.neighbors.NEIGHBOR_ALGORITHMS`).
    """

    name = "initial_fused_graph"
    accepts_sparse = True
    kind = "init"
    reads = ("X_adjusted",)
    writes = ("G", "xi")
    requires = ("neighbor_algorithm",)

    def __init__(self, neighbor_algorithm: str = DEFAULTS.neighbor_algorithm):
        self.neighbor_algorithm = check_setting("neighbor_algorithm", neighbor_algorithm)

    def cost(self, size) -> Cost:
        return graph_cost(size, 1, fresh=True)

    def step(self, state: State) -> State:
        p = state.problem
        Y = row_major(state.X_adjusted)
        G, xi = adaptive_graph(Y, p.n_neighbors, algorithm=self.neighbor_algorithm,
                               seeds=given_candidates(p.neighbors, Y, p.n_neighbors + 1)
                               if p.anchors is None
                               else anchor_seeds(Y, p.anchors, p.n_neighbors))
        return state.replace(G=G, xi=xi)
