"""Per-feature scaling (min-max by default, as the paper's protocol) and constant features."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core.validation import check_choice
from .sparse import as_sparse_data, column_extremes

SCALINGS = ("minmax", "standard", "none")


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

    Sparse ``X`` stays sparse (CSC) with ``none``, and with ``minmax`` when every
    column's minimum is 0 (non-negative data such as counts or tf-idf: the scaling is
    then a division by the column's maximum); otherwise it is densified, as shifting
    the zeros makes every entry non-zero."""
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
    constant = low == high
    if method == "standard" or np.any(low[~constant] != 0):
        return scale_features(X.toarray(), method)
    # minimum 0: x / max; the maximum is positive for every non-constant column
    factor = np.where(constant, 0.0, 1.0 / np.where(constant, 1.0, high))
    scaled = as_sparse_data(X @ sp.diags_array(factor))
    scaled.eliminate_zeros()
    return scaled
