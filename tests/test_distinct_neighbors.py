"""The exact searches on points with copies (integer pixels, one-hot codes, feature
groups whose rows of W are zero): searched once per distinct point, still exact."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from causefs.numerics import neighbors
from causefs.numerics.neighbors import (DISTINCT_SHARE, distinct_neighbors, exact_neighbors,
                                        nearest_candidates, tree_neighbors)

SEARCHES = {"exact": exact_neighbors, "kd_tree": tree_neighbors}


def brute_force_kth(Y: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair's squared distance (the diagonal +inf) and each row's k-th smallest."""
    squared = ((Y[:, None, :] - Y[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(squared, np.inf)
    return squared, np.sort(squared, axis=1)[:, k - 1]


def assert_exact_knn(Y: np.ndarray, found: np.ndarray, k: int):
    n = Y.shape[0]
    assert found.shape == (n, k)
    assert np.all(found != np.arange(n)[:, None]), "a point listed as its own neighbour"
    assert all(len(set(row)) == k for row in found), "a neighbour listed twice"
    squared, kth = brute_force_kth(Y, k)
    assert np.all(np.take_along_axis(squared, found, axis=1) <= kth[:, None])


# few distinct values in few columns: most points have copies, many ties between others
copied = st.integers(3, 40).flatmap(lambda n: st.tuples(
    arrays(np.float64, (n, 2), elements=st.sampled_from([0.0, -0.0, 1.0, 2.5])),
    st.integers(1, n - 1)))


@pytest.mark.parametrize("search", SEARCHES)
@settings(max_examples=150, deadline=None)
@given(case=copied)
def test_distinct_search_finds_the_exact_neighbours(search, case):
    Y, k = case
    assert_exact_knn(Y, distinct_neighbors(Y, k, SEARCHES[search]), k)


@pytest.mark.parametrize("search", SEARCHES)
def test_copies_are_neighbours_first_lowest_index_first(search):
    # 12 copies of one point (-0.0 is 0.0), 3 of another, 1 far away
    Y = np.array([[0.0, 0.0]] * 12 + [[1.0, 0.0]] * 3 + [[9.0, 9.0]])
    Y[[2, 5, 7], 1] = -0.0
    found = distinct_neighbors(Y, 4, SEARCHES[search])
    for i in range(12):  # the four lowest-index copies other than itself
        assert sorted(found[i]) == [j for j in range(12) if j != i][:4]
    for i in (12, 13, 14):  # the two other copies, then the two lowest of the 12
        assert sorted(found[i]) == [0, 1] + [j for j in (12, 13, 14) if j != i]
    assert sorted(found[15]) == [0, 12, 13, 14]


def test_all_points_equal():
    found = distinct_neighbors(np.ones((6, 3)), 5, tree_neighbors)
    assert_exact_knn(np.ones((6, 3)), found, 5)


def test_mostly_distinct_points_are_searched_directly(monkeypatch):
    rng = np.random.default_rng(0)
    Y = rng.random((100, 3))
    Y[1] = Y[0]  # one copy: 99 % distinct, above DISTINCT_SHARE
    calls = []

    def counted(points, k):
        calls.append(points.shape[0])
        return tree_neighbors(points, k)

    monkeypatch.setitem(neighbors.EXACT_SEARCHES, "kd_tree", counted)
    assert_exact_knn(Y, nearest_candidates(Y, 6, "kd_tree"), 6)
    assert calls == [100]
    Y[: int(0.6 * 100)] = Y[0]  # 41 distinct points: searched once each
    calls.clear()
    assert_exact_knn(Y, nearest_candidates(Y, 6, "kd_tree"), 6)
    assert calls == [41] and 41 <= DISTINCT_SHARE * 100


def test_the_search_may_list_neighbours_in_any_order():
    # the exact searches list a point's neighbours as a set (argpartition): the copies'
    # lists must not depend on their order
    def reversed_exact(points, k):
        return exact_neighbors(points, k)[:, ::-1]

    rng = np.random.default_rng(3)
    for _ in range(50):
        Y = rng.integers(0, 4, size=(int(rng.integers(8, 60)), 2)).astype(float)
        k = int(rng.integers(1, Y.shape[0] - 1))
        assert_exact_knn(Y, distinct_neighbors(Y, k, reversed_exact), k)


def test_equally_near_distinct_rows_keep_the_order_the_search_lists_them():
    """The docstring's rule for ties between distinct rows: equally near ones in the
    order ``search`` lists them. The 9 points of {1, 0, -1}^2, two copies each in a
    shuffled order (integer coordinates: exact ties, at 1 and 2 from the origin), and a
    search that lists every row's others in decreasing lexicographic order of their
    coordinates, the distances mixed (from the origin 2, 1, 2, 1, 1, 2, 1, 2). Every
    point's c candidates, written here from the docstring: the other copy of its own
    row, then the copies (by index) of the other rows, nearest first, ties in the
    search's order."""
    grid = np.array([(a, b) for a in (1.0, 0.0, -1.0) for b in (1.0, 0.0, -1.0)])
    Y = np.random.default_rng(5).permutation(np.vstack([grid, grid]))
    n = Y.shape[0]

    def rank(point):  # position in decreasing lexicographic order: the listing order
        return int(np.flatnonzero((grid == point).all(axis=1))[0])

    def listing(points, k):
        """An exact search: each row's k nearest others, listed in ``rank`` order."""
        out = []
        for i, point in enumerate(points):
            others = [j for j in range(len(points)) if j != i]
            near = sorted(others, key=lambda j: (np.sum((points[j] - point) ** 2),
                                                 rank(points[j])))[:k]
            out.append(sorted(near, key=lambda j: rank(points[j])))
        return np.array(out)

    def copies(point):  # by index
        return [j for j in range(n) if (Y[j] == point).all()]

    for c in (3, 8, 12):
        found = distinct_neighbors(Y, c, listing)
        for i in range(n):
            rows = sorted((p for p in grid if not (p == Y[i]).all()),
                          key=lambda p: (np.sum((p - Y[i]) ** 2), rank(p)))
            expected = [j for j in copies(Y[i]) if j != i]
            expected += [j for p in rows for j in copies(p)]
            assert found[i].tolist() == expected[:c], (c, i)
