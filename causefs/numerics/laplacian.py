"""Laplacian algebra on sparse graphs, ``L_A = D_A - (A + A')/2`` with ``D_A`` the row sums
of ``(A + A')/2``, so that ``Tr(Y' L_A Y) = 1/2 sum_ij A_ij ||Y_i - Y_j||^2``."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import CHUNK_ELEMENTS


def symmetric_degree(A) -> np.ndarray:
    """Degrees of ``(A + A') / 2``: the diagonal of ``L_A``."""
    return 0.5 * (np.asarray(A.sum(axis=0)).ravel() + np.asarray(A.sum(axis=1)).ravel())


def laplacian_matmul(A, Y: np.ndarray) -> np.ndarray:
    """``L_A Y`` with ``L_A = D_A - (A + A')/2`` without forming ``L_A``."""
    return symmetric_degree(A)[:, None] * Y - 0.5 * (A @ Y + A.T @ Y)


def laplacian_quadratic(A, Y: np.ndarray) -> float:
    """``Tr(Y' L_A Y) = 1/2 sum_ij A_ij ||Y_i - Y_j||^2`` over the non-zeros of ``A``."""
    # the sum is symmetric in i and j, so a compressed graph's (column or row, index)
    # pairs serve as they are: no conversion, whose checks cost more than the sum on
    # small graphs; np.take gathers rows faster than fancy indexing
    if sp.issparse(A) and A.format in ("csc", "csr"):
        ends, index, data = A.indptr, A.indices, A.data
        other = np.repeat(np.arange(ends.size - 1), np.diff(ends))
    else:
        coo = sp.coo_array(A)
        index, other, data = coo.row, coo.col, coo.data
    total = 0.0
    step = max(1, CHUNK_ELEMENTS // max(1, Y.shape[1]))
    for start in range(0, data.size, step):
        sl = slice(start, start + step)
        diff = np.take(Y, index[sl], axis=0)
        diff -= np.take(Y, other[sl], axis=0)
        total += float(data[sl] @ np.einsum("ij,ij->i", diff, diff))
    return 0.5 * total


def column_sq_norms(A) -> np.ndarray:
    """``||A_.j||^2`` of every column of a sparse graph."""
    A = sp.csc_array(A)
    cols = np.repeat(np.arange(A.shape[1]), np.diff(A.indptr))
    return np.bincount(cols, weights=A.data**2, minlength=A.shape[1])


def laplacian_matrix(A) -> sp.csr_array:
    """``L_A = D_A - (A + A')/2`` as a sparse matrix."""
    A = sp.csr_array(A)
    sym = 0.5 * (A + A.T)
    return sp.csr_array(sp.diags_array(symmetric_degree(A)) - sym)
