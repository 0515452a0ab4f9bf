"""G update (paper eq. G.3): adaptive neighbours on the fused graph's cost."""

from __future__ import annotations

from ...budget.graphs import graph_cost
from ...core.parts import Cost
from ...core.state import State
from ...model.subproblems import GraphCost
from ...numerics.adaptive_graphs import adaptive_graph
from ...numerics.anchors import anchor_seeds
from .graph_update import GraphUpdateBlock


class FusedGraphBlock(GraphUpdateBlock):
    """Update G by the closed form on its cost (CAUSE-FS: ``delta_ij = 1/2 ||F_i -
    F_j||^2 - sum_m nu_m S[m]_ij``), xi re-estimated (see
    :class:`~.graph_update.GraphUpdateBlock` for the options)."""

    name = "fused_graph"
    reads = ("F",)
    optional_reads = ("S", "nu", "G", "xi")
    writes = ("G", "xi")
    reestimates = ("xi",)

    def cost(self, size) -> Cost:
        return graph_cost(size, 1, fresh=False)

    def step(self, state: State) -> State:
        p = state.problem
        cost = p.objective.subproblem(GraphCost, state, "G", target="G")
        previous = None
        if self.adaptive_update == "monotone" and state.G is not None:
            previous = (state.G, state.xi)
        G, xi = adaptive_graph(cost.points, p.n_neighbors, cost.prior,
                               self.neighbor_algorithm, previous, warm=[state.G],
                               seeds=anchor_seeds(cost.points, p.anchors, p.n_neighbors))
        return state.replace(G=G, xi=xi)
