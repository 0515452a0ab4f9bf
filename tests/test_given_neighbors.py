"""Neighbours made elsewhere (fit's ``neighbors``): a precomputed kNN graph or a search
object with scikit-learn's NearestNeighbors interface."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs
from sklearn.neighbors import NearestNeighbors, kneighbors_graph
from sklearn.preprocessing import minmax_scale

from causefs import CauseFS
from causefs.core.validation import InvalidParameterError
from causefs.numerics.adaptive_graphs import adaptive_graph
from causefs.numerics.given_neighbors import check_neighbors, given_candidates

K = 4


@pytest.fixture(scope="module")
def points():
    X, _ = make_blobs(n_samples=120, n_features=6, centers=3, random_state=0)
    return X


def closed_form_on(Y, candidates, k):
    """Eq. S.5 written out column by column over the listed candidates (the paper's
    formula with no prior): the k smallest tau, weights (tau_(k+1) - tau_i) / (k
    tau_(k+1) - sum tau_p)."""
    n = Y.shape[0]
    out = np.zeros((n, n))
    for j in range(n):
        listed = sorted(set(candidates[j]) - {j, -1})
        tau = np.array([0.5 * np.sum((Y[i] - Y[j]) ** 2) for i in listed])
        order = np.argsort(tau, kind="stable")
        nearest, tau = np.array(listed)[order[:k]], tau[order]
        out[nearest, j] = (tau[k] - tau[:k]) / (k * tau[k] - tau[:k].sum())
    return out


def test_an_exact_knn_graph_gives_the_dense_reference_graph(points):
    given = check_neighbors(kneighbors_graph(points, K + 3, mode="distance"), len(points), K)
    graph, _ = adaptive_graph(points, K, seeds=given_candidates(given, points, K + 1))
    reference, _ = adaptive_graph(points, K, algorithm="all")
    np.testing.assert_allclose(graph.toarray(), reference.toarray(), atol=1e-12)


def test_given_candidates_are_rescored_by_the_closed_form(points):
    rng = np.random.default_rng(0)
    n = len(points)
    # a graph of arbitrary neighbours and values: only its support may count
    rows = np.repeat(np.arange(n), K + 3)
    columns = np.concatenate([rng.choice(np.delete(np.arange(n), i), K + 3, replace=False)
                              for i in range(n)])
    graph = sp.csr_array((rng.uniform(size=rows.size), (rows, columns)), shape=(n, n))
    table = check_neighbors(graph, n, K)
    built, _ = adaptive_graph(points, K, seeds=given_candidates(table, points, K + 1))
    np.testing.assert_allclose(built.toarray(), closed_form_on(points, table, K), atol=1e-12)


def test_a_search_object_is_cloned_fitted_and_its_self_matches_dropped(points):
    search = NearestNeighbors(algorithm="brute")
    given = check_neighbors(search, len(points), K)
    assert given is not search and not hasattr(search, "n_samples_fit_")
    found = given_candidates(given, points, K + 1)
    exact = NearestNeighbors(n_neighbors=K + 1).fit(points).kneighbors(
        return_distance=False)
    np.testing.assert_array_equal(np.sort(found, axis=1), np.sort(exact, axis=1))


def test_a_fit_given_the_exact_neighbours_selects_as_without(points):
    X = np.abs(points)
    params = dict(n_clusters=3, n_features_to_select=3, random_state=0)
    alone = CauseFS(**params).fit(X)
    graph = CauseFS(**params).fit(X, neighbors=kneighbors_graph(minmax_scale(X), 8))
    search = CauseFS(**params).fit(X, neighbors=NearestNeighbors())
    np.testing.assert_allclose(graph.scores_, alone.scores_, rtol=1e-10)
    np.testing.assert_allclose(search.scores_, alone.scores_, rtol=1e-10)
    # and they are used: neighbours drawn at random make another initial graph
    far = kneighbors_graph(np.random.default_rng(0).normal(size=X.shape), 8)
    other = CauseFS(**params).fit(X, neighbors=far)
    assert not np.allclose(other.scores_, alone.scores_)


class IndexSearch:
    """A search object that returns whatever it was told to (to test the checks)."""

    def __init__(self, found):
        self.found = found

    def fit(self, X):
        return self

    def kneighbors(self, X, n_neighbors, return_distance=False):
        return self.found


@pytest.mark.parametrize("neighbors, message", [
    (sp.eye(5, format="csr"), r"shape \(120, 120\)"),
    (kneighbors_graph(np.arange(240.0).reshape(120, 2), K), r"fewer than n_neighbors \+ 1"),
    (np.zeros((120, 5)), "NearestNeighbors interface"),
])
def test_bad_graphs_are_refused_naming_the_problem(neighbors, message):
    with pytest.raises(InvalidParameterError, match=message):
        check_neighbors(neighbors, 120, K)


@pytest.mark.parametrize("found", [np.zeros((120, 3), dtype=int),
                                   np.full((120, K + 2), 500), np.zeros((120, K + 2))])
def test_a_search_returning_no_index_table_is_refused(points, found):
    with pytest.raises(InvalidParameterError, match="must return an"):
        given_candidates(check_neighbors(IndexSearch(found), 120, K), points, K + 1)


def test_neighbors_a_schedule_does_not_use_are_reported():
    from types import SimpleNamespace

    parts = SimpleNamespace(init=[], schedule=SimpleNamespace(name="mine"))
    with pytest.warns(UserWarning, match="schedule 'mine' has no initial_fused_graph"):
        CauseFS._warn_if_neighbors_unused(parts, np.zeros((3, 6), dtype=int))
