"""The fusion term: the fused graph G agrees with the granular graphs, weighted by nu."""

from __future__ import annotations

from ..numerics.laplacian import column_sq_norms
from .base import Term


def fused_prior(state):
    """``sum_m nu_m S[m]`` over the groups of positive weight, or None."""
    weighted = [nu * S for nu, S in zip(state.nu, state.S) if nu > 0] if state.S else []
    return sum(weighted[1:], weighted[0]) if weighted else None


class FusionTerm(Term):
    """``- sum_m nu_m <G, S[m]> + sum_j xi_j ||G_.j||^2``: G rewards the edges of the
    granular graphs in proportion to their group's weight nu_m; xi regularizes G
    (re-estimated by the adaptive-neighbour closed form). 0 without G."""

    name = "fusion"
    reads = ("G", "xi", "S", "nu")

    def value(self, state) -> float:
        G = state.G
        if G is None:
            return 0.0
        total = float(state.xi @ column_sq_norms(G)) if state.xi is not None else 0.0
        if state.S:
            total -= float(sum(nu * G.multiply(S).sum() for nu, S in zip(state.nu, state.S)))
        return total

    def add_to_graph_cost(self, state, cost) -> None:
        """The prior ``nu_m G`` of S[m] (eq. S.5); ``sum_m nu_m S[m]`` of G (eq. G.3)."""
        if cost.target == "S":
            nu = state.nu[cost.index]
            if nu > 0:
                cost.add_prior(nu * state.G)
            return
        prior = fused_prior(state)
        if prior is not None:
            cost.add_prior(prior)
        if state.xi is not None:
            cost.add_regularizer(state.xi)
