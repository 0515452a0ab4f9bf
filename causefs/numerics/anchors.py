"""Anchor graphs: every graph of a fit links each sample to its nearest anchors only.

At large n the neighbour searches are most of a fit (the first fused and granular graphs
an HNSW index each, the updates a local search a graph; docs/PERFORMANCE.md). With
``n_anchors = m``, a fit draws m anchor samples once (seeded) and every adaptive-neighbour
graph it builds, S[m] and G, initial or updated, takes its k neighbours of each column
from the anchors alone: the closed form (eq. S.5) is the exact minimizer of each column's
problem over the graphs whose support lies in the anchors, so the graph blocks stay
exact (descent) blocks of that constrained model, and its search is exact and cheap: n
queries against m points (a k-d tree on the anchors in few dimensions, products with
them otherwise), O(n log m) or O(n m p) a graph instead of O(n log n) or O(n^2 p).

It is a different model, not a faster path to the same graphs: the objective is the
paper's with a smaller feasible set for S[m] and G (its value at the end is higher), and
the graphs' smoothness links samples through the anchors (Liu, He and Chang, "Large
graph construction for scalable semi-supervised learning", ICML 2010). What it does to
the selection is measured inside real fits in docs/PERFORMANCE.md, "Anchor graphs".
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from ..core.validation import InvalidParameterError
from . import CHUNK_ELEMENTS
from .neighbors import TREE_DIMS, TREE_LEAF_SIZE, row_squares
from .sparse import dense
from .threads import caller_threads, parallel_map, threads_for, wide_threads

#: ``n_anchors="auto"``: every sample is a candidate neighbour up to this many samples
#: (the paper's graphs), beyond it :data:`AUTO_ANCHORS` anchors (docs/PERFORMANCE.md,
#: "Anchor graphs": where the searches were approximate already)
ANCHOR_N = 20_000
#: anchors ``n_anchors="auto"`` draws beyond :data:`ANCHOR_N` samples
AUTO_ANCHORS = 1000


def resolve_anchors(n_anchors, n_samples: int, given_neighbors: bool = False) -> int | None:
    """The anchors a fit of ``n_samples`` draws for the ``n_anchors`` setting (None: every
    sample is a candidate). A fit given its neighbours has none under ``"auto"``: the
    given graph is what was asked for.

    Raises
    ------
    InvalidParameterError
        A number of anchors with given neighbours (both would replace the first search).
    """
    if n_anchors == "auto":
        return AUTO_ANCHORS if n_samples > ANCHOR_N and not given_neighbors else None
    if n_anchors is not None and given_neighbors:
        raise InvalidParameterError(
            f"n_anchors={n_anchors}: the fit was given neighbours, which replace the first "
            "graph's search; anchors would replace them again. Pass n_anchors=None (or "
            "'auto') with neighbors")
    return n_anchors


def choose_anchors(n_samples: int, n_anchors: int, seed: int) -> np.ndarray:
    """``n_anchors`` distinct samples drawn uniformly with ``seed``, sorted (int64)."""
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n_samples, size=n_anchors, replace=False)).astype(np.int64)


def anchor_seeds(Y, anchors: np.ndarray | None, k: int) -> np.ndarray | None:
    """The candidates of a graph of ``k`` neighbours a column among ``anchors``: each
    point's ``k + 1`` nearest anchors (:func:`nearest_anchors`), for
    :func:`~causefs.numerics.adaptive_graphs.adaptive_graph`'s ``seeds``, which the closed
    form then joins with the supports of its prior and previous graph (anchors too in a
    fit with anchors); None without anchors (the graph's own search).

    Raises
    ------
    ValueError
        Fewer than ``k + 2`` anchors (the (k+1)-th nearest other than a point itself).
    """
    if anchors is None:
        return None
    if anchors.size < k + 2:
        raise ValueError(f"{anchors.size} anchors: the closed form needs k + 2 = {k + 2} "
                         "(the (k+1)-th nearest other than a point itself)")
    return nearest_anchors(Y, anchors, k + 1)


def nearest_anchors(Y, anchors: np.ndarray, n_candidates: int) -> np.ndarray:
    """Each point's ``n_candidates`` nearest anchors other than itself.

    Parameters
    ----------
    Y : ndarray or sparse matrix of shape (n, p)
        The points.
    anchors : ndarray of int, shape (m,)
        Sorted indices of the anchor points, ``m >= n_candidates + 1``.
    n_candidates : int

    Returns
    -------
    ndarray of int, shape (n, n_candidates)
        Indices into the rows of ``Y`` (all of them anchors), nearest first; the point
        itself is never listed.

    Notes
    -----
    Exact: dense points of at most :data:`~causefs.numerics.neighbors.TREE_DIMS`
    dimensions by a k-d tree on the anchors, others by their products with the anchors
    in blocks of rows. Anchors as near as the last one listed (copies of a point, tied
    0-1 rows) are listed by the smaller index, as the closed form breaks its ties
    (:func:`~causefs.numerics.adaptive_graphs.adaptive_neighbors`): a point whose
    ``n_candidates``-th and next nearest anchors tie is searched again among all
    anchors, ordered by distance, then index.
    """
    n, m = Y.shape[0], anchors.size
    # one more than asked, to see a tie at the edge; the point itself may be an anchor
    width = min(n_candidates + 2, m)
    if not sp.issparse(Y) and Y.shape[1] <= TREE_DIMS:
        tree = cKDTree(np.asarray(Y[anchors], dtype=float), leafsize=TREE_LEAF_SIZE,
                       balanced_tree=False)
        distance, found = tree.query(Y, k=width,
                                     workers=caller_threads() if n > 20_000 else 1)
        found, distance = anchors[found.reshape(n, width)], distance.reshape(n, width)
    else:
        found, distance = _nearest_by_products(Y, anchors, width)
    # the point itself last, then by distance and index
    distance = np.where(found == np.arange(n)[:, None], np.inf, distance)
    order = np.lexsort((found, distance), axis=1)
    found = np.take_along_axis(found, order, axis=1)
    distance = np.take_along_axis(distance, order, axis=1)
    tied = np.flatnonzero(distance[:, n_candidates - 1] == distance[:, n_candidates])
    found = found[:, :n_candidates]
    if tied.size:
        found[tied] = _nearest_by_index(Y, anchors, n_candidates, tied)
    return found


def _nearest_by_products(Y, anchors: np.ndarray, width: int):
    """Each row's ``width`` nearest anchors, itself included, in no order, and their
    squared distances less the row's own squared norm (the same for every anchor of a
    row), from the products with the anchors in blocks of rows."""
    n = Y.shape[0]
    points = dense(Y[anchors])
    squared = row_squares(points)
    step = max(1, CHUNK_ELEMENTS // max(1, anchors.size))

    def nearest(start):
        D = _anchor_distances(Y[start:min(n, start + step)], points, squared)
        part = np.argpartition(D, width - 1, axis=1)[:, :width]
        return anchors[part], np.take_along_axis(D, part, axis=1)

    blocks = parallel_map(nearest, range(0, n, step), threads=wide_threads())
    return np.vstack([f for f, _ in blocks]), np.vstack([d for _, d in blocks])


def _nearest_by_index(Y, anchors: np.ndarray, n_candidates: int, rows: np.ndarray):
    """The ``n_candidates`` nearest anchors other than itself of each of ``rows``, among
    all anchors, ties by the smaller index."""
    points = dense(Y[anchors])
    D = _anchor_distances(Y[rows], points, row_squares(points))
    D[anchors[None, :] == rows[:, None]] = np.inf
    order = np.lexsort((np.broadcast_to(anchors, D.shape), D), axis=1)
    return anchors[order[:, :n_candidates]]


def _anchor_distances(rows, points: np.ndarray, squared: np.ndarray) -> np.ndarray:
    """Squared distances of ``rows`` (dense or CSR) to the anchors' ``points`` less each
    row's own squared norm (the same for every anchor of a row: no part of a ranking),
    ``squared`` being the anchors' squared norms."""
    with threads_for(2.0 * rows.shape[0] * points.shape[0] * points.shape[1]):
        products = np.asarray(rows @ points.T)
    return squared[None, :] - 2.0 * products
