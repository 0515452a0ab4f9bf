"""The fused-graph smoothness term ``Tr(F' L_G F)`` (paper eq. 3.5)."""

from __future__ import annotations

from ..numerics.laplacian import laplacian_matmul, laplacian_quadratic
from .base import Term


class FusedSmoothnessTerm(Term):
    """``Tr(F' L_G F) = 1/2 sum_ij G_ij ||F_i - F_j||^2``: the embedding is smooth on
    the fused graph. 0 without G."""

    name = "fused_smoothness"
    reads = ("G", "F")

    def value(self, state) -> float:
        return laplacian_quadratic(state.G, state.F) if state.G is not None else 0.0

    def add_to_embedding_system(self, state, system) -> None:
        if state.G is not None:
            system.add_laplacian(state.G)

    def add_to_graph_cost(self, state, cost) -> None:
        """The distances of the embedding's rows, for G (eq. G.3)."""
        if cost.target == "G":
            cost.add_points(state.F)

    def add_to_gradient(self, state, gradient) -> None:
        if gradient.variable == "F" and state.G is not None:
            gradient.add(2.0 * laplacian_matmul(state.G, state.F))
