"""Preconditioned conjugate gradients on several right-hand sides at once."""

from __future__ import annotations

from typing import Callable

import numpy as np


def block_conjugate_gradients(apply: Callable[[np.ndarray], np.ndarray], B: np.ndarray,
                              X0: np.ndarray, diagonal: np.ndarray, rtol: float,
                              max_iter: int) -> tuple[np.ndarray | None, int]:
    """Solve ``A X = B`` for a symmetric positive definite ``A`` by Jacobi-preconditioned
    conjugate gradients (Hestenes and Stiefel 1952), one independent run per column of
    ``B`` (d, h), all of them through one product ``apply(P) = A P`` (d, h) an iteration.

    Each column starts from ``X0``'s and stops once its residual ``||b - A x||`` is at
    most ``rtol ||b||``; a column of ``B`` that is zero is solved by zero. Every iterate
    lowers the quadratic ``x'Ax - 2 b'x`` of its column (the A-norm of the error shrinks
    monotonically), so a warm start is never made worse.

    Returns ``(X, iterations)``, or ``(None, iterations)`` when a direction of
    non-positive curvature shows that ``A`` is not positive definite or ``max_iter``
    iterations did not reach ``rtol``: the caller then solves directly.
    """
    if np.any(diagonal <= 0):
        return None, 0  # a positive definite A has a positive diagonal
    X = np.array(X0, dtype=float)
    bound = rtol * np.linalg.norm(B, axis=0)
    X[:, bound == 0] = 0.0
    R = B - apply(X)
    Z = R / diagonal[:, None]
    P = Z.copy()
    rz = np.einsum("ij,ij->j", R, Z)
    for iteration in range(max_iter + 1):
        active = np.linalg.norm(R, axis=0) > bound
        if not active.any():
            return X, iteration
        if iteration == max_iter:
            break
        AP = apply(P)
        curvature = np.einsum("ij,ij->j", P, AP)
        if np.any(curvature[active] <= 0):
            break
        # converged columns take no step (their direction may be zero)
        alpha = np.zeros_like(rz)
        alpha[active] = rz[active] / curvature[active]
        X += alpha * P
        R -= alpha * AP
        Z = R / diagonal[:, None]
        rz_next = np.einsum("ij,ij->j", R, Z)
        beta = np.zeros_like(rz)
        beta[active] = rz_next[active] / rz[active]
        P = Z + beta * P
        rz = rz_next
    return None, iteration
