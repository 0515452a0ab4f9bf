"""A bounded set of treatments for the balance term (``max_treatments``, large d).

The balance term has one treatment per feature and confounder sets of size O(d), so one
product with its Hessian costs about 4 n |V| |T| flops, O(n d^2). ``max_treatments``
keeps the treatments whose balance matters most for the selection, the top ones by
``||W_f||`` (by variance before W exists), and leaves the others without confounders.
``"auto"`` keeps every treatment while ``n * d * |T| <= TREATMENT_BUDGET`` and otherwise
as many as the budget allows, at least :data:`MIN_TREATMENTS`; how many that keeps on the
benchmarks, and what it costs in the balance term: docs/PERFORMANCE.md, "Bounded
treatment sets". ``None`` keeps all of them (the paper).
"""

from __future__ import annotations

import numpy as np

from ..numerics.sparse import column_variance

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
