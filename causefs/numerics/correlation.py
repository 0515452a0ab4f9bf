"""Correlations between features: standardized columns and |Pearson| similarities."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .sparse import gram_columns
from .threads import threads_for


def standardized(X: np.ndarray) -> np.ndarray:
    """Columns centred and scaled to unit variance; constant columns become 0."""
    centred = X - X.mean(axis=0)
    std = centred.std(axis=0)
    return centred / np.where(std > 0, std, 1.0)


def pearson_similarity(X, columns=None) -> np.ndarray:
    """``|corr(x_f, x_g)|`` of data columns, (d, d) or (d, len(columns)) for some columns g;
    constant columns correlate 0. Sparse ``X`` is not centred (that would densify it):
    the covariance is ``X'X - n m m'``."""
    if sp.issparse(X):
        return _sparse_pearson_similarity(X, columns)
    centred = X - X.mean(axis=0)
    norms = np.linalg.norm(centred, axis=0)
    unit = centred / np.where(norms > 0, norms, 1.0)
    with threads_for(2.0 * X.shape[0] * X.shape[1] * (X.shape[1] if columns is None
                                                      else len(columns))):
        product = unit.T @ (unit if columns is None else unit[:, columns])
    return np.abs(product, out=product)  # in place: a second (d, d) array doubled the peak


def _sparse_pearson_similarity(X, columns=None) -> np.ndarray:
    n = X.shape[0]
    columns = np.arange(X.shape[1]) if columns is None else np.asarray(columns)
    mean = np.asarray(X.mean(axis=0)).ravel()
    covariance = gram_columns(X, columns) - n * np.outer(mean, mean[columns])
    squares = np.asarray(X.multiply(X).sum(axis=0)).ravel() - n * mean**2
    norms = np.sqrt(np.maximum(squares, 0.0))
    norms = np.where(norms > 0, norms, np.inf)  # constant columns correlate 0
    return np.abs(covariance / np.outer(norms, norms[columns]))


def decorrelated_order(X, order, max_correlation: float, n_features: int) -> np.ndarray:
    """``order`` (feature indices, best first) with its first ``n_features`` spread over
    correlated blocks: walking ``order``, a feature is taken when its ``|corr|`` with
    every feature taken so far is at most ``max_correlation``; the ones passed over
    follow, in their order, after the ``n_features`` taken. When fewer than
    ``n_features`` pass (the data are one block), the passed-over ones fill the rest in
    ``order``: the result is always a permutation of ``order``.
    """
    order = np.asarray(order)
    blocked = np.zeros(X.shape[1], dtype=bool)
    taken = []
    for feature in order:
        if len(taken) == n_features:
            break
        if blocked[feature]:
            continue
        taken.append(feature)
        blocked |= pearson_similarity(X, [feature])[:, 0] > max_correlation
    rest = order[~np.isin(order, taken)]
    return np.concatenate([np.asarray(taken, dtype=order.dtype), rest])
