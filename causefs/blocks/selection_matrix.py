"""W update (paper eq. W.3): one IRLS step on the eps-smoothed l2,1 norm."""

from __future__ import annotations

import warnings

import numpy as np

from ..graphs import symmetric_degree
from ..state import State
from .base import Block


def irls_weights(W: np.ndarray, eps: float) -> np.ndarray:
    """``D_f = 1 / (2 sqrt(||W_f||^2 + eps))``: the majorizer of the l2,1 term at ``W``."""
    return 0.5 / np.sqrt(np.einsum("ij,ij->i", W, W) + eps)


def selection_system(state: State, D: np.ndarray):
    """System matrix and right-hand side of eq. W.3.

    ``A = alpha X~'X~ + lam diag(D) + sum_m R_m X~' L_S[m] X~ R_m`` (d, d) and
    ``B = alpha X~' F`` (d, h). The granular part is block diagonal (groups are disjoint).
    """
    p = state.problem
    Xt = state.mu[:, None] * p.X
    A = p.alpha * (Xt.T @ Xt)
    A[np.diag_indices_from(A)] += p.lam * D
    if state.n_granularities:
        for m, S in enumerate(state.S):
            cols = np.flatnonzero(state.groups == m)
            Xm = Xt[:, cols]
            # X~_m' L X~_m = X~_m' D_S X~_m - sym(X~_m' S X~_m)
            cross = Xm.T @ (S @ Xm)
            block = Xm.T @ (symmetric_degree(S)[:, None] * Xm) - 0.5 * (cross + cross.T)
            A[np.ix_(cols, cols)] += block
    B = p.alpha * (Xt.T @ state.F)
    return A, B


def solve_selection_matrix(state: State, D: np.ndarray) -> np.ndarray:
    """Minimizer W of the quadratic surrogate (eq. W.2) for IRLS weights ``D``.

    NumPy's LAPACK, not SciPy's: the two wheels bundle separate OpenBLAS thread pools,
    and alternating between them was measured 4x slower per solve (JAFFE, 2 cores).
    """
    A, B = selection_system(state, D)
    try:
        return np.linalg.solve(A, B)
    except np.linalg.LinAlgError:
        # lam * D > 0 makes A positive definite; only rounding can make it singular
        warnings.warn("W system numerically singular; using a least-squares solve",
                      RuntimeWarning, stacklevel=3)
        return np.linalg.lstsq(A, B, rcond=None)[0]


class SelectionMatrixBlock(Block):
    """Update W by eq. W.3 with D taken at the current W, then D at the new W.

    The IRLS weights are recomputed from ``state.W`` rather than read from ``state.D``,
    so the step majorizes the l2,1 term at the point it starts from and never raises
    the objective (paper Theorem 1).
    """

    name = "selection_matrix"
    kind = "descent"
    reads = ("X", "mu", "F", "W")
    optional_reads = ("S", "groups")
    writes = ("W", "D")

    def step(self, state: State) -> State:
        eps = state.problem.eps
        W = solve_selection_matrix(state, irls_weights(state.W, eps))
        return state.replace(W=W, D=irls_weights(W, eps))
