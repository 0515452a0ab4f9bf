"""Adaptive-neighbour graphs and Laplacian algebra on sparse graphs.

One closed form (paper eqs. S.5 and G.3, after Nie et al. 2014) serves the granular graphs
``S[m]``, the fused graph ``G`` and the initial kNN graphs: for column j,

    tau_ij = 1/2 ||y_i - y_j||^2 - P_ij,   i != j,

keep the k smallest, ``S_ij = (tau_(k+1)j - tau_ij) / (k tau_(k+1)j - sum_p<=k tau_pj)`` and
``gamma_j = (k tau_(k+1)j - sum_p<=k tau_pj) / 2``. ``P`` is the prior that lowers tau
(``nu_m G`` for S[m], ``sum_m nu_m S[m]`` for G, nothing at initialization).

The k+1 smallest tau of a column lie among the k+1 nearest neighbours by distance and the
support of ``P`` (P >= 0 only lowers tau where it is non-zero), so the candidates come
from a kNN search plus that support: no n x n matrix is ever formed. Graphs are
``scipy.sparse.csc_array`` of shape (n, n) whose column j holds the k neighbours of j.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

from .simplex import project_simplex
from .threads import threads_for

#: how the adaptive parameter of a column is set at each update
ADAPTIVE_UPDATES = {
    "closed_form": "re-estimate gamma_j at every update (the paper): exactly k neighbours",
    "monotone": "take the re-estimate where it does not raise the column's objective, "
    "else keep gamma_j and the exact minimizer for it (at most k neighbours): the "
    "block then never raises J as it stands",
}

#: candidate searches: "auto" (exact NumPy brute force up to EXACT_N points, "approximate"
#: above), "approximate" (a warm-started local search where the caller has a previous
#: graph, else HNSW), "exact" (NumPy brute force), scikit-learn's NearestNeighbors
#: algorithms, and "all" (every i != j: the paper-literal dense reference, O(n^2) memory)
NEIGHBOR_ALGORITHMS = ("auto", "approximate", "exact", "brute", "kd_tree", "ball_tree", "all")

#: "auto" searches exactly up to this many points. An exact search costs O(n^2 p) and a
#: fit makes up to 21 per iteration (M = 10 granular graphs, their rebuild for new
#: groups, the fused graph): at n = 9298 they were 75% of a USPS fit, and at n = 1440
#: (COIL20) the warm-started search made the two graph blocks 2.6x faster
EXACT_N = 1000
#: a search without a previous graph to start from is exact up to this many points
#: (an HNSW index costs more below it)
FRESH_EXACT_N = 5000
#: rounds of the local search (neighbours of neighbours) after the warm start. Measured on
#: USPS embeddings moved as by an iteration: one round finds 96.5% of the exact
#: neighbours in 0.05 s of CPU, two rounds 97.0% in 0.09 s
REFINE_ROUNDS = 1

_CHUNK_ELEMENTS = 2**21  # bound on the temporary (rows x candidates x dims) arrays


def adaptive_neighbors(cand_idx: np.ndarray, cand_tau: np.ndarray, k: int,
                       previous: tuple | None = None):
    """Closed-form adaptive-neighbour weights (eq. S.5) for every column.

    Parameters
    ----------
    cand_idx : ndarray of int, shape (n, c)
        Row ``j`` lists the candidate neighbours i of column j (c >= k + 1).
    cand_tau : ndarray of float, shape (n, c)
        ``tau_ij`` of each candidate; ``+inf`` marks padding or a repeated candidate.
    k : int
        Number of neighbours kept per column.
    previous : (weights, gamma), optional
        ``adaptive_update="monotone"``: the previous column weights aligned with the
        candidates, (n, c), and the previous gamma, (n,). A column whose re-estimated
        closed form would raise ``<tau, s> + gamma ||s||^2`` above its previous value
        keeps its gamma and takes the exact minimizer for it,
        ``proj_simplex(-tau / (2 gamma))``, whose support lies within the k smallest tau.

    Returns
    -------
    graph : csc_array of shape (n, n)
        Column j has k non-zeros (at most k with ``previous``) that sum to 1.
    gamma : ndarray of shape (n,)
        ``(k tau_(k+1) - sum_p tau_p) / 2`` per column (or the kept gamma); 0 where the
        column fell back to uniform weights.

    Notes
    -----
    Ties are broken by the smaller index (candidates are visited in index order). When
    the k + 1 smallest tau are all equal, the denominator vanishes (duplicate points,
    constant data); the column then puts uniform weights 1/k on its k nearest
    candidates, which is still a minimizer of the column problem (its gamma is 0).
    """
    n, c = cand_tau.shape
    if c < k + 1:
        raise ValueError(f"need at least k + 1 = {k + 1} candidates per column, got {c}")
    # order candidates by index first, so the stable sort on tau breaks ties by index
    by_index = np.argsort(cand_idx, axis=1, kind="stable")
    cand_idx = np.take_along_axis(cand_idx, by_index, axis=1)
    cand_tau = np.take_along_axis(cand_tau, by_index, axis=1)
    order = np.argsort(cand_tau, axis=1, kind="stable")[:, : k + 1]
    tau = np.take_along_axis(cand_tau, order, axis=1)
    rows = np.take_along_axis(cand_idx, order[:, :k], axis=1)
    if not np.all(np.isfinite(tau)):
        raise ValueError("fewer than k + 1 finite candidates in some column")
    numerators = tau[:, k : k + 1] - tau[:, :k]
    denominators = numerators.sum(axis=1)
    degenerate = ~(denominators > 0)
    weights = np.empty_like(numerators)
    ok = ~degenerate
    # dividing by the sum of the numerators (= k tau_(k+1) - sum tau_p) keeps columns
    # summing to 1 to rounding
    weights[ok] = numerators[ok] / denominators[ok, None]
    weights[degenerate] = 1.0 / k
    gamma = np.where(degenerate, 0.0, denominators / 2.0)
    if previous is not None:
        old_weights = np.take_along_axis(previous[0], by_index, axis=1)
        old_gamma = previous[1]
        finite_tau = np.where(old_weights > 0, cand_tau, 0.0)
        old_value = (finite_tau * old_weights).sum(axis=1) + old_gamma * (old_weights**2).sum(1)
        new_value = (tau[:, :k] * weights).sum(axis=1) + gamma * (weights**2).sum(axis=1)
        keep = new_value > old_value
        if keep.any():
            weights[keep] = _fixed_gamma_weights(tau[keep, :k], old_gamma[keep])
            gamma[keep] = old_gamma[keep]
    graph = sp.csc_array(
        (weights.ravel(), rows.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n)
    )
    graph.has_sorted_indices = False
    graph.sort_indices()
    graph.eliminate_zeros()
    return graph, gamma


def _fixed_gamma_weights(tau: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Rows of ``argmin_{s in simplex} <tau, s> + gamma ||s||^2`` on sorted candidates."""
    weights = np.empty_like(tau)
    linear = gamma <= 0  # a linear column: uniform mass on its smallest tau
    if linear.any():
        ties = tau[linear] == tau[linear, :1]
        weights[linear] = ties / ties.sum(axis=1, keepdims=True)
    quadratic = ~linear
    weights[quadratic] = project_simplex(-tau[quadratic] / (2.0 * gamma[quadratic, None]))
    return weights


def _numpy_neighbors(Y: np.ndarray, n_candidates: int,
                     points: np.ndarray | None = None) -> np.ndarray:
    """Exact kNN by chunked squared distances, excluding each point itself.

    ``points`` restricts the search to the neighbours of those points (default: all).
    """
    n = Y.shape[0]
    points = np.arange(n) if points is None else points
    squared = np.einsum("ij,ij->i", Y, Y)
    out = np.empty((points.size, n_candidates), dtype=np.int64)
    step = max(1, _CHUNK_ELEMENTS // max(1, n))
    for start in range(0, points.size, step):
        block = slice(start, min(points.size, start + step))
        rows = points[block]
        with threads_for(2.0 * rows.size * n * Y.shape[1]):
            D = squared[rows, None] + squared[None, :] - 2.0 * (Y[rows] @ Y.T)
        D[np.arange(rows.size), rows] = np.inf
        out[block] = np.argpartition(D, n_candidates - 1, axis=1)[:, :n_candidates]
    return out


def _hnsw_neighbors(Y: np.ndarray, n_candidates: int) -> np.ndarray:
    """Approximate kNN by an HNSW index (faiss), built and searched on one thread.

    One thread keeps the index, and so the graph, reproducible: faiss inserts points in
    parallel otherwise. Used for fresh searches at large n (no previous graph to start
    from); its n_candidates + 1 results per point seed :func:`refine_neighbors`.
    """
    import faiss  # imported here: only large fits without a warm start need it

    dim = Y.shape[1]
    data = np.ascontiguousarray(Y, dtype=np.float32)
    outer = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        index = faiss.IndexHNSWFlat(dim, 32)
        index.hnsw.efConstruction = 64
        index.add(data)
        index.hnsw.efSearch = max(64, 4 * n_candidates)
        _, found = index.search(data, n_candidates + 1)
    finally:
        faiss.omp_set_num_threads(outer)
    # each point itself is dropped by the local search that follows; rows HNSW left
    # short (-1) are completed by an exact search there (:func:`_complete`)
    return found


def refine_neighbors(Y: np.ndarray, seeds: np.ndarray, n_candidates: int,
                     rounds: int = REFINE_ROUNDS) -> np.ndarray:
    """Approximate kNN by a local search from seed candidates (NN-descent's local join).

    Keeps each row's ``n_candidates`` nearest seeds, then ``rounds`` times adds the
    neighbours (and reverse neighbours) of those neighbours and keeps the nearest again.
    O(n c^2 p) per round for
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
    n = Y.shape[0]
    best = _nearest_of(Y, seeds, n_candidates, np.arange(n))
    width = 2 * n_candidates * (n_candidates + 1)
    step = max(1, _CHUNK_ELEMENTS // (4 * width))  # rows per block: bounded temporaries
    for _ in range(rounds):
        # neighbours and reverse neighbours (NN-descent's join): a point whose
        # neighbourhood moved away is still listed by the points that moved towards it
        joined = np.hstack([best, _reverse_neighbors(best)])
        refined = np.empty_like(best)
        for start in range(0, n, step):
            rows = np.arange(start, min(n, start + step))
            near = joined[rows]
            hops = np.where(near[:, :, None] >= 0, best[np.maximum(near, 0)], -1)
            refined[rows] = _nearest_of(Y, np.hstack([near, hops.reshape(rows.size, -1)]),
                                        n_candidates, rows)
        best = refined
    return best


def _complete(Y: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Rows where the local search found too few candidates (a group of points that only
    list each other) get their exact nearest neighbours instead."""
    short = np.flatnonzero((cand < 0).any(axis=1))
    if short.size:
        cand[short] = _numpy_neighbors(Y, cand.shape[1], short)
    return cand


def _reverse_neighbors(best: np.ndarray) -> np.ndarray:
    """For each row, up to ``best.shape[1]`` rows that list it (-1 pads)."""
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
    distance = _half_squared_distances(Y, cand, rows)
    if cand.shape[1] > n_candidates:
        keep = np.argpartition(distance, n_candidates - 1, axis=1)[:, :n_candidates]
        cand = np.take_along_axis(cand, keep, axis=1)
        distance = np.take_along_axis(distance, keep, axis=1)
    return np.where(np.isfinite(distance), cand, -1)


def _nearest_candidates(Y: np.ndarray, n_candidates: int, algorithm: str,
                        warm: list | None = None) -> np.ndarray:
    """Indices (n, n_candidates) of each row's nearest other rows (-1 may pad).

    ``warm`` lists graphs (sparse, column j = neighbours of j) whose supports seed the
    approximate search.
    """
    n = Y.shape[0]
    if algorithm == "auto":
        algorithm = "exact" if n <= EXACT_N else "approximate"
    if algorithm == "exact":
        return _numpy_neighbors(Y, n_candidates)
    if algorithm == "approximate":
        if warm:
            seeds, _ = _candidate_table(np.full((n, 1), -1, dtype=np.int64), warm)
            if seeds.shape[1] >= n_candidates:
                return _complete(Y, refine_neighbors(Y, seeds, n_candidates))
        if n <= FRESH_EXACT_N:
            return _numpy_neighbors(Y, n_candidates)
        return _complete(Y, refine_neighbors(Y, _hnsw_neighbors(Y, n_candidates),
                                             n_candidates, rounds=1))
    if algorithm == "all":
        idx = np.broadcast_to(np.arange(n - 1), (n, n - 1)).copy()
        idx += idx >= np.arange(n)[:, None]  # skip the diagonal
        return idx
    if algorithm not in NEIGHBOR_ALGORITHMS:
        raise ValueError(
            f"unknown neighbor algorithm {algorithm!r}; allowed: {', '.join(NEIGHBOR_ALGORITHMS)}"
        )
    nn = NearestNeighbors(n_neighbors=n_candidates, algorithm=algorithm).fit(Y)
    # X=None: a point is not its own neighbour, duplicates included
    return nn.kneighbors(return_distance=False)


def _candidate_table(cand: np.ndarray, graphs: list) -> tuple[np.ndarray, list]:
    """Join the kNN candidates with the supports of ``graphs`` (csc, column j = column j).

    Returns the candidate indices (n, c') with -1 padding and, for every graph, its
    values at those candidates (0 where the graph has no entry).
    """
    n, width = cand.shape
    found = cand.ravel() >= 0  # -1 pads
    cols = [np.repeat(np.arange(n), width)[found]]
    rows = [cand.ravel()[found].astype(np.int64)]
    for graph in graphs:
        graph = sp.csc_array(graph)
        cols.append(np.repeat(np.arange(n), np.diff(graph.indptr)))
        rows.append(graph.indices.astype(np.int64))
    sizes = [r.size for r in rows]
    key = np.concatenate(cols) * n + np.concatenate(rows)
    unique, inverse = np.unique(key, return_inverse=True)
    values = []
    offset = sizes[0]
    for graph, size in zip(graphs, sizes[1:]):
        chunk = np.zeros(key.size)
        chunk[offset:offset + size] = sp.csc_array(graph).data
        values.append(np.bincount(inverse, weights=chunk, minlength=unique.size))
        offset += size
    col, row = np.divmod(unique, n)
    counts = np.bincount(col, minlength=n)
    position = np.arange(unique.size) - np.repeat(np.cumsum(counts) - counts, counts)
    table = np.full((n, counts.max()), -1, dtype=np.int64)
    table[col, position] = row
    aligned = []
    for value in values:
        out = np.zeros(table.shape)
        out[col, position] = value
        aligned.append(out)
    return table, aligned


def _half_squared_distances(Y: np.ndarray, idx: np.ndarray,
                            rows: np.ndarray | None = None) -> np.ndarray:
    """``1/2 ||Y[idx[j, p]] - Y[rows[j]]||^2`` (``rows`` defaults to every point in
    order), +inf where ``idx < 0``; only the listed pairs are computed, in chunks."""
    n, c = idx.shape
    out = np.full((n, c), np.inf)
    where = np.flatnonzero(idx.ravel() >= 0)
    targets = idx.ravel()[where]
    sources = where // c if rows is None else rows[where // c]
    step = max(1, _CHUNK_ELEMENTS // max(1, Y.shape[1]))
    flat = out.ravel()
    for start in range(0, where.size, step):
        chunk = slice(start, start + step)
        diff = Y[targets[chunk]] - Y[sources[chunk]]
        flat[where[chunk]] = 0.5 * np.einsum("ij,ij->i", diff, diff)
    return out


def adaptive_graph(Y: np.ndarray, k: int, prior=None, algorithm: str = "auto",
                   previous: tuple | None = None, warm: list | None = None):
    """Adaptive-neighbour graph of the rows of ``Y`` with an optional prior (eq. S.5).

    Parameters
    ----------
    Y : ndarray of shape (n, p)
        Points; ``tau_ij = 1/2 ||Y_i - Y_j||^2 - prior_ij``.
    k : int
        Neighbours per column, ``1 <= k <= n - 2``.
    prior : sparse (n, n) with non-negative entries, optional
        Column j holds ``P_ij``; its support joins the kNN candidates of column j.
    algorithm : str
        Candidate search, one of :data:`NEIGHBOR_ALGORITHMS`.
    previous : (graph, gamma), optional
        The graph being replaced and its gamma, for ``adaptive_update="monotone"``
        (see :func:`adaptive_neighbors`); its support joins the candidates.
    warm : list of sparse (n, n), optional
        Graphs whose supports seed an approximate search and join the candidates. The
        graph being replaced belongs here: with its support among the candidates, the
        closed form over the candidates never does worse than it (the block descends
        whatever the search found).

    Returns
    -------
    graph : csc_array of shape (n, n)
    gamma : ndarray of shape (n,)
    """
    Y = np.asarray(Y, dtype=float)
    n = Y.shape[0]
    if not 1 <= k <= n - 2:
        raise ValueError(
            f"n_neighbors={k} needs 1 <= n_neighbors <= n_samples - 2 = {n - 2} "
            "(the closed form uses the (k+1)-th neighbour of every sample)"
        )
    warm = [g for g in (warm or ()) if g is not None]
    cand = _nearest_candidates(Y, k + 1, algorithm, warm + ([prior] if prior is not None else []))
    graphs = [g for g in (prior, None if previous is None else previous[0]) if g is not None]
    if algorithm == "all":  # dense reference: look every pair up
        aligned = [sp.csc_array(g).toarray()[cand, np.arange(n)[:, None]] for g in graphs]
    else:
        cand, aligned = _candidate_table(cand, graphs + warm)
        aligned = aligned[:len(graphs)]
    tau = _half_squared_distances(Y, cand)
    if prior is not None:
        tau -= aligned[0]
    old = None if previous is None else (aligned[-1], np.asarray(previous[1], dtype=float))
    return adaptive_neighbors(cand, tau, k, old)


def symmetric_degree(A) -> np.ndarray:
    """Degrees of ``(A + A') / 2``: the diagonal of ``L_A``."""
    return 0.5 * (np.asarray(A.sum(axis=0)).ravel() + np.asarray(A.sum(axis=1)).ravel())


def laplacian_matmul(A, Y: np.ndarray) -> np.ndarray:
    """``L_A Y`` with ``L_A = D_A - (A + A')/2`` without forming ``L_A``."""
    return symmetric_degree(A)[:, None] * Y - 0.5 * (A @ Y + A.T @ Y)


def laplacian_quadratic(A, Y: np.ndarray) -> float:
    """``Tr(Y' L_A Y) = 1/2 sum_ij A_ij ||Y_i - Y_j||^2`` over the non-zeros of ``A``."""
    coo = sp.coo_array(A)
    total = 0.0
    step = max(1, _CHUNK_ELEMENTS // max(1, Y.shape[1]))
    for start in range(0, coo.nnz, step):
        sl = slice(start, start + step)
        diff = Y[coo.row[sl]] - Y[coo.col[sl]]
        total += float(coo.data[sl] @ np.einsum("ij,ij->i", diff, diff))
    return 0.5 * total


def column_sq_norms(A) -> np.ndarray:
    """``||A_.j||^2`` of every column of a sparse graph."""
    A = sp.csc_array(A)
    cols = np.repeat(np.arange(A.shape[1]), np.diff(A.indptr))
    return np.bincount(cols, weights=A.data**2, minlength=A.shape[1])


def laplacian_matrix(A) -> sp.csr_array:
    """``L_A = D_A - (A + A')/2`` as a sparse matrix."""
    A = sp.csr_array(A)
    sym = 0.5 * (A + A.T)
    return sp.csr_array(sp.diags_array(symmetric_degree(A)) - sym)
