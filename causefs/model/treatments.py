"""Treatments of the balance term: every feature's coding, and a bounded set of them.

Each feature r splits the samples into treated (``E_r = 1``) and control samples; its
coding ``a_r`` enters the balance term ``MMD_r(mu) = sum_ij mu_i mu_j a_ri a_rj
kappa(x_i[K_r], x_j[K_r])`` over the values of its confounders K_r (paper eqs.
3.2 and u.2; docs/MODEL.md, "Confounder balance").

The balance term has one treatment per feature and confounder sets of size O(d), so one
product with its Hessian costs about 4 n |V| |T| flops, O(n d^2). ``max_treatments``
keeps the treatments whose balance matters most for the selection, the top ones by
``||W_f||`` (by variance before W exists), and leaves the others without confounders.
``"auto"`` keeps every treatment while ``n * d * |T|`` stays within
:data:`TREATMENT_BUDGET` and otherwise as many as the budget allows, at least
:data:`MIN_TREATMENTS`; how many that keeps on the benchmarks, and what it costs in the
balance term: docs/PERFORMANCE.md, "Bounded treatment sets". ``None`` keeps all of them
(the paper).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core.validation import check_choice
from ..numerics.sparse import COLUMN_CHUNK, column_variance, dense

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


#: ``n * d * |T|`` up to which ``max_treatments="auto"`` keeps every treatment (a product
#: with the balance Hessian then costs at most 4e8 flops, a few milliseconds)
TREATMENT_BUDGET = 1e8
#: fewest treatments ``"auto"`` keeps
MIN_TREATMENTS = 32


def treatment_cap(max_treatments, n_samples: int, n_features: int, n_treatments: int) -> int:
    """How many treatments to keep (``n_treatments`` when there is no cap)."""
    if max_treatments is None:
        return n_treatments
    if max_treatments == "auto":
        if float(n_samples) * n_features * n_treatments <= TREATMENT_BUDGET:
            return n_treatments
        affordable = int(TREATMENT_BUDGET // (float(n_samples) * n_features))
        return min(n_treatments, max(MIN_TREATMENTS, affordable))
    return min(n_treatments, max_treatments)


def bounded_treatments(X: np.ndarray, coding: np.ndarray, W: np.ndarray | None,
                       max_treatments) -> np.ndarray:
    """Bool mask (d,) of the treatments kept: the top ones by ``||W_f||`` (or variance).

    Ties are broken by the smaller feature index.
    """
    is_treatment = np.any(coding != 0, axis=0)
    candidates = np.flatnonzero(is_treatment)
    cap = treatment_cap(max_treatments, X.shape[0], X.shape[1], candidates.size)
    if cap >= candidates.size:
        return is_treatment
    score = np.einsum("ij,ij->i", W, W) if W is not None else column_variance(X)
    kept = candidates[np.argsort(-score[candidates], kind="stable")[:cap]]
    mask = np.zeros(X.shape[1], dtype=bool)
    mask[kept] = True
    return mask
