"""W update (paper eq. W.3): one IRLS step on the eps-smoothed l2,1 norm."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from ..core.parts import Cost
from ..core.state import State
from ..core.validation import check_choice
from ..numerics.laplacian import laplacian_matmul, laplacian_matrix
from ..numerics.threads import threads_for
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
    n, d = Xt.shape
    with threads_for(n * d * d):
        A = p.alpha * (Xt.T @ Xt)
    A[np.diag_indices_from(A)] += p.lam * D
    if state.n_granularities:
        for m, S in enumerate(state.S):
            cols = np.flatnonzero(state.groups == m)
            Xm = Xt[:, cols]
            # X~_m' L X~_m from the sparse product L X~_m: one dense product, not two
            with threads_for(2.0 * n * cols.size ** 2):
                block = Xm.T @ laplacian_matmul(S, Xm)
            A[np.ix_(cols, cols)] += 0.5 * (block + block.T)
    B = p.alpha * (Xt.T @ state.F)
    return A, B


SYSTEMS = ("auto", "primal", "dual")


def _solve(A, B):
    try:
        with threads_for(2.0 * A.shape[0] ** 3 / 3):
            return np.linalg.solve(A, B)
    except np.linalg.LinAlgError:
        # the systems here are non-singular in exact arithmetic (lam * D > 0)
        warnings.warn("W system numerically singular; using a least-squares solve",
                      RuntimeWarning, stacklevel=4)
        return np.linalg.lstsq(A, B, rcond=None)[0]


def _primal(state: State, D: np.ndarray) -> np.ndarray:
    """eq. W.3 by a Cholesky factorization of the d x d system (positive definite, as
    ``lam D > 0``): half the work of a general solve."""
    A, B = selection_system(state, D)
    try:
        with threads_for(A.shape[0] ** 3 / 3):
            factor = scipy.linalg.cho_factor(A, overwrite_a=True, check_finite=False)
            return scipy.linalg.cho_solve(factor, B, check_finite=False)
    except np.linalg.LinAlgError:
        return _solve(selection_system(state, D)[0], B)


def _dual(state: State, D: np.ndarray) -> np.ndarray:
    """eq. W.3 through n x n systems (Woodbury), for d much larger than n.

    ``A = C + alpha X~'X~`` with ``C = lam D + blockdiag_m(X~_m' L_m X~_m)``. Each block
    ``C_m^-1 = Lm^-1 - Lm^-1 X~_m' L_m (I + P_m L_m)^-1 X~_m Lm^-1`` (``Lm = lam D_m``,
    ``P_m = X~_m Lm^-1 X~_m'``; ``I + P_m L_m`` has eigenvalues >= 1), then
    ``A^-1 = C^-1 - C^-1 X~' (I/alpha + X~ C^-1 X~')^-1 X~ C^-1``.
    """
    p = state.problem
    n, d = p.X.shape
    Xt = state.mu[:, None] * p.X
    inverse_diagonal = 1.0 / (p.lam * D)
    B = p.alpha * (Xt.T @ state.F)
    groups = [np.arange(d)] if not state.n_granularities else [
        np.flatnonzero(state.groups == m) for m in range(state.n_granularities)]
    graphs = state.S if state.n_granularities else [None]
    CinvB = np.empty_like(B)
    CinvXt = np.empty((d, n))  # C^-1 X~'
    for cols, S in zip(groups, graphs):
        Xm = Xt[:, cols]
        scaled = inverse_diagonal[cols, None] * Xm.T  # Lm^-1 X~_m'  (d_m, n)
        block = np.hstack([inverse_diagonal[cols, None] * B[cols], scaled])
        if S is not None:
            L = laplacian_matrix(S)
            P = Xm @ scaled
            inner = np.eye(n) + (L @ P).T  # I + P L, as P and L are symmetric
            # Lm^-1 X~_m' L (I + P L)^-1 X~_m [Lm^-1 B_m, Lm^-1 X~_m']
            correction = scaled @ (L @ _solve(inner, Xm @ block))
            block = block - correction
        CinvB[cols] = block[:, : B.shape[1]]
        CinvXt[cols] = block[:, B.shape[1]:]
    inner = np.eye(n) / p.alpha + Xt @ CinvXt
    return CinvB - CinvXt @ _solve(inner, Xt @ CinvB)


#: the dual form's operations run at about a third of the primal's rate (general LU
#: solves, one per granularity, and thin products): measured on JAFFE, UMIST and COIL20,
#: where its count alone would pick it for JAFFE at twice the primal's time
DUAL_SLOWDOWN = 3.0


def selection_system_cost(n: int, d: int, group_sizes) -> dict:
    """Multiply-add counts of the two forms (the dual's weighted by its slower rate), to
    pick the cheaper."""
    group_sizes = list(group_sizes) or [d]
    primal = n * d * d + n * sum(s * s for s in group_sizes) + d**3 / 6
    dual = 3 * n * n * d + len(group_sizes) * (n**3 * 2 / 3 + n * n * d / len(group_sizes)) + n**3
    return {"primal": primal, "dual": DUAL_SLOWDOWN * dual}


def selection_cost(size) -> Cost:
    """One solve of eq. W.3 in its cheaper form, with M groups of equal size."""
    n, d = size.n_samples, size.n_features
    M = max(size.n_granularities, 1)
    cost = selection_system_cost(n, d, [max(1, d // M)] * M)
    if cost["primal"] <= cost["dual"]:
        memory = 3 * d * d * 8 + 2 * n * d * 8
    else:  # the n x n (Woodbury) form: C^-1 X~' and X~ blocks, n x n systems
        memory = (4 * n * d + 4 * n * n) * 8
    return Cost(flops=2.0 * min(cost.values()), memory={"selection_matrix": memory},
                advice={"selection_matrix": "reduce the number of features (d x d systems "
                                            "dominate)"})


def solve_selection_matrix(state: State, D: np.ndarray, system: str = "auto") -> np.ndarray:
    """Minimizer W of the quadratic surrogate (eq. W.2) for IRLS weights ``D``.

    ``system``: ``primal`` solves the d x d system, ``dual`` the n x n (Woodbury) form,
    ``auto`` the cheaper by :func:`selection_system_cost`. NumPy's LAPACK, not SciPy's:
    the two wheels bundle separate OpenBLAS thread pools, and alternating between them
    is slower (docs/PERFORMANCE.md, "W system").
    """
    if check_choice("system", system, SYSTEMS) == "auto":
        n, d = state.problem.X.shape
        sizes = ([int((state.groups == m).sum()) for m in range(state.n_granularities)]
                 if state.n_granularities else [d])
        cost = selection_system_cost(n, d, sizes)
        system = "dual" if cost["dual"] < cost["primal"] else "primal"
    if system == "dual":
        n, d = state.problem.X.shape
        with threads_for(2.0 * n * n * d):  # made of n x d x n products throughout
            return _dual(state, D)
    return _primal(state, D)


class SelectionMatrixBlock(Block):
    """Update W by eq. W.3 with D taken at the current W, then D at the new W.

    The IRLS weights are recomputed from ``state.W`` rather than read from ``state.D``,
    so the step majorizes the l2,1 term at the point it starts from and never raises
    the objective (paper Theorem 1).

    Parameters
    ----------
    system : {"auto", "primal", "dual"}
        The d x d system, its n x n Woodbury form, or the cheaper of the two.
    """

    name = "selection_matrix"
    kind = "descent"
    reads = ("X", "mu", "F", "W")
    optional_reads = ("S", "groups")
    writes = ("W", "D")

    def __init__(self, system: str = "auto"):
        self.system = check_choice("system", system, SYSTEMS)

    def cost(self, size) -> Cost:
        return selection_cost(size)

    def step(self, state: State) -> State:
        eps = state.problem.eps
        W = solve_selection_matrix(state, irls_weights(state.W, eps), self.system)
        return state.replace(W=W, D=irls_weights(W, eps))
