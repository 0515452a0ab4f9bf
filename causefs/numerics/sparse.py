"""Data held as ``scipy.sparse`` (text, counts): the few operations on X that must know it.

A fit keeps sparse data sparse where its steps only multiply by X (X W, X' F, X~'s
products in the W system, the balance moments); the steps that need dense columns
densify only those columns (:func:`dense`). docs/guide/sparse.md lists them with their memory.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: columns densified at a time where a step needs every column dense only transiently
COLUMN_CHUNK = 1024


def dense(X) -> np.ndarray:
    """``X`` as an ndarray (a sparse matrix densified; an ndarray as it is)."""
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def row_major(X):
    """Dense ``X`` with its rows contiguous (a copy where they are not), sparse ``X`` as it
    is. A fit's data are the active columns of the scaled data, a Fortran-ordered copy:
    the neighbour searches gather each point's row several times (its candidates'
    distances), and a row of a Fortran-ordered array is one cache line a column (the
    first fused graph of 1,000,000 x 64 took 142 s inside a fit against about 25 s for
    the same search of rows in order; docs/PERFORMANCE.md, "Anchor graphs")."""
    return X if sp.issparse(X) else np.ascontiguousarray(X)


def as_sparse_data(X) -> sp.csc_array:
    """Sparse data as a float64 CSC array: columns (features) are what blocks slice."""
    return sp.csc_array(X, dtype=np.float64)


def scale_rows(weights: np.ndarray, X):
    """``diag(weights) X`` (``X~ = diag(mu) X``), sparse for sparse ``X``."""
    if sp.issparse(X):
        return sp.csc_array(sp.diags_array(weights) @ X)
    return weights[:, None] * X


def column_extremes(X) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest value of every column (implicit zeros count)."""
    if sp.issparse(X):
        return dense(X.min(axis=0)).ravel(), dense(X.max(axis=0)).ravel()
    X = np.asarray(X)
    return X.min(axis=0), X.max(axis=0)


def column_variance(X) -> np.ndarray:
    """Variance of every column (``ddof=0``)."""
    if not sp.issparse(X):
        return np.asarray(X).var(axis=0)
    mean = np.asarray(X.mean(axis=0)).ravel()
    return np.maximum(np.asarray(X.multiply(X).mean(axis=0)).ravel() - mean**2, 0.0)


def column_nonzeros(X) -> np.ndarray:
    """The non-zeros of every column (d,), dense or sparse (stored entries of a sparse X)."""
    if sp.issparse(X):
        return np.diff(sp.csc_array(X).indptr)
    return np.count_nonzero(X, axis=0)


def column_squares(X) -> np.ndarray:
    """``||X_.j||^2`` of every column (d,), dense or sparse."""
    if sp.issparse(X):
        return dense(X.multiply(X).sum(axis=0)).ravel()
    return np.einsum("ij,ij->j", X, X)


def gram_columns(X, columns=None) -> np.ndarray:
    """``X' X[:, columns]`` as a dense (d, c) array; for sparse ``X`` a sparse-dense
    product per chunk of :data:`COLUMN_CHUNK` columns (a sparse-sparse product whose
    result is nearly dense would hold it as a sparse matrix first)."""
    columns = np.arange(X.shape[1]) if columns is None else np.asarray(columns)
    if not sp.issparse(X):
        return X.T @ X[:, columns]
    out = np.empty((X.shape[1], columns.size))
    for start in range(0, columns.size, COLUMN_CHUNK):
        chunk = columns[start:start + COLUMN_CHUNK]
        out[:, start:start + chunk.size] = X.T @ dense(X[:, chunk])
    return out
