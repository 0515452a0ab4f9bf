"""The candidate searches of :mod:`causefs.numerics.neighbors` against brute force
written here (every pair's distance, sorted; the local join listed point by point; the
candidate table as sets of pairs) and the rules the module's comments state for
``neighbor_algorithm="auto"``. Points are random and continuous (no ties) but where a
test says otherwise (copies, whose distances tie by the dozen)."""

import logging

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial import cKDTree

from causefs.numerics import neighbors
from causefs.numerics.neighbors import (EXACT_N, FRESH_EXACT_N, LOW_DIMS, SMALL_TREE_DIMS,
                                        SMALL_TREE_N, TREE_DIMS, TREE_N,
                                        candidate_table, exact_neighbors,
                                        half_squared_distances, nearest_candidates,
                                        nearest_given, refine_neighbors, resolve_algorithm,
                                        tree_neighbors, without_self)


def brute_knn(Y, k, rows=None):
    """Each row's k nearest other points, nearest first, from every pair's distance."""
    rows = range(Y.shape[0]) if rows is None else rows
    out = []
    for i in rows:
        others = [j for j in range(Y.shape[0]) if j != i]
        out.append(sorted(others, key=lambda j: float(np.sum((Y[i] - Y[j]) ** 2)))[:k])
    return np.array(out)


def same_sets(found, expected):
    assert found.shape == expected.shape
    return all(set(a) == set(b) for a, b in zip(found.tolist(), expected.tolist()))


@pytest.fixture
def points():
    return np.random.default_rng(0).standard_normal((40, 3))


@pytest.mark.parametrize("chunk", [2**21, 100, 1])
def test_exact_neighbors_are_the_brute_force_ones_in_any_chunking(monkeypatch, points, chunk):
    """Chunks of ``CHUNK_ELEMENTS // n`` rows (at least one): a chunk of 2 and of 1 row
    search as one chunk does, and ``points`` restricts the search to those rows."""
    monkeypatch.setattr(neighbors, "CHUNK_ELEMENTS", chunk)
    assert same_sets(exact_neighbors(points, 5), brute_knn(points, 5))
    rows = np.array([3, 17, 39, 0])
    found = exact_neighbors(points, 4, rows)
    assert found.dtype == np.int64
    assert same_sets(found, brute_knn(points, 4, rows))


def test_tree_neighbors_are_the_brute_force_ones(points):
    assert same_sets(tree_neighbors(points, 6), brute_knn(points, 6))
    # every other point: the tree lists n points, less the point itself
    assert same_sets(tree_neighbors(points[:7], 6), brute_knn(points[:7], 6))


def test_without_self_drops_the_point_wherever_listed_else_the_last_column():
    found = np.array([[0, 4, 5],   # itself first
                      [2, 1, 3],   # itself in the middle
                      [0, 1, 4],   # not listed (copies came first): the last column goes
                      [1, 2, 3]])  # itself last
    np.testing.assert_array_equal(without_self(found), [[4, 5], [2, 3], [0, 1], [1, 2]])


@pytest.mark.parametrize("chunk", [2**21, 7])
def test_half_squared_distances_of_the_listed_pairs(monkeypatch, points, chunk):
    monkeypatch.setattr(neighbors, "CHUNK_ELEMENTS", chunk)
    idx = np.array([[1, -1, 5], [0, 2, -1], [39, 38, 0]])
    expected = np.array([[0.5 * np.sum((points[j] - points[i]) ** 2) if j >= 0 else np.inf
                          for j in row] for i, row in enumerate(idx)])
    np.testing.assert_allclose(half_squared_distances(points, idx), expected, rtol=1e-14)
    rows = np.array([10, 20, 30])
    expected = np.array([[0.5 * np.sum((points[j] - points[i]) ** 2) if j >= 0 else np.inf
                          for j in row] for i, row in zip(rows, idx)])
    np.testing.assert_allclose(half_squared_distances(points, idx, rows), expected,
                               rtol=1e-14)


def reference_join(Y, best, c):
    """One round of the local join, point by point: the candidates of i are its
    neighbours, the first c points listing it (by index), and the neighbours of all
    those; the c nearest others of i among them."""
    n = Y.shape[0]
    reverse = [[j for j in range(n) if i in best[j]][:c] for i in range(n)]
    out = []
    for i in range(n):
        near = [j for j in best[i] if j >= 0] + reverse[i]
        pool = set(near) | {h for j in near for h in best[j] if h >= 0}
        pool.discard(i)
        out.append(sorted(pool, key=lambda j: float(np.sum((Y[i] - Y[j]) ** 2)))[:c])
    return out


@pytest.mark.parametrize("rounds", [1, 2])
def test_refine_neighbors_is_the_local_join_round_after_round(monkeypatch, rounds):
    rng = np.random.default_rng(1)
    Y = rng.standard_normal((30, 2))
    c = 3
    seeds = np.array([rng.choice([j for j in range(30) if j != i], 5, replace=False)
                      for i in range(30)])
    best = [sorted([j for j in row], key=lambda j: float(np.sum((Y[i] - Y[j]) ** 2)))[:c]
            for i, row in enumerate(seeds)]
    for _ in range(rounds):
        best = reference_join(Y, best, c)
    for chunk in (2**21, 1):  # blocks of one row each, too
        monkeypatch.setattr(neighbors, "CHUNK_ELEMENTS", chunk)
        found = refine_neighbors(Y, seeds, c, rounds=rounds)
        assert same_sets(found, np.array(best))
    assert same_sets(refine_neighbors(Y, seeds, c), np.array(reference_join(
        Y, [sorted(row, key=lambda j: float(np.sum((Y[i] - Y[j]) ** 2)))[:c]
            for i, row in enumerate(seeds.tolist())], c)))  # one round by default


def test_the_local_search_runs_its_blocks_on_the_wide_threads_and_finds_the_same(
        monkeypatch):
    """The blocks of rows of a local search are independent: with two threads to widen
    to, two run at once (a barrier that fails unless they do); with one, in turn in the
    caller's thread; the rows found are the same, to the column."""
    import threading

    from causefs.numerics import threads as fit_threads_module

    rng = np.random.default_rng(21)
    Y = rng.standard_normal((300, 3))
    seeds = np.array([rng.choice(300, 8, replace=False) for _ in range(300)])
    real = neighbors._nearest_of
    both = threading.Barrier(2, timeout=30)
    calls = []

    def spy(*args):
        calls.append(threading.get_ident())
        if wide == 2 and len(calls) <= 2:
            both.wait()  # the first two blocks are searched at once
        return real(*args)

    monkeypatch.setattr(neighbors, "_nearest_of", spy)
    monkeypatch.setattr(neighbors, "CHUNK_ELEMENTS", 4 * 16 * 40)  # 40 rows a block
    monkeypatch.setattr(fit_threads_module._THREADS, "caller", 2)
    found = {}
    for wide in (1, 2):
        calls.clear()
        monkeypatch.setattr(neighbors, "wide_threads", lambda wide=wide: wide)
        found[wide] = (refine_neighbors(Y, seeds, 3, rounds=2), nearest_given(Y, seeds, 3))
        # blocks of 80 rows for the 8 seeds a row, of 26 for a join's 24 candidates:
        # the seeds, two joins, the given seeds
        assert len(calls) == 4 + 2 * 12 + 4
        assert (threading.get_ident() in calls) == (wide == 1)
    for one, two in zip(found[1], found[2]):
        np.testing.assert_array_equal(one, two)


def test_a_local_search_of_no_points_finds_no_rows():
    none, seeds = np.zeros((0, 3)), np.zeros((0, 5), dtype=np.int64)
    for found in (refine_neighbors(none, seeds, 3), nearest_given(none, seeds, 3)):
        assert found.shape == (0, 3) and found.dtype == np.int64


def test_nearest_given_keeps_the_nearest_seeds_and_completes_short_rows(points):
    """Each row's c nearest among its seeds (itself, repeats and -1 dropped); a row
    left with fewer than c seeds gets its exact neighbours."""
    seeds = np.array([[(i + s) % 40 for s in (0, 1, 1, 2, 3, 5, 8, -40)] for i in range(40)])
    seeds[:, -1] = -1
    seeds[7] = [7, 8, 8, -1, -1, -1, -1, -1]  # one seed but itself: completed
    found = nearest_given(points, seeds, 3)
    for i in range(40):
        listed = {int(j) for j in seeds[i] if j >= 0 and j != i}
        if len(listed) >= 3:
            expected = sorted(listed, key=lambda j: float(np.sum((points[i] - points[j]) ** 2)))
            assert set(found[i]) == set(expected[:3]), i
        else:
            assert set(found[i]) == set(brute_knn(points, 3, [i])[0])
    # seeds narrower than c are padded, then completed
    assert same_sets(nearest_given(points, seeds[:, 1:3], 4), brute_knn(points, 4))


@pytest.mark.parametrize("n, dims, expected", [
    (EXACT_N, 500, "exact"),                      # up to EXACT_N points: brute force
    (EXACT_N, SMALL_TREE_DIMS + 1, "exact"),
    (EXACT_N, 2, "kd_tree"),                      # ... but a tree for few dimensions
    (SMALL_TREE_N, SMALL_TREE_DIMS, "kd_tree"),   # from SMALL_TREE_N points
    (SMALL_TREE_N - 1, 2, "exact"),
    (EXACT_N + 1, LOW_DIMS, "kd_tree"),           # few dimensions: a tree at any n
    (10**7, LOW_DIMS, "kd_tree"),
    (EXACT_N + 1, TREE_DIMS, "kd_tree"),          # up to TREE_DIMS and TREE_N: a tree
    (TREE_N, TREE_DIMS, "kd_tree"),
    (TREE_N, TREE_DIMS + 1, "approximate"),       # many dimensions beyond FRESH_EXACT_N
    (TREE_N + 1, LOW_DIMS + 1, "approximate"),
    (FRESH_EXACT_N, TREE_DIMS + 1, "exact"),      # ... brute force up to it
    (FRESH_EXACT_N + 1, TREE_DIMS + 1, "approximate"),
])
def test_auto_resolves_as_the_module_documents(n, dims, expected):
    assert resolve_algorithm("auto", n, dims) == expected
    for algorithm in ("approximate", "exact", "brute", "kd_tree", "ball_tree", "all"):
        assert resolve_algorithm(algorithm, n, dims) == algorithm


def test_an_unknown_search_is_refused_with_its_name():
    with pytest.raises(ValueError, match=r"^neighbor_algorithm='knn': must be one of 'auto'"):
        resolve_algorithm("knn", 10, 2)


@pytest.mark.parametrize("algorithm", ["exact", "kd_tree", "brute", "ball_tree", "auto",
                                       "approximate"])
def test_every_search_finds_the_exact_neighbours_of_few_points(points, algorithm):
    for c in (4, 5, 7):
        found = nearest_candidates(points, c, algorithm)
        assert same_sets(found, brute_knn(points, c))


def test_all_lists_every_other_point_in_order(points):
    found = nearest_candidates(points[:6], 5, "all")
    np.testing.assert_array_equal(found, [[j for j in range(6) if j != i] for i in range(6)])


def test_the_approximate_search_starts_from_the_warm_graphs(monkeypatch):
    """With warm graphs of at least c entries a column, the local join from their
    supports (column j: the neighbours of j); with fewer, a fresh search (exact up to
    FRESH_EXACT_N points); no HNSW index below FRESH_EXACT_N points."""
    rng = np.random.default_rng(2)
    Y = rng.standard_normal((50, 2))
    monkeypatch.setattr(neighbors, "_hnsw_neighbors", None)
    # a warm graph whose column j lists j + 1 .. j + 4 (mod n): the seeds of j
    cols = np.repeat(np.arange(50), 4)
    rows = (cols + np.tile(np.arange(1, 5), 50)) % 50
    warm = sp.csc_array((np.ones(200), (rows, cols)), shape=(50, 50))
    found = nearest_candidates(Y, 4, "approximate", warm=[warm])
    seeds = rows.reshape(50, 4)
    best = [sorted(row, key=lambda j: float(np.sum((Y[i] - Y[j]) ** 2)))[:4]
            for i, row in enumerate(seeds.tolist())]
    assert same_sets(found, np.array(reference_join(Y, best, 4)))
    # too few seeds a column for 5 candidates: the exact search
    assert same_sets(nearest_candidates(Y, 5, "approximate", warm=[warm]), brute_knn(Y, 5))
    assert same_sets(nearest_candidates(Y, 5, "approximate", warm=[]), brute_knn(Y, 5))


def test_a_fresh_approximate_search_of_many_points_builds_an_hnsw_index(monkeypatch):
    """Beyond FRESH_EXACT_N points without warm graphs: the HNSW candidates (c + 1 a
    point, itself among them) refined by one round of local join, up to SHARDED_N
    points; beyond, each point's c nearest of the shards' candidates, without the join."""
    rng = np.random.default_rng(3)
    Y = rng.standard_normal((FRESH_EXACT_N + 1, 3))
    asked, rounds = [], []
    real_hnsw, real_refine = neighbors._hnsw_neighbors, neighbors.refine_neighbors

    def hnsw(Y, c):
        asked.append(c)
        return real_hnsw(Y, c)

    def refine(Y, seeds, c, rounds_=None, **kwargs):
        rounds.append(kwargs.get("rounds", rounds_))
        return real_refine(Y, seeds, c, **kwargs)

    monkeypatch.setattr(neighbors, "_hnsw_neighbors", hnsw)
    monkeypatch.setattr(neighbors, "refine_neighbors", refine)
    rows = np.arange(0, Y.shape[0], 250)
    truth = brute_knn(Y, 4, rows)
    for sharded_n, joined in ((FRESH_EXACT_N + 1, [1]), (FRESH_EXACT_N, [])):
        monkeypatch.setattr(neighbors, "SHARDED_N", sharded_n)
        asked.clear(), rounds.clear()
        found = nearest_candidates(Y, 4, "approximate")
        assert asked == [4] and rounds == joined
        recall = np.mean([len(set(found[i]) & set(t)) / 4 for i, t in zip(rows, truth)])
        assert recall > 0.95 and (found >= 0).all()
        assert (found != np.arange(len(Y))[:, None]).all()


def test_the_hnsw_shards_are_interleaved_and_every_point_is_searched_in_each():
    """Beyond SHARDED_N points, HNSW_SHARDS = 2 indexes, of the even and of the odd rows:
    each point's first c + 1
    columns are what an index of the even rows alone returns for it, the next c + 1 an
    index of the odd rows (indices mapped back to the rows); and nearly every true
    neighbour is among the 2 (c + 1)."""
    faiss = pytest.importorskip("faiss")
    assert neighbors.HNSW_SHARDS == 2
    Y = np.random.default_rng(14).standard_normal((3000, 3))
    c = 3
    assert neighbors._hnsw_neighbors(Y, c).shape == (3000, c + 1)  # up to SHARDED_N: one
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(neighbors, "SHARDED_N", 3000)
        assert neighbors._hnsw_neighbors(Y, c).shape == (3000, c + 1)
        patch.setattr(neighbors, "SHARDED_N", 2999)
        found = neighbors._hnsw_neighbors(Y, c)
    assert found.shape == (3000, 2 * (c + 1))
    outer = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        for shard, columns in ((0, slice(0, c + 1)), (1, slice(c + 1, None))):
            members = np.arange(shard, 3000, 2)
            index = faiss.IndexHNSWFlat(3, 32)
            index.hnsw.efConstruction = 64
            index.add(Y[members].astype(np.float32))
            index.hnsw.efSearch = 64
            _, local = index.search(Y.astype(np.float32), c + 1)
            np.testing.assert_array_equal(found[:, columns], members[local])
    finally:
        faiss.omp_set_num_threads(outer)
    rows = range(0, 3000, 30)
    best = neighbors.nearest_given(Y, found, c)
    truth = brute_knn(Y, c, rows)
    assert np.mean([len(set(best[i]) & set(t)) / c for i, t in zip(rows, truth)]) > 0.95


def test_a_shard_of_fewer_points_than_asked_pads_with_minus_one(monkeypatch):
    """Ten points in two shards of five, 7 candidates asked of each: a shard returns its
    five points and two -1 (faiss's padding, kept as the padding of the merged lists)."""
    pytest.importorskip("faiss")
    monkeypatch.setattr(neighbors, "SHARDED_N", 5)
    Y = np.random.default_rng(16).standard_normal((10, 2))
    found = neighbors._hnsw_neighbors(Y, 6)
    assert found.shape == (10, 14)
    for shard, columns in ((0, slice(0, 7)), (1, slice(7, None))):
        for row in found[:, columns]:
            assert sorted(row.tolist()) == [-1, -1] + list(range(shard, 10, 2))


def test_the_hnsw_index_is_built_quietly_on_one_thread_and_both_are_restored():
    faiss = pytest.importorskip("faiss")
    Y = np.random.default_rng(4).standard_normal((300, 3))
    log = logging.getLogger("faiss.loader")
    log.setLevel(logging.DEBUG)
    threads = faiss.omp_get_max_threads()
    seen, searched = [], []
    real = faiss.IndexHNSWFlat

    class Spy(real):
        def add(self, x):
            seen.append((faiss.omp_get_max_threads(), log.level))
            return super().add(x)

        def search(self, x, k):
            searched.append(faiss.omp_get_max_threads())
            return super().search(x, k)

    faiss.IndexHNSWFlat = Spy
    try:
        found = neighbors._hnsw_neighbors(Y, 5)
    finally:
        faiss.IndexHNSWFlat = real
    assert [inside for inside, _ in seen] == [1]  # one thread while the index is built
    assert searched == [1]  # outside a fit the caller allows one thread (next test: more)
    assert faiss.omp_get_max_threads() == threads and log.level == logging.DEBUG
    assert found.shape == (300, 6)
    # an HNSW index of 300 points in 3 dimensions finds (nearly) every neighbour
    truth = brute_knn(Y, 5, range(0, 300, 10))
    recall = np.mean([len(set(found[i]) & set(t)) / 5
                      for i, t in zip(range(0, 300, 10), truth)])
    assert recall > 0.95
    log.setLevel(logging.NOTSET)


def test_quiet_logger_drops_info_and_restores_the_level():
    log = logging.getLogger("causefs.test.quiet")
    log.setLevel(logging.DEBUG)
    with neighbors._quiet_logger("causefs.test.quiet"):
        assert log.level == logging.WARNING
    assert log.level == logging.DEBUG
    log.setLevel(logging.ERROR)
    with neighbors._quiet_logger("causefs.test.quiet"):
        assert log.level == logging.ERROR  # a stricter level is kept
    log.setLevel(logging.NOTSET)


def test_the_candidate_table_is_the_union_of_the_searches_and_the_supports():
    """Column j of the table: the sorted union of row j of the search (-1 dropped) and
    the supports of column j of each graph; each graph's value there (0 off its
    support)."""
    n = 6
    cand = np.array([[1, 2], [0, -1], [3, 4], [-1, -1], [5, 0], [4, 3]])
    rng = np.random.default_rng(5)
    dense_graphs = []
    for density in (0.3, 0.5):
        A = np.where(rng.random((n, n)) < density, rng.random((n, n)) + 0.1, 0.0)
        np.fill_diagonal(A, 0.0)
        dense_graphs.append(A)
    table, values = candidate_table(cand, [sp.csc_array(A) for A in dense_graphs])
    width = 0
    for j in range(n):
        expected = sorted({int(i) for i in cand[j] if i >= 0}
                          | {i for A in dense_graphs for i in range(n) if A[i, j] != 0})
        width = max(width, len(expected))
        listed = [int(i) for i in table[j] if i >= 0]
        assert listed == expected, j
        assert (table[j, len(listed):] == -1).all()
        for A, value in zip(dense_graphs, values):
            np.testing.assert_array_equal(value[j, :len(listed)], A[listed, j])
            assert (value[j, len(listed):] == 0).all()
    assert table.shape == (n, width) and table.dtype == np.int64
    # no graphs: the search's candidates, sorted
    table, values = candidate_table(cand, [])
    assert values == []
    assert [[int(i) for i in row if i >= 0] for row in table] \
        == [sorted(int(i) for i in row if i >= 0) for row in cand]



def test_the_candidate_table_keeps_stored_zeros_and_sums_repeated_entries():
    """A graph's stored entries are its support, zeros included; an entry stored twice
    in a column (a csc array as given, not summed) counts once in the table and its
    values add, as in the graph's dense form. Columns of unequal lengths, a column
    without entries, a row of the search all -1."""
    n = 5
    # column j stores (row, value): column 0 two entries, one a stored zero; column 1 a
    # repeated row; column 2 nothing; columns 3 and 4 one each
    stored = {0: [(3, 0.0), (1, 0.5)], 1: [(4, 0.25), (4, 0.5)], 2: [], 3: [(0, 1.0)],
              4: [(2, 2.0)]}
    indptr = np.cumsum([0] + [len(stored[j]) for j in range(n)])
    graph = sp.csc_array((np.array([v for j in range(n) for _, v in stored[j]]),
                          np.array([i for j in range(n) for i, _ in stored[j]]), indptr),
                         shape=(n, n))
    cand = np.array([[2, -1], [-1, -1], [0, 1], [4, 0], [3, 3]])
    table, (values,) = candidate_table(cand, [graph])
    expected = [[1, 2, 3], [4], [0, 1], [0, 4], [2, 3]]
    assert table.shape == (n, 3)
    for j in range(n):
        assert [int(i) for i in table[j] if i >= 0] == expected[j]
        dense_column = {i: 0.0 for i in expected[j]}
        for i, v in stored[j]:
            dense_column[i] += v
        np.testing.assert_array_equal(values[j, :len(expected[j])],
                                      [dense_column[i] for i in expected[j]])
        assert (values[j, len(expected[j]):] == 0).all()
    # nothing listed: a table of no columns; no points: no rows
    table, (values,) = candidate_table(np.full((n, 2), -1), [sp.csc_array((n, n))])
    assert table.shape == values.shape == (n, 0)
    table, (values,) = candidate_table(np.zeros((0, 2), dtype=np.int64),
                                       [sp.csc_array((0, 0))])
    assert table.shape == values.shape == (0, 0)


# ------------------------------------------------- neighbours given to a fit ----------

def ring_graph(n, k, extra=()):
    """Row i lists i+1 .. i+k (mod n), as a csr array, and (i, j) pairs of ``extra``."""
    rows = list(np.repeat(np.arange(n), k)) + [i for i, _ in extra]
    cols = list((np.repeat(np.arange(n), k) + np.tile(np.arange(1, k + 1), n)) % n) \
        + [j for _, j in extra]
    return sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(n, n))


def raw_csr(rows, n):
    """A csr array whose row i stores ``rows[i]`` as given: repeats, the diagonal and
    explicit zeros (value 0 for column 0 of each row) kept."""
    indptr = np.r_[0, np.cumsum([len(row) for row in rows])]
    indices = np.array([j for row in rows for j in row])
    data = np.array([0.0 if position == 0 else 1.0 for row in rows
                     for position in range(len(row))])
    return sp.csr_array((data, indices, indptr), shape=(n, n))


ROWS = [[1, 2, 3], [0, 0, 2, 5, 1], [2, 3, 4, 6, 6], [4, 5, 6], [5, 6, 0], [6, 0, 1],
        [0, 1, 2, 3]]


def test_a_graph_becomes_the_table_of_its_rows_less_the_diagonal_padded():
    """Row i of the table: the distinct columns stored in row i but i itself (stored
    entries count, explicit zeros too, their values do not), -1 after; a row of exactly
    k + 1 others is enough."""
    from causefs.numerics.given_neighbors import check_neighbors

    table = check_neighbors(raw_csr(ROWS, 7), 7, 2)
    expected = [sorted(set(row) - {i}) for i, row in enumerate(ROWS)]
    width = max(len(row) for row in expected)
    assert table.dtype == np.int64 and table.shape == (7, width)
    for i, row in enumerate(expected):
        assert sorted(table[i, :len(row)].tolist()) == row
        assert (table[i, len(row):] == -1).all()


def test_the_callers_graph_is_left_as_it_was():
    """The check sums duplicate entries in a copy, never in the caller's graph."""
    from causefs.numerics.given_neighbors import check_neighbors

    graph = raw_csr(ROWS, 7)
    before = (graph.data.copy(), graph.indices.copy(), graph.indptr.copy())
    check_neighbors(graph, 7, 2)
    for array, was in zip((graph.data, graph.indices, graph.indptr), before):
        np.testing.assert_array_equal(array, was)


def test_a_short_row_is_refused_naming_the_first_and_its_count():
    from causefs.core.validation import InvalidParameterError
    from causefs.numerics.given_neighbors import check_neighbors

    graph = ring_graph(8, 4).tolil()
    graph[3, 5:] = 0  # rows 3 and 5 keep 1 and 2 of their 4 neighbours
    graph[3, :3] = 0
    graph[5, 6:] = 0
    graph[5, :1] = 0
    graph = sp.csr_array(graph.tocsr())
    graph.eliminate_zeros()
    with pytest.raises(InvalidParameterError, match=r"^" + re_escape(
            "neighbors: 2 rows of the kNN graph (the first: sample 3, 1 neighbours) list "
            "fewer than n_neighbors + 1 = 4 other samples (the closed form uses the "
            "(k+1)-th neighbour): build it with at least 4 neighbours a sample") + "$"):
        check_neighbors(graph, 8, 3)
    # the last row empty: refused too
    empty_last = ring_graph(8, 4).tolil()
    empty_last[7, :] = 0
    empty_last = sp.csr_array(empty_last.tocsr())
    empty_last.eliminate_zeros()
    with pytest.raises(InvalidParameterError, match=r"\(the first: sample 7, 0 neighbours\)"):
        check_neighbors(empty_last, 8, 3)
    check_neighbors(ring_graph(8, 4), 8, 3)  # exactly k + 1: enough


def re_escape(text):
    import re

    return re.escape(text)


class FitOnly:
    def fit(self, X):
        return self


def test_an_object_without_kneighbors_is_no_search():
    from causefs.core.validation import InvalidParameterError
    from causefs.numerics.given_neighbors import check_neighbors

    for thing in (FitOnly(), type("KneighborsOnly", (), {"kneighbors": lambda self: 0})()):
        with pytest.raises(InvalidParameterError, match="^" + re_escape(
                "neighbors must be a sparse (n_samples, n_samples) kNN graph (row i: the "
                "neighbours of sample i, as sklearn.neighbors.kneighbors_graph makes it) or "
                "an object with scikit-learn's NearestNeighbors interface (fit, kneighbors); "
                f"got {type(thing).__name__}") + "$"):
            check_neighbors(thing, 10, 2)


class RecordingSearch:
    """A search object that records how it is called and answers by brute force."""

    def __init__(self, answer=None):
        self.calls, self.answer = [], answer

    def fit(self, X):
        self.fitted = X
        return self

    def kneighbors(self, X, n_neighbors, return_distance=True):
        self.calls.append((X, n_neighbors, return_distance))
        if self.answer is not None:
            return self.answer
        return np.array([[i] + list(brute_knn(X, n_neighbors - 1, [i])[0])
                         for i in range(X.shape[0])])


def test_a_search_is_fitted_and_queried_with_the_points_for_indices(points):
    from causefs.numerics.given_neighbors import check_neighbors, given_candidates

    search = RecordingSearch()
    found = given_candidates(check_neighbors(search, 40, 3), points, 4)
    assert search.fitted is points
    [(X, n_neighbors, return_distance)] = search.calls
    assert X is points and n_neighbors == 5 and return_distance is False
    assert same_sets(found, brute_knn(points, 4))


def test_a_search_listing_a_sample_beyond_the_last_is_refused_with_what_it_gave(points):
    from causefs.core.validation import InvalidParameterError
    from causefs.numerics.given_neighbors import check_neighbors, given_candidates

    answer = np.tile(np.arange(5), (40, 1))
    answer[3, 2] = 40  # one index past the last sample
    with pytest.raises(InvalidParameterError, match="^" + re_escape(
            "neighbors: RecordingSearch.kneighbors(X, n_neighbors=5, return_distance=False) "
            "must return an (40, 5) array of sample indices, got int64 of shape (40, 5)")):
        given_candidates(check_neighbors(RecordingSearch(answer), 40, 3), points, 4)
    answer[3, 2] = 39  # the last sample is a sample
    assert given_candidates(RecordingSearch(answer), points, 4).shape == (40, 4)


def test_the_hnsw_search_runs_on_the_wide_threads_and_finds_the_same(monkeypatch):
    """The index is built on one thread and searched on the threads a fit may widen to;
    every query is searched alone, so two threads find what one finds."""
    faiss = pytest.importorskip("faiss")
    Y = np.random.default_rng(12).standard_normal((3000, 8))
    real = faiss.IndexHNSWFlat
    searched = []

    class Spy(real):
        def search(self, x, k):
            searched.append(faiss.omp_get_max_threads())
            return super().search(x, k)

    found = {}
    monkeypatch.setattr(faiss, "IndexHNSWFlat", Spy)
    for threads in (1, 2):
        monkeypatch.setattr(neighbors, "wide_threads", lambda threads=threads: threads)
        found[threads] = neighbors._hnsw_neighbors(Y, 6)
    assert searched == [1, 2]
    np.testing.assert_array_equal(found[1], found[2])


def test_the_hnsw_shards_are_built_side_by_side_each_on_one_thread(monkeypatch):
    """With two threads to widen to, the shards' indexes are built on two threads at
    once, each with one OpenMP thread (a new thread starts from the process's default,
    not from the caller's setting); with one (the caller allows two, but a core is busy
    elsewhere), one after the other in the caller's thread; and the candidates are the
    same: the graph does not depend on the threads."""
    import threading

    from causefs.numerics import threads as fit_threads_module

    faiss = pytest.importorskip("faiss")
    Y = np.random.default_rng(15).standard_normal((4000, 6))
    real = faiss.IndexHNSWFlat
    added = []
    both = threading.Barrier(2, timeout=30)

    class Spy(real):
        def add(self, x):
            added.append((threading.get_ident(), faiss.omp_get_max_threads()))
            if wide == 2:
                both.wait()  # both shards are being built at once
            return super().add(x)

    monkeypatch.setattr(faiss, "IndexHNSWFlat", Spy)
    monkeypatch.setattr(neighbors, "SHARDED_N", 3999)
    found = {}
    monkeypatch.setattr(fit_threads_module._THREADS, "caller", 2)
    for wide in (1, 2):
        monkeypatch.setattr(neighbors, "wide_threads", lambda wide=wide: wide)
        found[wide] = neighbors._hnsw_neighbors(Y, 5)
    assert [threads for _, threads in added] == [1] * 4
    assert {ident for ident, _ in added[:2]} == {threading.get_ident()}
    assert len({ident for ident, _ in added[2:]}) == 2
    np.testing.assert_array_equal(found[1], found[2])


def test_the_hnsw_search_silences_faiss_loader_while_importing_it(monkeypatch, caplog):
    """faiss logs the CPU builds it tried at INFO on ``faiss.loader`` when imported: the
    search drops those records (a user's INFO logging stays readable)."""
    import importlib

    from causefs.core import extras

    pytest.importorskip("faiss")
    real = importlib.import_module

    def importing(name, *args):
        logging.getLogger("faiss.loader").info("Loading faiss with AVX2 support.")
        logging.getLogger("faiss.other").info("kept")
        return real(name, *args)

    monkeypatch.setattr(extras.importlib, "import_module", importing)
    caplog.set_level(logging.INFO)
    neighbors._hnsw_neighbors(np.random.default_rng(6).standard_normal((50, 2)), 3)
    assert [r.name for r in caplog.records] == ["faiss.other"]


def test_without_faiss_the_hnsw_search_says_what_needs_it_and_how_to_install_it(monkeypatch):
    import importlib

    from causefs.core import extras
    from causefs.core.extras import MissingDependencyError

    real = importlib.import_module

    def missing(name, *args):
        if name == "faiss":
            raise ModuleNotFoundError("No module named 'faiss'", name="faiss")
        return real(name, *args)

    monkeypatch.setattr(extras.importlib, "import_module", missing)
    with pytest.raises(MissingDependencyError, match="^" + re_escape(
            "a fresh neighbour search of 10 points of 2 dimensions (neighbor_algorithm='auto' "
            "beyond 5,000 points of this many dimensions, beyond 10,000 of at most 32; 'exact' "
            "does without) "
            "needs 'faiss', which is not installed; the 'faiss' extra installs it: "
            "pip install \"causefs[faiss]\"") + "$"):
        neighbors._hnsw_neighbors(np.zeros((10, 2)), 3)


def test_points_that_differ_by_a_tiny_amount_are_no_copies():
    """Copies are rows of equal coordinates: 1e-20 and 0 are two points. Point 3 (at 0)
    has its copies 4 and 5 at distance 0, then the three points at 1e-20 (ties: by
    index); merged as one point they would give 0, 1, 2 first."""
    from causefs.numerics.neighbors import distinct_neighbors

    Y = np.array([1e-20] * 3 + [0.0] * 3 + [1.0] * 6)[:, None]
    for search in (exact_neighbors, tree_neighbors):
        found = distinct_neighbors(Y, 3, search)
        assert set(found[3]) == {4, 5, 0}, found[3]


def reversed_ties(Y, c):
    """A legitimate exact search that breaks distance ties by the larger index."""
    return np.array([sorted((j for j in range(len(Y)) if j != i),
                            key=lambda j: (float(np.sum((Y[i] - Y[j]) ** 2)), -j))[:c]
                     for i in range(len(Y))])


def test_at_the_distinct_share_the_copies_are_still_searched_once_ties_by_index():
    """Exactly DISTINCT_SHARE of the points distinct: the distinct search, whose ties
    between copies go by index whatever the search's (here the larger index first)."""
    from causefs.numerics.neighbors import DISTINCT_SHARE, distinct_neighbors

    assert DISTINCT_SHARE == 0.5
    Y = np.repeat([0.0, 10.0, 20.0, 30.0], 2)[:, None]  # 4 distinct of 8
    found = distinct_neighbors(Y, 2, reversed_ties)
    # point 0: its copy 1, then the copies 2 and 3 of 10: by index, 2
    assert [set(row) for row in found[:2]] == [{1, 2}, {0, 2}]
    Y = np.r_[Y[:, 0], 40.0][:, None]  # 5 of 9: the search itself
    assert set(distinct_neighbors(Y, 2, reversed_ties)[0]) == {1, 3}


def test_each_point_keeps_the_first_rows_that_list_it():
    """The reverse neighbours of a point listed by more than c rows: the first c rows by
    index (reproducible whatever the sort)."""
    best = np.array([[1, 2]] * 40)  # every row lists 1 and 2
    best[1] = [0, 2]
    best[2] = [0, 1]
    reverse = neighbors._reverse_neighbors(best)
    np.testing.assert_array_equal(reverse[1], [0, 2])
    np.testing.assert_array_equal(reverse[2], [0, 1])
    np.testing.assert_array_equal(reverse[0], [1, 2])
    assert (reverse[3:] == -1).all() and reverse.dtype == np.int64


def test_the_local_search_pads_rows_it_cannot_fill_with_minus_one():
    """Cliques of 3 points seeding a search of 4 candidates: every row finds its 2
    clique mates and nothing else; the rest is -1 (the caller completes it)."""
    Y = np.random.default_rng(7).standard_normal((12, 2))
    seeds = np.array([[j for j in range(3 * (i // 3), 3 * (i // 3) + 3) if j != i]
                      for i in range(12)])
    found = refine_neighbors(Y, seeds, 4)
    for i, row in enumerate(found):
        assert set(row[row >= 0]) == set(seeds[i])
        assert sorted(row.tolist())[:2] == [-1, -1]


def test_warm_seeds_that_leave_rows_short_are_completed_exactly():
    """A warm graph whose column 0 lists 4 points (so the seed table is 4 wide) and
    whose other columns list the 2 mates of their clique of 3: the local join leaves
    those rows short, and they get their exact neighbours."""
    rng = np.random.default_rng(8)
    Y = rng.standard_normal((30, 2))
    rows, cols = [1, 2, 3, 4], [0, 0, 0, 0]
    for j in range(3, 30):
        mates = [i for i in range(3 * (j // 3), 3 * (j // 3) + 3) if i != j]
        rows += mates
        cols += [j, j]
    warm = sp.csc_array((np.ones(len(rows)), (rows, cols)), shape=(30, 30))
    found = nearest_candidates(Y, 4, "approximate", warm=[warm])
    assert (found >= 0).all()
    for j in range(6, 30):  # cliques 6-8, ..., 27-29 reach nothing else (0-5 reach 0)
        assert set(found[j]) == set(brute_knn(Y, 4, [j])[0]), j


def test_rows_an_hnsw_search_leaves_short_are_completed_exactly(monkeypatch):
    """An HNSW index may return -1 for points it did not reach: those rows get their
    exact neighbours; at exactly FRESH_EXACT_N points no index is built."""
    Y = np.random.default_rng(9).standard_normal((FRESH_EXACT_N + 1, 2))
    monkeypatch.setattr(neighbors, "_hnsw_neighbors",
                        lambda Y, c: np.full((Y.shape[0], c + 1), -1, dtype=np.int64))
    found = nearest_candidates(Y, 3, "approximate")
    rows = [0, 1234, FRESH_EXACT_N]
    assert same_sets(found[rows], brute_knn(Y, 3, rows))
    monkeypatch.setattr(neighbors, "_hnsw_neighbors", None)
    found = nearest_candidates(Y[:FRESH_EXACT_N], 3, "approximate")
    assert same_sets(found[rows[:2]], brute_knn(Y[:FRESH_EXACT_N], 3, rows[:2]))


def test_many_copies_are_listed_lowest_index_first():
    """Hundreds of copies of three points: each point's candidates are its copies of
    lowest index (the docstring's tie rule), found however the copies are sorted."""
    from causefs.numerics.neighbors import distinct_neighbors

    values = np.random.default_rng(10).integers(0, 3, 300).astype(float)
    Y = values[:, None]
    for search in (exact_neighbors, tree_neighbors):
        found = distinct_neighbors(Y, 3, search)
        for i in range(300):
            copies = [j for j in range(300) if j != i and values[j] == values[i]][:3]
            assert set(found[i]) == set(copies), i


def test_the_fresh_exact_limit_is_raised_for_points_of_many_dimensions():
    """FRESH_EXACT_N points below FRESH_EXACT_DIMS = 1024 dimensions, FRESH_EXACT_MAX =
    12,000 from there."""
    from causefs.numerics.neighbors import fresh_exact_limit

    assert [fresh_exact_limit(p) for p in (1, 32, 256, 1023)] == [FRESH_EXACT_N] * 4
    assert [fresh_exact_limit(p) for p in (1024, 5000)] == [12_000] * 2


def test_a_fresh_search_of_many_dimensions_is_exact_up_to_its_limit(monkeypatch):
    """Beyond FRESH_EXACT_N points, points of 1024 dimensions are still searched by brute
    force up to fresh_exact_limit(1024) points (no HNSW index: the exact neighbours),
    and one point more builds the index; points of 1023 dimensions build it beyond
    FRESH_EXACT_N."""
    from causefs.numerics.neighbors import fresh_exact_limit

    monkeypatch.setattr(neighbors, "FRESH_EXACT_MAX", 6000)  # a smaller test, same rule
    limit = fresh_exact_limit(1024)
    assert limit == 6000
    Y = np.random.default_rng(11).standard_normal((limit + 1, 1024))
    monkeypatch.setattr(neighbors, "_hnsw_neighbors", None)  # calling it would fail
    found = nearest_candidates(Y[:limit], 3, "approximate")
    rows = [0, 2500, limit - 1]
    assert same_sets(found[rows], brute_knn(Y[:limit], 3, rows))
    asked = []

    def hnsw(Y, c):
        asked.append(Y.shape)
        return np.full((Y.shape[0], c + 1), -1, dtype=np.int64)  # rows left to _complete

    monkeypatch.setattr(neighbors, "_hnsw_neighbors", hnsw)
    found = nearest_candidates(Y, 3, "auto")
    assert same_sets(found[rows], brute_knn(Y, 3, rows))
    nearest_candidates(Y[:FRESH_EXACT_N + 1, :1023], 3, "auto")
    assert asked == [(limit + 1, 1024), (FRESH_EXACT_N + 1, 1023)]


@pytest.mark.parametrize("m", [5, 10, 20, 25, 32, 40])
def test_the_exact_searches_keep_the_c_th_nearest_where_it_ties_with_many(m):
    """About 400 points on a line, m copies at each integer position, in a shuffled order
    (every squared distance an exact small integer): with c = m candidates, a point's
    c - 1 nearest are its copies (distance 0) and its c-th is any of the up to 2 m
    copies at distance 1. The c candidates of ``exact_neighbors`` and of
    ``nearest_given`` (every point a seed of every point) are c distinct others at the c
    smallest distances of the brute force. A selection that places only the first
    c - 1 (an ``argpartition`` at c - 2) leaves a point at distance 4 in the last column
    of some of these rows (NumPy 2.4's AVX2 select: dozens of rows at m = 32 and 40),
    never on random continuous points."""
    positions = np.repeat(np.arange(-(-400 // m), dtype=float), m)
    Y = np.random.default_rng(m).permutation(positions)[:, None]
    n, c = Y.shape[0], m
    squared = (Y - Y.T) ** 2
    np.fill_diagonal(squared, np.inf)  # a point is not its own candidate
    nearest = np.sort(squared, axis=1)[:, :c]
    assert (nearest[:, :-1] == 0).all() and (nearest[:, -1] == 1).all()
    every_point = np.broadcast_to(np.arange(n), (n, n))
    for search, found in (("exact", exact_neighbors(Y, c)),
                          ("given", nearest_given(Y, every_point, c))):
        assert found.shape == (n, c)
        assert (np.diff(np.sort(found, axis=1), axis=1) > 0).all(), search
        np.testing.assert_array_equal(
            np.sort(np.take_along_axis(squared, found, axis=1), axis=1), nearest,
            err_msg=search)


def test_the_tree_has_the_declared_leaves_and_splits_at_the_sliding_midpoint(monkeypatch):
    """``tree_neighbors`` declares SciPy's k-d tree with leaves of up to 32 points, a node
    split at the sliding midpoint of its widest dimension: read off the trees it builds.
    Points at x = i^2 (i < 100) on a line: the midpoint of [0, 9801] is 4900.5 (71 points
    below it), the median 2500; 32 points are one leaf, 33 are split."""
    built = []

    class Recorded(cKDTree):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(neighbors, "cKDTree", Recorded)
    Y = np.c_[np.arange(100.0) ** 2, np.zeros(100)]
    assert same_sets(tree_neighbors(Y, 3), brute_knn(Y, 3))
    tree = built[-1]
    assert tree.leafsize == 32
    root = tree.tree
    assert (root.split_dim, root.split) == (0, 4900.5)
    assert (root.lesser.children, root.greater.children) == (71, 29)
    tree_neighbors(Y[:32], 3)
    assert built[-1].tree.split_dim == -1 and built[-1].tree.children == 32  # a leaf
    tree_neighbors(Y[:33], 3)
    assert built[-1].tree.split_dim == 0


@pytest.mark.parametrize("c, ef_search", [(5, 64), (16, 64), (17, 68), (20, 80)])
def test_the_hnsw_index_has_the_declared_links_and_search_widths(monkeypatch, c, ef_search):
    """``_hnsw_neighbors`` declares, for each shard, an ``IndexHNSWFlat`` of M = 32 links
    a point (2 M on the bottom layer), ``efConstruction = 64`` and ``efSearch =
    max(64, 4 c)``: read off the indexes it builds and searches (two: beyond
    SHARDED_N points), at c below, at and above 64 / 4."""
    faiss = pytest.importorskip("faiss")
    built = []

    class Recorded(faiss.IndexHNSWFlat):
        def __init__(self, *args):
            super().__init__(*args)
            built.append(self)

    monkeypatch.setattr(faiss, "IndexHNSWFlat", Recorded)
    monkeypatch.setattr(neighbors, "SHARDED_N", 199)
    found = neighbors._hnsw_neighbors(np.random.default_rng(13).standard_normal((200, 3)), c)
    assert found.shape == (200, 2 * (c + 1)) and len(built) == 2
    for index in built:
        hnsw = index.hnsw
        assert (hnsw.nb_neighbors(1), hnsw.nb_neighbors(0)) == (32, 64)
        assert (hnsw.efConstruction, hnsw.efSearch) == (64, ef_search)
