"""G update (paper eq. G.3): adaptive neighbours on F with the fused prior sum_m nu_m S[m]."""

from __future__ import annotations

from ..graphs import adaptive_graph
from ..state import State
from .base import Block
from .granular_graphs import check_adaptive_update


class FusedGraphBlock(Block):
    """Update G by the closed form with ``delta_ij = 1/2 ||F_i - F_j||^2 - sum_m nu_m S[m]_ij``.

    xi is re-estimated with G and substituted into both sides of the descent check.

    Parameters
    ----------
    adaptive_update : {"closed_form", "monotone"}
        As for :class:`~causefs.blocks.GranularGraphsBlock`, for xi.
    """

    name = "fused_graph"
    kind = "descent"
    reads = ("F",)
    optional_reads = ("S", "nu", "G", "xi")
    writes = ("G", "xi")
    reestimates = ("xi",)

    def __init__(self, adaptive_update: str = "closed_form"):
        self.adaptive_update = check_adaptive_update(adaptive_update)

    def step(self, state: State) -> State:
        p = state.problem
        weighted = []
        if state.n_granularities:
            weighted = [nu * S for nu, S in zip(state.nu, state.S) if nu > 0]
        prior = sum(weighted[1:], weighted[0]) if weighted else None
        previous = None
        if self.adaptive_update == "monotone" and state.G is not None:
            previous = (state.G, state.xi)
        G, xi = adaptive_graph(state.F, p.n_neighbors, prior, p.neighbor_algorithm, previous,
                               warm=[state.G])
        return state.replace(G=G, xi=xi)
