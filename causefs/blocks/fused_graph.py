"""G update (paper eq. G.3): adaptive neighbours on F with the fused prior sum_m nu_m S[m]."""

from __future__ import annotations

from ..core.parts import Cost
from ..core.state import State
from ..model.settings import DEFAULTS, check_setting
from ..numerics.adaptive_graphs import adaptive_graph, check_adaptive_update
from .base import Block
from .graph_cost import graph_cost


class FusedGraphBlock(Block):
    """Update G by the closed form with ``delta_ij = 1/2 ||F_i - F_j||^2 - sum_m nu_m S[m]_ij``.

    xi is re-estimated with G and substituted into both sides of the descent check.

    Parameters
    ----------
    adaptive_update : {"closed_form", "monotone"}
        As for :class:`~causefs.blocks.GranularGraphsBlock`, for xi.
    neighbor_algorithm : str
        Candidate search (:data:`causefs.numerics.neighbors.NEIGHBOR_ALGORITHMS`).
    """

    name = "fused_graph"
    accepts_sparse = True
    kind = "descent"
    reads = ("F",)
    optional_reads = ("S", "nu", "G", "xi")
    writes = ("G", "xi")
    reestimates = ("xi",)
    requires = ("neighbor_algorithm",)

    def __init__(self, adaptive_update: str = "closed_form",
                 neighbor_algorithm: str = DEFAULTS.neighbor_algorithm):
        self.adaptive_update = check_adaptive_update(adaptive_update)
        self.neighbor_algorithm = check_setting("neighbor_algorithm", neighbor_algorithm)

    def cost(self, size) -> Cost:
        return graph_cost(size, 1, fresh=False, priors=size.n_granularities)

    def step(self, state: State) -> State:
        p = state.problem
        weighted = []
        if state.n_granularities:
            weighted = [nu * S for nu, S in zip(state.nu, state.S) if nu > 0]
        prior = sum(weighted[1:], weighted[0]) if weighted else None
        previous = None
        if self.adaptive_update == "monotone" and state.G is not None:
            previous = (state.G, state.xi)
        G, xi = adaptive_graph(state.F, p.n_neighbors, prior, self.neighbor_algorithm,
                               previous, warm=[state.G])
        return state.replace(G=G, xi=xi)
