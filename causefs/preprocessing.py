"""Feature scaling and treatment coding (SPEC, "Conventions" and "Confounder balance")."""

from __future__ import annotations

import numpy as np

SCALINGS = ("minmax", "standard", "none")
TREATMENT_RULES = ("median", "mean")
MMD_NORMALIZATIONS = ("group", "paper")


def _check(value, allowed, what):
    if value not in allowed:
        raise ValueError(f"unknown {what} {value!r}; allowed: {', '.join(allowed)}")


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
    _check(method, SCALINGS, "preprocessing")
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


def treatment_indicator(X: np.ndarray, rule: str = "median") -> tuple[np.ndarray, np.ndarray]:
    """Binarize each feature into treated (``E = 1``) and control samples.

    ``x > median`` (or ``x > mean``); a split that leaves a group empty falls back to
    the mean; a feature that still cannot be split is no treatment.

    Returns
    -------
    E : bool ndarray (n, d)
    is_treatment : bool ndarray (d,)
    """
    _check(rule, TREATMENT_RULES, "treatment rule")
    n = X.shape[0]
    threshold = np.median(X, axis=0) if rule == "median" else X.mean(axis=0)
    E = X > threshold
    counts = E.sum(axis=0)
    unsplit = (counts == 0) | (counts == n)
    if unsplit.any():
        E[:, unsplit] = X[:, unsplit] > X[:, unsplit].mean(axis=0)
        counts = E.sum(axis=0)
    is_treatment = (counts > 0) & (counts < n)
    E[:, ~is_treatment] = False
    return E, is_treatment


def treatment_coding(X: np.ndarray, rule: str = "median", normalization: str = "group"):
    """Coding ``a_r`` of every treatment, (n, d); zero columns for non-treatments.

    ``group``: ``a_ri = E_ri/|T_r| - (1 - E_ri)/|C_r|`` (eq. 3.2's group means);
    ``paper``: ``a_ri = (2 E_ri - 1)/n`` (the 1/n^2 form of eq. u.2).
    """
    _check(normalization, MMD_NORMALIZATIONS, "mmd_normalization")
    E, is_treatment = treatment_indicator(X, rule)
    n = X.shape[0]
    if normalization == "paper":
        coding = (2.0 * E - 1.0) / n
    else:
        treated = E.sum(axis=0)
        coding = E / np.maximum(treated, 1) - (~E) / np.maximum(n - treated, 1)
    coding[:, ~is_treatment] = 0.0
    return coding
