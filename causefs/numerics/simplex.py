"""Exact Euclidean projection onto the (scaled) probability simplex."""

from __future__ import annotations

import numpy as np


def project_simplex(v: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection onto ``{x >= 0, sum(x) = total}`` along the last axis.

    Exact sort-based algorithm (Held et al. 1974; Duchi et al. 2008), O(n log n) per
    row: the projection is ``max(v - theta, 0)`` with the threshold ``theta`` that makes
    each row sum to ``total``. Works on a vector or row-wise on a 2-D array.
    """
    v = np.asarray(v, dtype=float)
    u = -np.sort(-v, axis=-1)
    cumulative = np.cumsum(u, axis=-1) - total
    ranks = np.arange(1, v.shape[-1] + 1)
    # the last index where u - cumulative / rank > 0 (always true at index 0)
    rho = v.shape[-1] - 1 - np.argmax((u - cumulative / ranks > 0)[..., ::-1], axis=-1)
    theta = np.take_along_axis(cumulative, np.expand_dims(rho, -1), axis=-1) / np.expand_dims(
        rho + 1, -1)
    return np.maximum(v - theta, 0.0)
