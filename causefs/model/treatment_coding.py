"""The treatment coding ``a_r`` of every feature (paper eqs. 3.2 and u.2).

Each feature r splits the samples into treated (``E_r = 1``) and control samples; its
coding ``a_r`` enters the balance term ``MMD_r(mu) = sum_ij mu_i mu_j a_ri a_rj
kappa(z_i^r, z_j^r)`` (docs/MODEL.md, "Confounder balance").
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core.validation import check_choice
from ..numerics.sparse import COLUMN_CHUNK, dense

TREATMENT_RULES = ("median", "mean")
MMD_NORMALIZATIONS = ("group", "paper")


def treatment_indicator(X: np.ndarray, rule: str = "median") -> tuple[np.ndarray, np.ndarray]:
    """Binarize each feature into treated (``E = 1``) and control samples.

    ``x > median`` (or ``x > mean``); a split that leaves a group empty falls back to
    the mean; a feature that still cannot be split is no treatment.

    Returns
    -------
    E : bool ndarray (n, d)
    is_treatment : bool ndarray (d,)
    """
    check_choice("treatment", rule, TREATMENT_RULES)
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
    check_choice("mmd_normalization", normalization, MMD_NORMALIZATIONS)
    if sp.issparse(X):  # the coding is dense: sparse data are densified a chunk at a time
        coding = np.empty(X.shape)
        for start in range(0, X.shape[1], COLUMN_CHUNK):
            cols = slice(start, start + COLUMN_CHUNK)
            coding[:, cols] = treatment_coding(dense(X[:, cols]), rule, normalization)
        return coding
    E, is_treatment = treatment_indicator(X, rule)
    n = X.shape[0]
    if normalization == "paper":
        coding = (2.0 * E - 1.0) / n
    else:
        treated = E.sum(axis=0)
        coding = E / np.maximum(treated, 1) - (~E) / np.maximum(n - treated, 1)
    coding[:, ~is_treatment] = 0.0
    return coding
