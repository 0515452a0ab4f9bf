"""The row-sparsity term ``lambda sum_f sqrt(||W_f||^2 + eps)`` (eps-smoothed l2,1 norm)."""

from __future__ import annotations

import numpy as np

from ..model.settings import DEFAULTS, check_setting
from .base import Term


def irls_weights(W: np.ndarray, eps: float) -> np.ndarray:
    """``D_f = 1 / (2 sqrt(||W_f||^2 + eps))``: the majorizer of the l2,1 term at ``W``."""
    return 0.5 / np.sqrt(np.einsum("ij,ij->i", W, W) + eps)


class SparsityTerm(Term):
    """``lam sum_f sqrt(||W_f||^2 + eps)``, the eps-smoothed l2,1 norm of W's rows.

    The W subproblem gets its majorizer at the current W, ``lam Tr(W' D W)`` plus a
    constant with ``D = diag(irls_weights(W))`` (eq. W.2, one IRLS step: paper Theorem
    1); without a current W (the first solve of the initialization) ``D = I``.

    Parameters
    ----------
    lam : float
        Its weight (the ``lam`` setting, the paper's lambda).
    eps : float
        The smoothing (the ``eps`` setting).
    """

    name = "sparsity"
    weighted_by = "lam"
    reads = ("W",)
    needs = ("W",)
    requires = ("lam", "eps")

    def __init__(self, lam: float = DEFAULTS.lam, eps: float = DEFAULTS.eps):
        self.lam = check_setting("lam", lam)
        self.eps = check_setting("eps", eps)

    def value(self, state) -> float:
        W = state.W
        return float(self.lam * np.sqrt(np.einsum("ij,ij->i", W, W) + self.eps).sum())

    def add_to_selection_system(self, state, system) -> None:
        D = (np.ones(state.problem.n_features) if state.W is None
             else irls_weights(state.W, self.eps))
        system.add_diagonal(self.lam * D)

    def add_to_gradient(self, state, gradient) -> None:
        if gradient.variable == "W":
            W = state.W
            gradient.add(self.lam * W / np.sqrt(np.einsum("ij,ij->i", W, W) + self.eps)[:, None])
