"""Preconditioners of a symmetric positive definite ``A`` (n, n): callables ``R -> P R`` on
(n, q) blocks, with ``P`` near ``A^-1``, for the embedding's subspace descent
(:func:`causefs.blocks.descent.embedding.subspace_descent`)."""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp


def jacobi_preconditioner(diagonal: np.ndarray):
    """``R -> D^-1 R``, D the diagonal of A (n,); a non-positive entry (an isolated
    sample without identity part) leaves its row unscaled."""
    scale = 1.0 / np.where(diagonal > 0, diagonal, 1.0)
    return lambda R: scale[:, None] * R


def anchor_preconditioner_floats(n: int, k: int, m: int) -> int:
    """Floats :func:`anchor_preconditioner` holds for a graph of k neighbours a sample
    and m anchors: the sparse product forming the Schur complement (``min(m^2, n k^2)``
    entries, about two floats each with their indices) and the dense complement and
    its factor (``2 m^2``), an upper bound measured with tracemalloc
    (tests/test_descent_block_costs.py, tests/test_initial_blocks.py)."""
    return 2 * m * m + 2 * min(m * m, n * k * k)


def anchor_preconditioner(A, anchors: np.ndarray):
    """``R -> A^-1 R`` exactly, for an A whose samples outside ``anchors`` are coupled
    to anchors only; None for any other A.

    In an anchored fit (:mod:`causefs.numerics.anchors`) every graph links a sample to
    anchors only, so the rows of ``A = c I + L_G`` of the other samples (s) have no
    entry between them but the diagonal: ``A_ss = D_s``. Eliminating them leaves the
    Schur complement on the m anchors, ``S = A_aa - A_as D_s^-1 A_sa`` (m, m: dense,
    positive definite with A), factorized once by Cholesky; then
    ``x_a = S^-1 (r_a - A_as D_s^-1 r_s)`` and ``x_s = D_s^-1 (r_s - A_sa x_a)``: the
    cost of a product with A and two triangular solves of order m, with
    ``O(nnz(A) k + m^3)`` work and m^2 floats to build. A Jacobi preconditioner
    leaves the coupling to the anchors (of degrees about n k / m) unresolved: the
    subspace descent took 17 steps to its tolerance at 100,000 samples where it takes
    6 with this one (docs/PERFORMANCE.md, "The embedding with anchors").

    None as well when ``A_ss`` has a non-positive diagonal entry or S is not
    numerically positive definite (its Cholesky fails, or a pivot is at most 1e-12 of
    the largest: A singular, as ``L_G`` alone is): the caller falls back to Jacobi.

    Parameters
    ----------
    A : sparse matrix of shape (n, n)
        Symmetric.
    anchors : ndarray of shape (m,)
        Sorted distinct sample indices.
    """
    A = sp.csr_array(A)
    n = A.shape[0]
    is_anchor = np.zeros(n, dtype=bool)
    is_anchor[anchors] = True
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    coupled = ~is_anchor[rows] & ~is_anchor[A.indices] & (rows != A.indices) & (A.data != 0)
    if coupled.any():
        return None
    others = np.flatnonzero(~is_anchor)
    diagonal = A.diagonal()[others]
    if not np.all(diagonal > 0):
        return None
    inverse = 1.0 / diagonal
    A_sa = A[others][:, anchors]
    schur = A[anchors][:, anchors].toarray()
    schur -= (A_sa.T @ sp.diags_array(inverse) @ A_sa).toarray()
    try:
        factor = scipy.linalg.cho_factor(schur, lower=True, overwrite_a=True,
                                         check_finite=False)
    except scipy.linalg.LinAlgError:
        return None
    pivots = np.diag(factor[0]) ** 2
    if not pivots.min() > 1e-12 * pivots.max():  # singular to rounding (or not finite)
        return None
    A_as = sp.csr_array(A_sa.T)

    def precondition(R: np.ndarray) -> np.ndarray:
        scaled = inverse[:, None] * R[others]
        X = np.empty_like(R)
        X[anchors] = scipy.linalg.cho_solve(factor, R[anchors] - A_as @ scaled,
                                            check_finite=False)
        X[others] = scaled - inverse[:, None] * (A_sa @ X[anchors])
        return X

    return precondition
