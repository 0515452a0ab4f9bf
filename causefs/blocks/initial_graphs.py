"""Initial kNN graphs: adaptive neighbours on raw distances."""

from __future__ import annotations

import numpy as np

from ..graphs import adaptive_graph
from ..state import State
from .base import Block


class InitialGranularGraphsBlock(Block):
    """``S[m]`` from the raw distances of the features of group m (no prior)."""

    name = "initial_granular_graphs"
    kind = "init"
    reads = ("X", "groups")
    writes = ("S", "gamma")

    def step(self, state: State) -> State:
        p = state.problem
        graphs = [
            adaptive_graph(p.X[:, np.flatnonzero(state.groups == m)], p.n_neighbors,
                           algorithm=p.neighbor_algorithm)
            for m in range(int(state.groups.max()) + 1)
        ]
        return state.replace(S=tuple(g for g, _ in graphs), gamma=tuple(c for _, c in graphs))


class InitialFusedGraphBlock(Block):
    """``G`` from the raw distances of all features (the fixed graph of ablation II)."""

    name = "initial_fused_graph"
    kind = "init"
    reads = ("X",)
    writes = ("G", "xi")

    def step(self, state: State) -> State:
        p = state.problem
        G, xi = adaptive_graph(p.X, p.n_neighbors, algorithm=p.neighbor_algorithm)
        return state.replace(G=G, xi=xi)
