"""Nearest-neighbour candidates of the adaptive-neighbour graphs: exact, HNSW, or a
local search warm-started from a previous graph.

The k + 1 smallest tau of a column of an adaptive graph lie among the k + 1 nearest
neighbours by distance and the support of its prior, so a kNN search plus that support
gives every candidate (:mod:`causefs.numerics.adaptive_graphs`); no n x n matrix is formed.
Measurements behind the thresholds below: docs/PERFORMANCE.md, "Neighbour search".
"""

from __future__ import annotations

import contextlib
import logging

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree
from sklearn.neighbors import NearestNeighbors

from ..core.extras import require
from ..core.validation import check_choice
from . import CHUNK_ELEMENTS
from .sparse import column_nonzeros, dense
from .threads import caller_threads, parallel_map, threads_for, wide_threads

#: candidate searches: "auto" (exact NumPy brute force up to EXACT_N points but for
#: SMALL_TREE_N points or more of at most SMALL_TREE_DIMS dimensions, a k-d tree above
#: for points of few dimensions up to TREE_N and at any n for points of at most LOW_DIMS
#: dimensions, brute force up to FRESH_EXACT_N otherwise, "approximate" beyond),
#: "approximate" (a
#: warm-started local search where the caller has a previous graph, else HNSW, or brute
#: force up to :func:`fresh_exact_limit` points), "exact"
#: (NumPy brute force), "kd_tree" (SciPy's k-d tree, exact), scikit-learn's "brute" and
#: "ball_tree", and "all" (every i != j: the paper-literal dense reference, O(n^2) memory)
NEIGHBOR_ALGORITHMS = ("auto", "approximate", "exact", "brute", "kd_tree", "ball_tree", "all")

#: "auto" searches exactly up to this many points: above, a fit's up to 21 exact
#: O(n^2 p) searches per iteration dominate it
EXACT_N = 1000
#: ... but points of at most this many dimensions (the graph updates' n_clusters-dimensional
#: embeddings, small feature groups) are searched by the k-d tree at any n. One thread, 6
#: neighbours, brute force over tree time: on the principal components of JAFFE, UMIST,
#: COIL20, USPS and digits, in 8 dimensions 1.2-2.0 at n = 200, 1.8-3.4 at 500, 3.3-7.2
#: at 1000; in 20 dimensions 0.8-1.3, 1.1-2.1 and 1.5-3.9; over every search of the
#: graph updates of a default fit, 1.2 on JAFFE (10 clusters) and 2.7 on UMIST (20). On
#: raw features of 32 dimensions the tree was slower below n = 1000 (0.6-0.8 at n <= 500)
#: (docs/PERFORMANCE.md, "Neighbour search")
SMALL_TREE_DIMS = 20
#: ... from this many points: below, a search takes under a millisecond either way, and
#: the brute force keeps its order among equally near points (by index, as the reference
#: computations of tests/test_reference_math.py; a tree lists them in its own order)
SMALL_TREE_N = 200
#: above EXACT_N, "auto" searches points of at most this many dimensions exactly with a
#: k-d tree (an embedding has n_clusters dimensions, where a tree prunes well; it does
#: not on raw data of hundreds of dimensions)
TREE_DIMS = 32
#: ... up to this many points: a tree's search time grows faster than n (one search of
#: 20,000 points of 10 Gaussian dimensions took 1.2 s, of 100,000 points 30 s), and
#: beyond, the approximate local search is used (docs/PERFORMANCE.md, "Neighbour search")
TREE_N = 10_000
#: points of at most this many dimensions are searched exactly by the k-d tree at any n:
#: at n = 100,000 (feature groups of the 64-feature generator of bench_speed.py, two
#: threads) the tree took 0.7 s in 4 dimensions, 3.0 s in 6 and 6.3 s in 8 against
#: 10-14 s for an HNSW index and its local search, and 18 s in 10 dimensions
#: (docs/PERFORMANCE.md, "Large n, now")
LOW_DIMS = 6
#: an approximate search without a previous graph to start from is exact up to this
#: many points (an HNSW index costs more below it), and so is "auto" for points of many
#: dimensions
FRESH_EXACT_N = 5000
#: ... and points of at least FRESH_EXACT_DIMS dimensions up to FRESH_EXACT_MAX points:
#: there a one-thread HNSW index pays the dimensions at every point it visits, and brute
#: force (BLAS on both cores) costs less and is exact. Exact over HNSW-and-local-search
#: time, two cores, 6 neighbours: noise-like data of 1024 dimensions 0.26 at 8000 points,
#: 0.38 at 16,000 (HNSW's recall 0.91, 0.83), 0-1 data of 5000 dimensions 0.32 at 7000
#: (recall 0.93); but image data are kinder to HNSW than noise (USPS, 256 dimensions:
#: 1.56 inside a fit, where noise of 256 dimensions gave 0.65), so below 1024
#: dimensions, and beyond FRESH_EXACT_MAX points, the index stays (docs/PERFORMANCE.md,
#: "Fresh searches of many dimensions")
FRESH_EXACT_DIMS = 1024
FRESH_EXACT_MAX = 12_000


def fresh_exact_limit(dims: int) -> int:
    """Points up to which a search without a previous graph is exact (brute force) for
    points of ``dims`` dimensions: ``FRESH_EXACT_N``, or ``FRESH_EXACT_MAX`` from
    ``FRESH_EXACT_DIMS`` dimensions."""
    return FRESH_EXACT_MAX if dims >= FRESH_EXACT_DIMS else FRESH_EXACT_N


#: rounds of the local search (neighbours of neighbours) after the warm start: a second
#: round costs twice as much for little more recall
REFINE_ROUNDS = 1


#: the exact search multiplies sparse rows (CSR) instead of dense ones where that costs
#: less: where ``SPARSE_GRAM_SLOWDOWN * sum_j nnz_j^2 + SPARSE_ROW_COST * n^2 < n^2 d``
#: (``nnz_j`` the non-zeros of feature j; the sparse product's multiplications, each about
#: this many times a dense one's with BLAS on two cores, and the dense distance rows the
#: sparse product is turned into, as multiplications of d). Measured on 0-1 data, two
#: cores, 7 neighbours: at 2000 x 5000 the sparse search 7.0x faster at 1 % non-zeros,
#: 2.3x at 4 %, 0.9x at 10 %; at 2000 x 256 0.9x at 5 %, 0.5x at 10 %; at 7000 x 5000
#: and 4 % 2.1x (docs/PERFORMANCE.md, "Sparse rows in the exact search")
SPARSE_GRAM_SLOWDOWN = 100.0
SPARSE_ROW_COST = 400.0


def exact_search_work(n: int, d: int, squared_nonzeros: float) -> tuple[float, float]:
    """The exact search's work on n points of d dimensions, in dense multiplications, on
    dense rows and on sparse ones whose features' non-zero counts squared sum to
    ``squared_nonzeros`` (:data:`SPARSE_GRAM_SLOWDOWN`)."""
    dense_work = float(n) * n * d
    return dense_work, SPARSE_GRAM_SLOWDOWN * squared_nonzeros + SPARSE_ROW_COST * float(n) * n


#: points of at most this many dimensions are searched in the coordinates of their row
#: space where it has fewer (:func:`row_space`): the graph updates' points, a group's
#: embedding of n_clusters columns, span no more dimensions than the group has features
#: (8 of digits' 10 final groups have fewer than its 10 clusters, 9 of 10 at 50,000 x 64).
#: The same bound as :data:`TREE_DIMS`: wider points are raw features, seldom of lower
#: rank, whose ``Y'Y`` costs ``n p^2``
ROW_SPACE_DIMS = 32


def row_space(Y: np.ndarray) -> np.ndarray:
    """The rows of a dense ``Y`` (n, p) in an orthonormal basis of the space they span:
    the distances between rows of ``Y`` in as many columns as its rank; ``Y`` itself
    where its rank is p, where it is 0, or where p exceeds :data:`ROW_SPACE_DIMS`.

    The rank counts the eigenvalues of ``Y'Y`` above ``p eps`` times the largest. Where
    the rank is lower by construction (a group embedding ``X_m W_m`` of fewer features
    than columns) the dropped directions hold no part of any row and the distances are
    Y's to rounding; otherwise a dropped direction moves a squared distance by at most
    ``p^2 eps`` times that largest eigenvalue, the order of the rounding of a squared
    distance's own expansion. A search in fewer dimensions costs less, and points of at
    most :data:`LOW_DIMS` dimensions are searched exactly by a k-d tree at any n.
    """
    p = Y.shape[1]
    if not 1 < p <= ROW_SPACE_DIMS:
        return Y
    values, vectors = np.linalg.eigh(Y.T @ Y)
    spanned = values > p * np.finfo(float).eps * values[-1]
    if spanned.all() or not spanned.any():
        return Y
    return Y @ vectors[:, spanned]


def search_points(Y, algorithm: str) -> np.ndarray | sp.csr_array:
    """``Y`` as the search ``algorithm`` (resolved) takes it: a dense float array, but
    for the exact search and the approximate one (whose fresh searches up to
    :func:`fresh_exact_limit` points are exact; its HNSW index densifies the points it
    indexes) CSR rows where the exact search's sparse product costs less
    (:data:`SPARSE_GRAM_SLOWDOWN`); a sparse ``Y``, or a dense one with few non-zeros
    (0-1 data, counts), may then become CSR."""
    if algorithm in ("exact", "approximate"):
        per_feature = column_nonzeros(Y)
        dense_work, sparse_work = exact_search_work(
            Y.shape[0], Y.shape[1], float(np.square(per_feature, dtype=float).sum()))
        if sparse_work < dense_work:
            return sp.csr_array(Y, dtype=float)
    return np.asarray(dense(Y), dtype=float)


def row_squares(Y) -> np.ndarray:
    """``||Y_i||^2`` of every row (n,), dense or sparse."""
    if sp.issparse(Y):
        return np.asarray(Y.multiply(Y).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", Y, Y)


def exact_neighbors(Y, n_candidates: int,
                     points: np.ndarray | None = None) -> np.ndarray:
    """Exact kNN by chunked squared distances, excluding each point itself.

    ``Y`` is a dense array or CSR rows (:func:`search_points`); ``points``
    restricts the search to the neighbours of those points (default: all).
    """
    n = Y.shape[0]
    points = np.arange(n) if points is None else points
    squared = row_squares(Y)
    others = Y.T.tocsr() if sp.issparse(Y) else Y.T
    out = np.empty((points.size, n_candidates), dtype=np.int64)
    step = max(1, CHUNK_ELEMENTS // max(1, n))
    for start in range(0, points.size, step):
        block = slice(start, min(points.size, start + step))
        rows = points[block]
        with threads_for(2.0 * rows.size * n * Y.shape[1]):
            products = Y[rows] @ others
        if sp.issparse(products):
            products = products.toarray()
        D = squared[rows, None] + squared[None, :] - 2.0 * products
        D[np.arange(rows.size), rows] = np.inf
        out[block] = np.argpartition(D, n_candidates - 1, axis=1)[:, :n_candidates]
    return out


#: the k-d tree's leaves hold up to this many points, split at the sliding midpoint
#: (``balanced_tree=False``): every point's 8 nearest, one thread, against SciPy's
#: default (16 points, split at the median): 100,000 clustered points in 4 dimensions
#: 0.40 s for 0.41, in 6 1.12 s for 1.28, 20,000 in 10 0.36 s for 0.48, 9298 in 10
#: 0.081 s for 0.117; over the granular graphs' searches of default fits of USPS, 10.5 s
#: for 13.0, and of COIL20, 1.02 s for 1.21. Both are exact; among points equally near
#: to rounding they may list others (the default fits of the paper's and development
#: datasets keep their iterations and top 20; digits' J moves in its 8th digit).
TREE_LEAF_SIZE = 32


def tree_neighbors(Y: np.ndarray, n_candidates: int) -> np.ndarray:
    """Exact kNN by a k-d tree (SciPy's, :data:`TREE_LEAF_SIZE`), excluding each point
    itself.

    Fast where the points have few dimensions (an embedding of n_clusters columns);
    among duplicates the point itself may come after one of its copies, so it is removed
    wherever the tree lists it (the last column otherwise).

    Declared (chosen by time, not by the answer, which every tree gives exactly): the
    tree's leaves hold up to ``TREE_LEAF_SIZE`` = 32 points and a node is split at the
    sliding midpoint of its widest dimension (``balanced_tree=False``), not at the
    median.
    """
    n = Y.shape[0]
    k = min(n_candidates + 1, n)
    tree = cKDTree(Y, leafsize=TREE_LEAF_SIZE, balanced_tree=False)
    _, found = tree.query(Y, k=k, workers=caller_threads() if n > 20_000 else 1)
    return without_self(found.reshape(n, k))


#: the exact searches search the distinct points only where at most this share of the
#: points is distinct: above, listing the copies costs more than the search saves (over
#: the searches of default fits, one thread: distinct points below 10 % of digits' 1797
#: 12x faster, 10-50 % 1.5-3x, above 70 % 1.2-1.6x slower; COIL20 alike)
DISTINCT_SHARE = 0.5
#: the exact searches of :func:`nearest_candidates`, by name
EXACT_SEARCHES = {"exact": exact_neighbors, "kd_tree": tree_neighbors}


def distinct_neighbors(Y: np.ndarray, n_candidates: int, search) -> np.ndarray:
    """Exact kNN by ``search`` on the distinct rows of ``Y``, excluding each point itself.

    Points with equal coordinates (integer pixels, one-hot codes, a feature group whose
    rows of W are zero) make a k-d tree slow, as ties it cannot prune, and are searched
    once: each distinct row's nearest distinct rows (itself first) are listed, each with
    its first ``n_candidates + 1`` points by index, and every point takes the first
    ``n_candidates`` of its row's list other than itself. A point's candidates are then
    its nearest others, ties between copies broken by index, whatever ``search`` would
    have broken them by. Distinct rows equally near a row are listed in the order
    ``search`` lists them (a stable sort by distance): the copies of the first fill the
    candidates first. Where more than ``DISTINCT_SHARE`` of the points are distinct,
    this is ``search`` itself.
    """
    n = Y.shape[0]
    width = n_candidates + 1
    rows, keys = _row_keys(Y)
    _, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True,
                                          return_counts=True)
    u = first.size
    if u > DISTINCT_SHARE * n:
        return search(rows, n_candidates)
    nearest = np.arange(u)[:, None]  # each distinct row lists itself first
    if u > 1:
        distinct = rows[first]
        others = search(distinct, min(u - 1, n_candidates))
        # nearest first: the lists are cut after `width` points below
        if sp.issparse(distinct):
            squares = half_squared_distances(distinct, others)
        else:
            gaps = distinct[others] - distinct[:, None, :]
            squares = np.einsum("ijk,ijk->ij", gaps, gaps)
        order = np.argsort(squares, axis=1, kind="stable")
        nearest = np.hstack([nearest, np.take_along_axis(others, order, axis=1)])
    # the first `width` points of every distinct row, by index (-1 pads)
    members = np.argsort(inverse, kind="stable")
    starts = np.cumsum(counts) - counts
    rank = np.arange(n) - np.repeat(starts, counts)
    kept = rank < width
    table = np.full((u, width), -1, dtype=np.int64)
    table[inverse[members][kept], rank[kept]] = members[kept]
    listed = table[nearest].reshape(u, -1)
    # the first `width` listed points of every distinct row: they hold every point's
    # n_candidates nearest others (its own row first, at most one of them itself)
    order = np.argsort(listed < 0, axis=1, kind="stable")[:, :width]
    short = np.take_along_axis(listed, order, axis=1)
    return without_self(short[inverse])


def _row_keys(Y):
    """``Y`` in floating point with -0.0 made 0.0 (CSR rows in float64 and canonical:
    sorted, no stored zeros), and a key per row that is equal for equal rows only
    (their bytes)."""
    if not sp.issparse(Y):
        # + 0.0 makes -0.0 into 0.0, which are compared here by their bytes
        rows = np.ascontiguousarray(Y + 0.0)
        return rows, rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    rows = sp.csr_array(Y, dtype=float, copy=True)  # canonical form in place: a copy
    rows.sum_duplicates()
    rows.eliminate_zeros()  # a stored 0.0 or -0.0 is no entry
    ends = rows.indptr
    keys = np.empty(rows.shape[0], dtype=object)
    # same length and bytes only for the same columns with the same values
    keys[:] = [rows.indices[a:b].tobytes() + rows.data[a:b].tobytes()
               for a, b in zip(ends[:-1], ends[1:])]
    return rows, keys


def without_self(found: np.ndarray) -> np.ndarray:
    """Rows of a search of every point for itself, (n, c), less the point itself: where
    it is listed, else the last column (a duplicate of the point came first)."""
    n, c = found.shape
    own = found == np.arange(n)[:, None]
    keep = ~own
    keep[~own.any(axis=1), -1] = False  # rows whose own index came beyond the c listed
    return found[keep].reshape(n, c - 1)


@contextlib.contextmanager
def _quiet_logger(name: str):
    """Records of logger ``name`` below WARNING are dropped while the block runs."""
    log = logging.getLogger(name)
    level = log.level
    log.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        log.setLevel(level)


#: beyond this many points a fresh HNSW search splits them into HNSW_SHARDS interleaved
#: shards (rows s, s + HNSW_SHARDS, ...), indexes each on a thread of its own and searches
#: every point in every shard, the merged lists keeping each point's nearest, without the
#: round of local join one index is refined by. An index is built on one thread (faiss
#: inserts points in parallel otherwise, and the graph would depend on the threads'
#: timing), so one index left the second core idle for most of the search. At 100,000 x
#: 64 (two cores, 6 candidates) two shards took 28 s where one index and its join took 45
#: s, and found more of the true neighbours (recall 0.974 against 0.962); inside the
#: default fits of 50,000 and 100,000 x 64 the initial fused graph took 0.61x and 0.68x
#: its time, the top 20 the same. Up to here one index and its join stay: they cost
#: little (USPS, 9298 x 256: 1.7 s), and USPS's selection moves with graphs that differ in
#: a few neighbours in a thousand (12 to 14 of its top 20 kept, ACC and NMI within a
#: point) (docs/PERFORMANCE.md, "Fresh searches in shards")
SHARDED_N = 10_000
HNSW_SHARDS = 2


def hnsw_shards(n: int) -> int:
    """The HNSW indexes a fresh search of n points builds (:data:`SHARDED_N`)."""
    return 1 if n <= SHARDED_N else HNSW_SHARDS


def _hnsw_neighbors(Y: np.ndarray, n_candidates: int) -> np.ndarray:
    """Approximate kNN by an HNSW index (faiss) of the points, or beyond
    :data:`SHARDED_N` points by indexes of :data:`HNSW_SHARDS` interleaved shards; each
    index built on one thread, the shards side by side on the caller's threads, and
    every point searched in every index on the threads the fit may widen to
    (:func:`~causefs.numerics.threads.wide_threads`).

    One thread an index keeps it, and so the graph, reproducible: faiss inserts points
    in parallel otherwise. The search is the same on any number of threads (each query
    is searched alone in the finished indexes), and so is the result on any number of
    cores: the shards are fixed by n, only their building runs side by side. Used for
    fresh searches at large n (no previous graph to start from).

    Declared (recall against time; docs/PERFORMANCE.md): each shard an
    ``IndexHNSWFlat`` of ``M = 32`` links a point (64 on the bottom layer), built with
    ``efConstruction = 64`` and searched with ``efSearch = max(64, 4 n_candidates)``.

    Returns
    -------
    ndarray of int, shape (n, shards * (n_candidates + 1))
        Each index's ``n_candidates + 1`` nearest of every point (the point itself among
        those of its own index; -1 where a search came back short).
    """
    # imported here: only large fits without a warm start need it (an optional extra)
    with _quiet_logger("faiss.loader"):  # its INFO lines list the CPU builds it tried
        faiss = require("faiss", "faiss", f"a fresh neighbour search of {Y.shape[0]:,} "
                        f"points of {Y.shape[1]} dimensions (neighbor_algorithm='auto' "
                        f"beyond {fresh_exact_limit(Y.shape[1]):,} points of this many "
                        f"dimensions, beyond {TREE_N:,} of at most {TREE_DIMS}; 'exact' "
                        "does without)")

    n, dim = Y.shape
    data = np.ascontiguousarray(dense(Y.astype(np.float32)))  # CSR rows: 4 bytes a cell
    count = hnsw_shards(n)

    def build(shard):
        # a thread's own OpenMP setting: a new thread starts from the process default
        faiss.omp_set_num_threads(1)
        index = faiss.IndexHNSWFlat(dim, 32)
        index.hnsw.efConstruction = 64
        index.add(data[shard::count])  # rows shard, shard + count, ...
        return index

    outer = faiss.omp_get_max_threads()
    try:
        indexes = parallel_map(build, range(count), threads=wide_threads())
        faiss.omp_set_num_threads(wide_threads())
        found = []
        for shard, index in enumerate(indexes):
            index.hnsw.efSearch = max(64, 4 * n_candidates)
            _, local = index.search(data, n_candidates + 1)
            found.append(np.where(local >= 0, local * count + shard, -1))
    finally:
        faiss.omp_set_num_threads(outer)
    return np.hstack(found)


def refine_neighbors(Y: np.ndarray, seeds: np.ndarray, n_candidates: int,
                     rounds: int = REFINE_ROUNDS) -> np.ndarray:
    """Approximate kNN by a local search from seed candidates (NN-descent's local join).

    Keeps each row's ``n_candidates`` nearest seeds, then ``rounds`` times adds the
    neighbours (and reverse neighbours) of those neighbours and keeps the nearest again,
    in blocks of rows on the threads the fit may widen to. O(n c^2 p) per round for
    ``c = n_candidates``: a graph of the previous iteration is a good start, as the
    embeddings move little between iterations.

    Parameters
    ----------
    Y : ndarray of shape (n, p)
    seeds : ndarray of int, shape (n, s)
        Candidate indices per row; -1 pads.
    n_candidates : int

    Returns
    -------
    ndarray of int, shape (n, n_candidates)
        Each row's nearest found candidates other than itself (-1 where fewer exist).
    """
    best = _nearest_seeds(Y, seeds, n_candidates)
    for _ in range(rounds):
        # neighbours and reverse neighbours (NN-descent's join): a point whose
        # neighbourhood moved away is still listed by the points that moved towards it
        joined = np.hstack([best, _reverse_neighbors(best)])

        def hops(rows, best=best, joined=joined):
            near = joined[rows]
            hop = np.where(near[:, :, None] >= 0, best[np.maximum(near, 0)], -1)
            return np.hstack([near, hop.reshape(rows.size, -1)])

        best = _nearest_in_blocks(Y, hops, n_candidates,
                                  2 * n_candidates * (n_candidates + 1))
    return best


def _nearest_in_blocks(Y: np.ndarray, candidates_of, n_candidates: int,
                       width: int) -> np.ndarray:
    """Each row's ``n_candidates`` nearest of ``candidates_of(rows)`` (up to ``width`` a
    row), in blocks of rows: bounded temporaries, and the blocks, independent, on the
    threads the fit may widen to (one inside a granular group's worker: the groups
    share the cores). The rows come back in order, whatever the threads."""
    n = Y.shape[0]
    step = max(1, CHUNK_ELEMENTS // (4 * width))

    def nearest(start):
        rows = np.arange(start, min(n, start + step))
        return _nearest_of(Y, candidates_of(rows), n_candidates, rows)

    blocks = parallel_map(nearest, range(0, n, step), threads=wide_threads())
    return np.vstack(blocks) if blocks else np.empty((0, n_candidates), dtype=np.int64)


def _nearest_seeds(Y: np.ndarray, seeds: np.ndarray, n_candidates: int) -> np.ndarray:
    """Each row's ``n_candidates`` nearest among its own ``seeds`` (n, s) (-1 pads)."""
    return _nearest_in_blocks(Y, lambda rows: seeds[rows], n_candidates, seeds.shape[1])


def nearest_given(Y: np.ndarray, seeds: np.ndarray, n_candidates: int) -> np.ndarray:
    """Each row's ``n_candidates`` nearest among its given ``seeds`` (n, s) (-1 pads),
    rows left short completed by an exact search."""
    return _complete(Y, _nearest_seeds(Y, seeds, n_candidates))


def _complete(Y: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Rows where the local search found too few candidates (a group of points that only
    list each other) get their exact nearest neighbours instead."""
    short = np.flatnonzero((cand < 0).any(axis=1))
    if short.size:
        cand[short] = exact_neighbors(Y, cand.shape[1], short)
    return cand


def _reverse_neighbors(best: np.ndarray) -> np.ndarray:
    """For each row, up to ``best.shape[1]`` rows that list it, the first by index
    (-1 pads)."""
    n, c = best.shape
    rows = np.repeat(np.arange(n), c)
    targets = best.ravel()
    found = targets >= 0
    rows, targets = rows[found], targets[found]
    order = np.argsort(targets, kind="stable")
    rows, targets = rows[order], targets[order]
    starts = np.searchsorted(targets, np.arange(n))
    position = np.arange(targets.size) - starts[targets]
    keep = position < c
    out = np.full((n, c), -1, dtype=np.int64)
    out[targets[keep], position[keep]] = rows[keep]
    return out


def _nearest_of(Y: np.ndarray, cand: np.ndarray, n_candidates: int,
                rows: np.ndarray) -> np.ndarray:
    """The ``n_candidates`` nearest distinct candidates ``cand[i]`` of each point
    ``rows[i]``, other than itself."""
    if cand.shape[1] < n_candidates:  # too few seeds: pad, the caller completes the row
        cand = np.hstack([cand, np.full((cand.shape[0], n_candidates - cand.shape[1]), -1)])
    cand = np.sort(cand, axis=1)
    repeated = np.zeros(cand.shape, dtype=bool)
    repeated[:, 1:] = cand[:, 1:] == cand[:, :-1]
    cand = np.where(repeated | (cand == rows[:, None]), -1, cand)
    distance = half_squared_distances(Y, cand, rows)
    if cand.shape[1] > n_candidates:
        keep = np.argpartition(distance, n_candidates - 1, axis=1)[:, :n_candidates]
        cand = np.take_along_axis(cand, keep, axis=1)
        distance = np.take_along_axis(distance, keep, axis=1)
    return np.where(np.isfinite(distance), cand, -1)


def resolve_algorithm(algorithm: str, n: int, dims: int) -> str:
    """The search ``algorithm`` runs for n points of ``dims`` dimensions ("auto" resolved)."""
    check_choice("neighbor_algorithm", algorithm, NEIGHBOR_ALGORITHMS)
    if algorithm != "auto":
        return algorithm
    if n <= EXACT_N:
        return "kd_tree" if dims <= SMALL_TREE_DIMS and n >= SMALL_TREE_N else "exact"
    if dims <= LOW_DIMS or (dims <= TREE_DIMS and n <= TREE_N):
        return "kd_tree"
    return "exact" if n <= FRESH_EXACT_N else "approximate"


def nearest_candidates(Y: np.ndarray, n_candidates: int, algorithm: str,
                       warm: list | None = None) -> np.ndarray:
    """Indices (n, n_candidates) of each row's nearest other rows (-1 may pad).

    ``warm`` lists graphs (sparse, column j = neighbours of j) whose supports seed the
    approximate search.
    """
    n = Y.shape[0]
    algorithm = resolve_algorithm(algorithm, n, Y.shape[1])
    if algorithm in EXACT_SEARCHES:
        return distinct_neighbors(Y, n_candidates, EXACT_SEARCHES[algorithm])
    if algorithm == "approximate":
        if warm:
            seeds, _ = candidate_table(np.full((n, 1), -1, dtype=np.int64), warm)
            if seeds.shape[1] >= n_candidates:
                return _complete(Y, refine_neighbors(Y, seeds, n_candidates))
        if n <= fresh_exact_limit(Y.shape[1]):
            return exact_neighbors(Y, n_candidates)
        seeds = _hnsw_neighbors(Y, n_candidates)
        if hnsw_shards(n) == 1:  # one index: a round of local join adds neighbours it missed
            return _complete(Y, refine_neighbors(Y, seeds, n_candidates, rounds=1))
        return nearest_given(Y, seeds, n_candidates)
    if algorithm == "all":
        idx = np.broadcast_to(np.arange(n - 1), (n, n - 1)).copy()
        idx += idx >= np.arange(n)[:, None]  # skip the diagonal
        return idx
    nn = NearestNeighbors(n_neighbors=n_candidates, algorithm=algorithm).fit(Y)
    # X=None: a point is not its own neighbour, duplicates included
    return nn.kneighbors(return_distance=False)


def candidate_table(cand: np.ndarray, graphs: list) -> tuple[np.ndarray, list]:
    """Join the kNN candidates with the supports of ``graphs`` (csc, column j = column j).

    Returns the candidate indices (n, c') with -1 padding and, for every graph, its
    values at those candidates (0 where the graph has no entry).

    Each point's row lists its candidates, then each graph's support of its column, and
    is sorted on its own (rows of a few tens of entries: 0.66-0.73x the time of one sort
    of all n c' pairs at 1797 to 100,000 points, the same table; docs/PERFORMANCE.md,
    "The local search on both cores").
    """
    n, width = cand.shape
    graphs = [sp.csc_array(graph) for graph in graphs]
    lengths = [np.diff(graph.indptr) for graph in graphs]
    offsets = np.cumsum([0, width] + [int(length.max(initial=0)) for length in lengths])
    pad = n  # sorts after every index
    keys = np.full((n, offsets[-1]), pad, dtype=np.int64)
    keys[:, :width] = np.where(cand >= 0, cand, pad)
    places = []  # each graph entry's place in the flat keys
    for graph, length, offset in zip(graphs, lengths, offsets[1:]):
        column = np.repeat(np.arange(n), length)
        place = (column * keys.shape[1] + offset + np.arange(column.size)
                 - np.repeat(graph.indptr[:-1], length))
        keys.ravel()[place] = graph.indices
        places.append(place)
    order = np.argsort(keys, axis=1)  # any order of equal indices: they share a slot
    ordered = np.take_along_axis(keys, order, axis=1)
    first = ordered != pad  # the first of each run of equal indices
    first[:, 1:] &= ordered[:, 1:] != ordered[:, :-1]
    slot = np.cumsum(first, axis=1) - 1  # each sorted entry's column in the table
    table = np.full((n, int(first.sum(axis=1).max(initial=0))), -1, dtype=np.int64)
    listed = np.flatnonzero(first)
    table.ravel()[listed // keys.shape[1] * table.shape[1] + slot.ravel()[listed]] = \
        ordered.ravel()[listed]
    slot_of = np.empty_like(slot)  # each entry's column in the table, in keys' order
    np.put_along_axis(slot_of, order, slot, axis=1)
    aligned = []
    for graph, place in zip(graphs, places):
        # bincount sums a graph's repeated entries, as summing them into a dense matrix
        target = place // keys.shape[1] * table.shape[1] + slot_of.ravel()[place]
        aligned.append(np.bincount(target, weights=graph.data,
                                   minlength=table.size).reshape(table.shape))
    return table, aligned


def half_squared_distances(Y, idx: np.ndarray,
                            rows: np.ndarray | None = None) -> np.ndarray:
    """``1/2 ||Y[idx[j, p]] - Y[rows[j]]||^2`` (``rows`` defaults to every point in
    order), +inf where ``idx < 0``; only the listed pairs are computed, in chunks.
    ``Y`` is a dense array or CSR rows; CSR rows are densified a chunk at a time, so
    that a pair's distance is the one its dense rows give, to the last bit."""
    n, c = idx.shape
    out = np.full((n, c), np.inf)
    where = np.flatnonzero(idx.ravel() >= 0)
    targets = idx.ravel()[where]
    sources = where // c if rows is None else rows[where // c]
    step = max(1, CHUNK_ELEMENTS // max(1, Y.shape[1]))
    flat = out.ravel()
    for start in range(0, where.size, step):
        chunk = slice(start, start + step)
        if isinstance(Y, np.ndarray):  # take: a row gather 0.8x the time of Y[targets]
            diff = np.take(Y, targets[chunk], axis=0)
            diff -= np.take(Y, sources[chunk], axis=0)
        else:
            diff = dense(Y[targets[chunk]]) - dense(Y[sources[chunk]])
        flat[where[chunk]] = 0.5 * np.einsum("ij,ij->i", diff, diff)
    return out
