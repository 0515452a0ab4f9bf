"""The regression term ``alpha ||X~ W - F||_F^2`` (paper eq. 3.5, first term)."""

from __future__ import annotations

import numpy as np

from ..model.settings import DEFAULTS, check_setting
from .base import Term


class RegressionTerm(Term):
    """``alpha ||X~ W - F||_F^2`` with ``X~ = diag(mu) X_adjusted``: the features'
    regression onto the embedding, the term that makes W select.

    Parameters
    ----------
    alpha : float
        Its weight (the ``alpha`` setting).
    """

    name = "regression"
    weighted_by = "alpha"
    reads = ("X_adjusted", "W", "F", "mu")
    needs = ("W", "F", "mu")
    requires = ("alpha",)

    def __init__(self, alpha: float = DEFAULTS.alpha):
        self.alpha = check_setting("alpha", alpha)

    def value(self, state) -> float:
        residual = state.mu[:, None] * (state.X_adjusted @ state.W) - state.F
        return float(self.alpha * np.einsum("ij,ij->", residual, residual))

    def add_to_selection_system(self, state, system) -> None:
        """``alpha X~'X~`` and ``alpha X~'F`` (eq. W.3)."""
        system.add_data_gram(self.alpha)
        system.add_data_rhs(self.alpha, state.F)

    def add_to_embedding_system(self, state, system) -> None:
        """``alpha I`` and ``alpha X~ W`` (eq. F.2)."""
        system.add_identity(self.alpha)
        system.add_rhs(self.alpha * (state.mu[:, None] * (state.X_adjusted @ state.W)))

    def add_to_sample_weight_qp(self, state, qp) -> None:
        """``alpha sum_i (mu_i^2 ||x_i W||^2 - 2 mu_i <x_i W, F_i>)`` (eq. u.3)."""
        XW = state.X_adjusted @ state.W
        qp.add_diagonal(2.0 * self.alpha * np.einsum("ij,ij->i", XW, XW))
        qp.add_linear(-2.0 * self.alpha * np.einsum("ij,ij->i", XW, state.F))

    def add_to_gradient(self, state, gradient) -> None:
        XW = state.X_adjusted @ state.W
        residual = state.mu[:, None] * XW - state.F
        if gradient.variable == "W":
            gradient.add(2.0 * self.alpha * (state.X_adjusted.T @ (state.mu[:, None] * residual)))
        elif gradient.variable == "F":
            gradient.add(-2.0 * self.alpha * residual)
        elif gradient.variable == "mu":
            gradient.add(2.0 * self.alpha * np.einsum("ij,ij->i", residual, XW))
