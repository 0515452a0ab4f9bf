"""The exact neighbour search on sparse rows (text, counts, 0-1 data): the neighbours of
the dense search without a dense copy of the data, checked against pairwise distances
computed here from the dense points."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from causefs.blocks.initialization.initial_graphs import (InitialFusedGraphBlock,
                                                          InitialGranularGraphsBlock)
from causefs.core.state import State
from causefs.model.problem import Problem
from causefs.numerics import neighbors
from causefs.numerics.adaptive_graphs import adaptive_graph
from causefs.plugins.registry import parts as registered_parts
from causefs.numerics.neighbors import (distinct_neighbors, exact_neighbors,
                                        half_squared_distances, search_points,
                                        nearest_candidates, nearest_given)


def pairwise_squares(D: np.ndarray) -> np.ndarray:
    """Every pair's squared distance of the dense rows ``D``, the diagonal +inf."""
    squares = ((D[:, None, :] - D[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(squares, np.inf)
    return squares


def assert_exact(D: np.ndarray, found: np.ndarray, k: int):
    """``found`` (n, k) lists k distinct others of every row, none farther than its
    k-th nearest."""
    n = D.shape[0]
    assert found.shape == (n, k)
    assert np.all(found != np.arange(n)[:, None])
    assert all(len(set(row)) == k for row in found.tolist())
    squares = pairwise_squares(D)
    kth = np.sort(squares, axis=1)[:, k - 1]
    assert np.all(np.take_along_axis(squares, found, axis=1) <= kth[:, None] * (1 + 1e-12))


def sparse_text(n=60, d=300, density=0.03, seed=0, binary=False):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr",
                  data_rvs=(lambda size: np.ones(size)) if binary else rng.random)
    return sp.csr_array(X)


@pytest.mark.parametrize("chunk", [2**21, 100, 1])
def test_sparse_rows_give_the_exact_neighbours_in_any_chunking(monkeypatch, chunk):
    monkeypatch.setattr(neighbors, "CHUNK_ELEMENTS", chunk)
    X = sparse_text()
    D = X.toarray()
    assert_exact(D, exact_neighbors(X, 5), 5)
    rows = np.array([4, 59, 0])
    found = exact_neighbors(X, 4, rows)
    squares = pairwise_squares(D)[rows]
    kth = np.sort(squares, axis=1)[:, 3]
    assert np.all(np.take_along_axis(squares, found, axis=1) <= kth[:, None] * (1 + 1e-12))


def test_on_0_1_data_the_sparse_search_finds_what_the_dense_one_finds():
    # integer squared distances are exact either way: the same candidates, in any order
    X = sparse_text(n=80, d=400, density=0.05, binary=True, seed=2)
    sparse_found = exact_neighbors(X, 6)
    dense_found = exact_neighbors(X.toarray(), 6)
    assert [set(a) for a in sparse_found.tolist()] == [set(b) for b in dense_found.tolist()]


@pytest.mark.parametrize("chunk", [2**21, 3])
def test_half_squared_distances_of_sparse_rows(monkeypatch, chunk):
    monkeypatch.setattr(neighbors, "CHUNK_ELEMENTS", chunk)
    X = sparse_text(n=30, d=50, density=0.2, seed=4)
    D = X.toarray()
    idx = np.array([[1, -1, 5], [0, 2, -1], [29, 28, 0]])
    rows = np.array([10, 20, 3])
    expected = np.array([[0.5 * np.sum((D[j] - D[i]) ** 2) if j >= 0 else np.inf
                          for j in row] for i, row in zip(rows, idx)])
    np.testing.assert_allclose(half_squared_distances(X, idx, rows), expected, rtol=1e-13)


# few distinct values in few columns, many of them zero: copies and ties everywhere
copied = st.integers(3, 40).flatmap(lambda n: st.tuples(
    arrays(np.float64, (n, 3), elements=st.sampled_from([0.0, -0.0, 0.0, 1.0, 2.5])),
    st.integers(1, n - 1)))


@settings(max_examples=150, deadline=None)
@given(case=copied)
def test_sparse_rows_with_copies_give_the_exact_neighbours(case):
    """Rows with copies (searched once per distinct row where most are copies) give
    exact neighbours whether zeros and -0.0 are stored entries or not."""
    D, k = case
    every_cell = sp.csr_array((D.ravel(), (np.repeat(np.arange(D.shape[0]), 3),
                                           np.tile(np.arange(3), D.shape[0]))),
                              shape=D.shape)  # zeros (and -0.0) stored as entries
    assert every_cell.nnz == D.size
    for rows in (sp.csr_array(D), every_cell):
        assert_exact(D, distinct_neighbors(rows, k, exact_neighbors), k)


def test_empty_documents_are_copies_of_each_other_lowest_index_first():
    # rows 0-8 empty (row 2 stores a 0.0 and row 5 a -0.0: still empty), 9 and 10 one
    # word, 11 two words
    rows = [2, 5, 9, 10, 11, 11]
    cols = [7, 8, 3, 3, 3, 4]
    values = [0.0, -0.0, 1.0, 1.0, 1.0, 1.0]
    X = sp.csr_array((values, (rows, cols)), shape=(12, 20))
    assert X.nnz == 6
    found = distinct_neighbors(X, 4, exact_neighbors)
    for i in range(9):  # nine empty rows: the four lowest-index others
        assert sorted(found[i]) == [j for j in range(9) if j != i][:4]
    # row 9: its copy (10), then 11 (distance 1) and two empty rows (distance 1) of 0-8
    assert 10 in found[9] and 9 in found[10]
    assert_exact(X.toarray(), found, 4)


def test_the_sparse_form_is_chosen_where_its_product_costs_less():
    rng = np.random.default_rng(0)
    wide = (rng.random((300, 5000)) < 0.01).astype(float)  # 1 % non-zeros, d >> cost
    assert sp.issparse(search_points(wide, "exact"))
    assert sp.issparse(search_points(sp.csc_array(wide), "exact"))
    half = (rng.random((300, 5000)) < 0.5).astype(float)  # half non-zeros: dense BLAS
    assert isinstance(search_points(half, "exact"), np.ndarray)
    assert isinstance(search_points(sp.csr_array(half), "exact"), np.ndarray)
    narrow = (rng.random((300, 64)) < 0.01).astype(float)  # d below the rows' cost
    assert isinstance(search_points(narrow, "exact"), np.ndarray)
    for algorithm in ("kd_tree", "brute", "ball_tree", "all"):
        points = search_points(sp.csr_array(wide), algorithm)  # the others take dense rows
        assert isinstance(points, np.ndarray) and points.dtype == np.float64
        np.testing.assert_array_equal(points, wide)
    assert search_points(wide.astype(np.int8), "kd_tree").dtype == np.float64
    # the rule as its constants state it, either side of the boundary
    n, d = 300, 5000
    nnz = (n * n * d - neighbors.SPARSE_ROW_COST * n * n) / neighbors.SPARSE_GRAM_SLOWDOWN
    per_feature = int(np.sqrt(nnz / d))  # the same count in every column
    for count, form in ((per_feature, sp.csr_array), (per_feature + 1, np.ndarray)):
        X = np.zeros((n, d))
        X[:count] = 1.0
        assert isinstance(search_points(X, "exact"), form)


def test_an_adaptive_graph_of_sparse_rows_is_the_graph_of_the_dense_ones():
    X = sparse_text(n=90, d=2000, density=0.01, seed=5)
    assert sp.issparse(search_points(X, "exact"))
    for algorithm in ("exact", "auto", "kd_tree"):
        S_sparse, gamma_sparse = adaptive_graph(X, 5, algorithm=algorithm)
        S_dense, gamma_dense = adaptive_graph(X.toarray(), 5, algorithm=algorithm)
        assert (S_sparse != S_dense).nnz == 0 or np.allclose(
            S_sparse.toarray(), S_dense.toarray(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(gamma_sparse, gamma_dense, rtol=1e-10)


def test_given_seeds_of_sparse_rows_are_rescored_and_completed_exactly():
    X = sparse_text(n=40, d=500, density=0.05, seed=6)
    D = X.toarray()
    seeds = np.tile(np.arange(1, 4), (40, 1))  # too few for most rows: completed exactly
    seeds[np.arange(1, 4), np.arange(3)] = -1
    sparse = nearest_given(X, seeds, 5)
    dense = nearest_given(D, seeds, 5)
    assert [set(a) for a in sparse.tolist()] == [set(b) for b in dense.tolist()]


def test_other_searches_get_dense_points(monkeypatch):
    X = sparse_text(n=400, d=6, density=0.3, seed=7)
    seen = []

    def tree(points, k):
        seen.append(type(points))
        return neighbors.tree_neighbors(points, k)

    monkeypatch.setitem(neighbors.EXACT_SEARCHES, "kd_tree", tree)
    adaptive_graph(X, 5, algorithm="kd_tree")
    assert seen and all(kind is np.ndarray for kind in seen)
    assert nearest_candidates(np.asarray(X.toarray()), 6, "kd_tree").shape == (400, 6)


@pytest.mark.parametrize("block", [InitialFusedGraphBlock, InitialGranularGraphsBlock])
def test_the_initial_graphs_of_sparse_data_search_sparse_rows(monkeypatch, block):
    """No dense copy of sparse data: the initial graphs' exact searches multiply CSR rows
    (data of 1 % non-zeros, 2000 features, two feature groups)."""
    X = sp.csc_array(sparse_text(n=120, d=2000, density=0.01, seed=8))
    problem = Problem(X=X, coding=np.zeros((120, 1)), n_clusters=2, n_neighbors=4,
                      fields=registered_parts().fields)
    state = State(problem, groups=np.arange(2000) % 2)
    seen = []
    search = neighbors.EXACT_SEARCHES["exact"]

    def exact(points, k):
        seen.append(sp.issparse(points))
        return search(points, k)

    monkeypatch.setitem(neighbors.EXACT_SEARCHES, "exact", exact)
    monkeypatch.setattr(neighbors, "CHUNK_ELEMENTS", 2**12)  # chunks far below X dense
    tracemalloc.start()
    try:
        block(neighbor_algorithm="exact").step(state)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seen and all(seen)
    assert peak < 0.25 * X.shape[0] * X.shape[1] * 8  # a dense copy of X: 1.9 MB


def test_a_fresh_approximate_search_of_sparse_rows_is_exact_without_a_dense_copy(monkeypatch):
    """Up to its exact limit the approximate search of a fresh graph is the exact one, on
    CSR rows; beyond it the HNSW index gets the rows dense (float32)."""
    X = sparse_text(n=120, d=2000, density=0.01, seed=9)
    points = search_points(X, "approximate")
    assert sp.issparse(points)
    found = nearest_candidates(points, 5, "approximate")
    assert_exact(X.toarray(), found, 5)
    indexed = []

    def hnsw(Y, k):
        indexed.append(Y)
        return neighbors.exact_neighbors(Y.toarray(), k)

    monkeypatch.setattr(neighbors, "_hnsw_neighbors", hnsw)
    monkeypatch.setattr(neighbors, "fresh_exact_limit", lambda dims: 10)
    found = nearest_candidates(points, 5, "approximate")
    assert len(indexed) == 1 and sp.issparse(indexed[0])  # _hnsw_neighbors densifies
    assert_exact(X.toarray(), found, 5)


def test_the_hnsw_index_takes_sparse_rows_as_their_dense_float32_values(monkeypatch):
    faiss = pytest.importorskip("faiss")
    added = []
    original = faiss.IndexHNSWFlat

    class Spy(original):
        def add(self, data):
            added.append(np.array(data))
            return super().add(data)

    monkeypatch.setattr(faiss, "IndexHNSWFlat", Spy)
    X = sparse_text(n=60, d=300, density=0.05, seed=10)
    neighbors._hnsw_neighbors(X, 5)
    assert added[0].dtype == np.float32
    np.testing.assert_array_equal(added[0], X.toarray().astype(np.float32))


def test_copies_are_found_whatever_the_rows_store_and_the_input_is_left_as_it_was():
    """Rows equal in value are copies though stored differently (column order, a value
    split over duplicate entries, stored zeros); integer counts work as their floats; the
    caller's matrix is not touched."""
    # rows 0-3 equal [2, 0, 1, 0]: in order; reversed; 2 as 1 + 1; with a stored zero
    data = [2, 1, 1, 2, 1, 1, 1, 2, 1, 0, 5, 5]
    cols = [0, 2, 2, 0, 0, 0, 2, 0, 2, 1, 3, 3]
    rows = [0, 0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 5]
    counts, floats = (sp.csr_array((np.array(data, dtype=kind), np.array(cols),
                                    np.array([0, 2, 4, 7, 10, 11, 12])), shape=(6, 4))
                      for kind in (np.int64, np.float64))
    before = [(m.data.copy(), m.indices.copy(), m.indptr.copy()) for m in (counts, floats)]
    found = distinct_neighbors(counts, 3, exact_neighbors)
    for i in range(4):  # the three other copies
        assert sorted(found[i]) == [j for j in range(4) if j != i]
    assert 5 in found[4] and 4 in found[5]
    np.testing.assert_array_equal(found, distinct_neighbors(floats, 3, exact_neighbors))
    for kept, matrix in zip(before, (counts, floats)):
        for array, now in zip(kept, (matrix.data, matrix.indices, matrix.indptr)):
            np.testing.assert_array_equal(array, now)
    assert counts.dtype == np.int64 and not floats.has_canonical_format


def test_large_integer_counts_are_searched_as_floats():
    # squares of counts of 4e9 pass int64's range: the search must not do them in ints
    big = 4_000_000_000
    D = np.array([[big, 0, 0], [big, 0, 0], [0, big, 0], [0, big, 1], [0, 0, big],
                  [big, big, 0]], dtype=np.int64)
    found = distinct_neighbors(sp.csr_array(D), 2, exact_neighbors)
    assert_exact(D.astype(float), found, 2)


def test_at_an_exact_tie_of_the_two_costs_the_rows_stay_dense():
    # n = 150, d = 720, c non-zeros in every feature: 100 d c^2 + 400 n^2 = n^2 d at c = 10
    n, d = 150, 720
    for count, form in ((10, np.ndarray), (9, sp.csr_array)):
        X = np.zeros((n, d))
        X[:count] = 1.0
        assert isinstance(search_points(X, "exact"), form)


@pytest.mark.parametrize("d", [3, 2000])
def test_integer_counts_beyond_int64s_squares_give_the_graph_of_their_floats(d):
    """Counts of 4e9, held as int64 (sparse, kept sparse at 2000 features, made dense at
    3): the search and the distances are done in floats, as for the same data as float."""
    big = 4_000_000_000
    rng = np.random.default_rng(11)
    D = np.zeros((30, d), dtype=np.int64)
    D[np.arange(30), rng.integers(0, 3, 30)] = big
    D[np.arange(30), rng.integers(0, d, 30)] += rng.integers(1, 4, 30)
    counts = sp.csr_array(D)
    assert sp.issparse(search_points(counts, "exact")) == (d > 3)
    assert search_points(counts, "exact").dtype == np.float64
    graph, gamma = adaptive_graph(counts, 4, algorithm="exact")
    reference, reference_gamma = adaptive_graph(D.astype(float), 4, algorithm="exact")
    np.testing.assert_array_equal(graph.toarray(), reference.toarray())
    np.testing.assert_array_equal(gamma, reference_gamma)
