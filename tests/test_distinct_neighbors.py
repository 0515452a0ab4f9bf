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
