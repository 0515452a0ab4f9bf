"""Per-feature scaling (min-max by default, as the paper's protocol) and constant features."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core.validation import check_choice
from .sparse import as_sparse_data, column_extremes, column_nonzeros

SCALINGS = ("minmax", "standard", "none")
#: sparse data whose min-max scaling shifts columns (a minimum not 0) are densified where
#: more than this share of their cells would then be stored (CSC's 12 bytes an entry then
#: pass half of the 8 bytes of a dense cell)
SPARSE_SCALED_DENSITY = 1 / 3


def constant_features(X) -> np.ndarray:
    """Bool mask of features whose values are all equal (compared, not subtracted: a
    range near 1e308 would overflow); ``X`` dense or sparse."""
    if sp.issparse(X):
        low, high = column_extremes(X)
        return low == high
    X = np.asarray(X)
    return np.all(X == X[:1], axis=0)


def scale_features(X, method: str = "minmax"):
    """Scale every feature: ``minmax`` to [0, 1], ``standard`` to zero mean and unit
    variance, ``none`` unchanged. Constant features become 0 (they carry no information
    and are never treatments).

    Each feature is first divided by the power of two just above its largest magnitude
    (exact in floating point), so a range or a sum of squares of finite values near
    +-1e308 cannot overflow; the result is the same as without that step otherwise.

    Sparse ``X`` stays sparse (CSC) with ``none`` and ``minmax``: a column whose
    minimum is 0 (counts, tf-idf) is divided by its maximum; one whose minimum is not 0
    (a word in every document) is shifted as dense data are, which stores every entry
    of that column (its zeros become ``-min / range``). X is densified where such
    columns leave more than :data:`SPARSE_SCALED_DENSITY` of its cells stored, and
    with ``standard``, whose centring makes every entry non-zero."""
    check_choice("preprocessing", method, SCALINGS)
    if sp.issparse(X):
        return _scale_sparse(X, method)
    X = np.asarray(X, dtype=float)
    if method == "none":
        return X.copy()
    constant = constant_features(X)
    if X.size:
        _, exponent = np.frexp(np.abs(X).max(axis=0))
        X = np.ldexp(X, -exponent)
    if method == "minmax":
        low, spread = X.min(axis=0), np.ptp(X, axis=0)
    else:
        low, spread = X.mean(axis=0), X.std(axis=0)
    scaled = (X - low) / np.where(constant, 1.0, spread)
    scaled[:, constant] = 0.0
    return scaled


def _scale_sparse(X, method: str):
    X = as_sparse_data(X)
    if method == "none":
        return X.copy()
    low, high = column_extremes(X)
    divided = (low == 0) & (high != 0)  # minimum 0: x / max, zeros stay zeros
    shifted = np.flatnonzero((low != 0) & (low != high))
    n, d = X.shape
    stored = column_nonzeros(X)[divided].sum() + n * shifted.size
    if method == "standard" or (shifted.size and stored > SPARSE_SCALED_DENSITY * n * d):
        return scale_features(X.toarray(), method)
    factor = np.where(divided, 1.0 / np.where(divided, high, 1.0), 0.0)
    scaled = as_sparse_data(X @ sp.diags_array(factor))
    if shifted.size:
        # the shifted columns scaled as dense data are (the same values), put in place
        block = sp.csc_array(scale_features(X[:, shifted].toarray(), method))
        place = sp.csr_array((np.ones(shifted.size), (np.arange(shifted.size), shifted)),
                             shape=(shifted.size, d))
        scaled = as_sparse_data(scaled + block @ place)
    scaled.eliminate_zeros()
    return scaled
