"""Neighbours a fit is given: a precomputed sparse kNN graph of the samples, or a search
object with scikit-learn's ``NearestNeighbors`` interface (``fit``, ``kneighbors``), so
that the initial fused graph's search on the raw data can be made by faiss, pynndescent
or a GPU library.

Given neighbours are *candidates*: the adaptive-neighbour closed form re-scores them with
its own distances (:func:`causefs.numerics.adaptive_graphs.adaptive_graph`, ``seeds``),
so a graph of any metric or weighting may be given; its support is what counts.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from ..core.validation import InvalidParameterError
from .neighbors import without_self
from .sparse import dense


def check_neighbors(neighbors, n_samples: int, n_neighbors: int):
    """The ``neighbors`` given to a fit, checked: an int table or a search object.

    Parameters
    ----------
    neighbors : sparse matrix of shape (n_samples, n_samples), or object, or None
        A kNN graph whose row i stores the neighbours of sample i (the layout of
        :func:`sklearn.neighbors.kneighbors_graph`, either mode; stored entries count,
        their values do not, explicit zeros of duplicate points included; the diagonal
        is ignored), or an object with ``fit(X)`` and ``kneighbors(X, n_neighbors,
        return_distance=False)``. An estimator is cloned (the caller's stays unfitted).
    n_samples : int
    n_neighbors : int
        The fit's k: every sample needs k + 1 other samples listed.

    Returns
    -------
    ndarray of int, shape (n_samples, c), or object, or None
        The graph's rows as a table of neighbour indices (-1 pads), or the search object.

    Raises
    ------
    InvalidParameterError
        A graph of the wrong shape or with a row of fewer than k + 1 other samples, or
        anything else that is neither a sparse graph nor a search object.
    """
    if neighbors is None:
        return None
    if sp.issparse(neighbors):
        return _graph_table(sp.csr_array(neighbors, copy=True), n_samples, n_neighbors)
    if callable(getattr(neighbors, "fit", None)) and callable(getattr(neighbors, "kneighbors",
                                                                       None)):
        return clone(neighbors) if hasattr(neighbors, "get_params") else neighbors
    raise InvalidParameterError(
        "neighbors must be a sparse (n_samples, n_samples) kNN graph (row i: the "
        "neighbours of sample i, as sklearn.neighbors.kneighbors_graph makes it) or an "
        "object with scikit-learn's NearestNeighbors interface (fit, kneighbors); got "
        f"{type(neighbors).__name__}")


def _graph_table(graph: sp.csr_array, n_samples: int, n_neighbors: int) -> np.ndarray:
    """Row i of ``graph``'s support (less i itself) as row i of a -1 padded table."""
    if graph.shape != (n_samples, n_samples):
        raise InvalidParameterError(f"neighbors: a kNN graph of the {n_samples} samples must "
                                    f"have shape ({n_samples}, {n_samples}), got {graph.shape}")
    graph.sum_duplicates()
    rows = np.repeat(np.arange(n_samples), np.diff(graph.indptr))
    other = graph.indices != rows
    rows, columns = rows[other], graph.indices[other].astype(np.int64)
    counts = np.bincount(rows, minlength=n_samples)
    short = np.flatnonzero(counts < n_neighbors + 1)
    if short.size:
        raise InvalidParameterError(
            f"neighbors: {short.size} rows of the kNN graph (the first: sample {short[0]}, "
            f"{counts[short[0]]} neighbours) list fewer than n_neighbors + 1 = "
            f"{n_neighbors + 1} other samples (the closed form uses the (k+1)-th "
            f"neighbour): build it with at least {n_neighbors + 1} neighbours a sample")
    table = np.full((n_samples, counts.max()), -1, dtype=np.int64)
    table[rows, _positions(counts)] = columns
    return table


def _positions(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., counts[i] - 1 for each row i in turn."""
    return np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)


def given_candidates(neighbors, Y: np.ndarray, n_candidates: int) -> np.ndarray | None:
    """Candidate neighbours of the rows of ``Y`` from what the fit was given.

    Parameters
    ----------
    neighbors : ndarray of int, or object, or None
        What :func:`check_neighbors` returned.
    Y : ndarray or sparse matrix of shape (n, p)
        The points the search object is fitted on and queried with (densified).
    n_candidates : int

    Returns
    -------
    ndarray of int, shape (n, c) or None
        Each row's candidates other than itself (-1 pads); None when none were given.

    Raises
    ------
    InvalidParameterError
        A search object whose ``kneighbors`` returns anything but an
        (n, n_candidates + 1) array of sample indices.
    """
    if neighbors is None or isinstance(neighbors, np.ndarray):
        return neighbors
    n = Y.shape[0]
    Y = dense(Y)  # a search object of the user's own may not take sparse data
    neighbors.fit(Y)
    found = np.asarray(neighbors.kneighbors(Y, n_neighbors=n_candidates + 1,
                                            return_distance=False))
    if (found.shape != (n, n_candidates + 1) or not np.issubdtype(found.dtype, np.integer)
            or found.min(initial=0) < 0 or found.max(initial=0) >= n):
        raise InvalidParameterError(
            f"neighbors: {type(neighbors).__name__}.kneighbors(X, n_neighbors="
            f"{n_candidates + 1}, return_distance=False) must return an ({n}, "
            f"{n_candidates + 1}) array of sample indices, got "
            f"{found.dtype} of shape {found.shape}")
    return without_self(found.astype(np.int64))
