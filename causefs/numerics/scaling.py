"""Per-feature scaling (min-max by default, as the paper's protocol) and constant features."""

from __future__ import annotations

import numpy as np

from ..core.validation import check_choice

SCALINGS = ("minmax", "standard", "none")


def constant_features(X: np.ndarray) -> np.ndarray:
    """Bool mask of features whose values are all equal (compared, not subtracted: a
    range near 1e308 would overflow)."""
    X = np.asarray(X)
    return np.all(X == X[:1], axis=0)


def scale_features(X: np.ndarray, method: str = "minmax") -> np.ndarray:
    """Scale every feature: ``minmax`` to [0, 1], ``standard`` to zero mean and unit
    variance, ``none`` unchanged. Constant features become 0 (they carry no information
    and are never treatments).

    Each feature is first divided by the power of two just above its largest magnitude
    (exact in floating point), so a range or a sum of squares of finite values near
    +-1e308 cannot overflow; the result is the same as without that step otherwise."""
    check_choice("preprocessing", method, SCALINGS)
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
