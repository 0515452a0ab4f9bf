"""Anchor graphs (causefs.numerics.anchors): the search, the closed form restricted to the
anchors, the setting, and fits with them; checked against computations written here."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn.neighbors import kneighbors_graph

from causefs import CauseFS
from causefs.core.validation import InvalidParameterError
from causefs.engine import build_parts, estimate, run_cause_fs
from causefs.model.problem import Problem
from causefs.model.settings import Settings
from causefs.numerics.adaptive_graphs import adaptive_graph
from causefs.numerics.anchors import (
    ANCHOR_N,
    AUTO_ANCHORS,
    anchor_seeds,
    choose_anchors,
    nearest_anchors,
    resolve_anchors,
)
from causefs.testing.strategies import random_graph


def brute_nearest_anchors(Y, anchors, c):
    """Each row's c nearest anchors other than itself, nearest first, ties by the smaller
    index, by a loop over the rows."""
    Y = Y.toarray() if sp.issparse(Y) else Y
    out = []
    for i in range(Y.shape[0]):
        others = [a for a in anchors.tolist() if a != i]
        d = {a: float(((Y[a] - Y[i]) ** 2).sum()) for a in others}
        out.append(sorted(others, key=lambda a: (d[a], a))[:c])
    return out


@pytest.mark.parametrize("dims, sparse, tied", [(3, False, False), (40, False, False),
                                                (8, True, False), (3, False, True),
                                                (40, False, True), (8, True, True)])
def test_nearest_anchors_are_the_nearest_anchors_other_than_the_point(dims, sparse, tied):
    rng = np.random.default_rng(dims)
    Y = rng.standard_normal((300, dims))  # continuous: no ties
    if tied:  # few distinct 0-1 rows: copies, and distances tied by the dozen
        Y = (rng.random((12, dims)) < 0.3).astype(float)[rng.integers(0, 12, 300)]
    if sparse:
        Y[rng.random(Y.shape) < 0.6] = 0.0
        Y = sp.csr_array(Y)
    anchors = choose_anchors(300, 40, seed=1)
    found = nearest_anchors(Y, anchors, 6)
    assert found.shape == (300, 6)
    assert found.tolist() == brute_nearest_anchors(Y, anchors, 6)


def test_with_as_many_anchors_as_candidates_every_other_anchor_is_listed():
    Y = np.zeros((10, 2))  # every distance tied
    anchors = np.array([1, 4, 6, 9])
    found = nearest_anchors(Y, anchors, 3)
    assert found.tolist() == brute_nearest_anchors(Y, anchors, 3)
    assert found[4].tolist() == [1, 6, 9] and found[0].tolist() == [1, 4, 6]


def closed_form_over_anchors(Y, k, anchors, prior=None):
    """Eq. S.5 column by column (SPEC, "The blocks"), the candidates of column j being
    the anchors other than j: tau_ij = 1/2 ||y_i - y_j||^2 - P_ij, the k smallest kept,
    S_ij = (tau_(k+1)j - tau_ij) / (k tau_(k+1)j - sum_p tau_pj)."""
    n = Y.shape[0]
    P = np.zeros((n, n)) if prior is None else sp.csc_array(prior).toarray()
    S = np.zeros((n, n))
    gamma = np.zeros(n)
    for j in range(n):
        cand = anchors[anchors != j]
        tau = 0.5 * ((Y[cand] - Y[j]) ** 2).sum(axis=1) - P[cand, j]
        order = np.argsort(tau, kind="stable")
        t = tau[order]
        denominator = k * t[k] - t[:k].sum()
        S[cand[order[:k]], j] = (t[k] - t[:k]) / denominator
        gamma[j] = denominator / 2
    return S, gamma


@pytest.mark.parametrize("with_prior", [False, True])
@pytest.mark.parametrize("dims", [2, 45])
def test_a_graph_with_anchors_is_the_closed_form_over_the_anchors(with_prior, dims):
    rng = np.random.default_rng(7 + dims)
    n, k = 60, 4
    Y = rng.standard_normal((n, dims))
    anchors = choose_anchors(n, 15, seed=3)
    # a prior that lowers tau on anchors only, as in a fit whose graphs all have anchors
    prior = 0.3 * random_graph(rng, n, k, anchors) if with_prior else None
    graph, gamma = adaptive_graph(Y, k, prior, seeds=anchor_seeds(Y, anchors, k))
    expected, expected_gamma = closed_form_over_anchors(Y, k, anchors, prior)
    np.testing.assert_allclose(graph.toarray(), expected, atol=1e-12)
    np.testing.assert_allclose(gamma, expected_gamma, rtol=1e-10)
    assert set(np.unique(graph.tocoo().row)) <= set(anchors.tolist())
    # and not the graph over every sample: the anchors are a constraint
    free, _ = adaptive_graph(Y, k, prior)
    assert abs(free.toarray() - expected).max() > 1e-3


def test_too_few_anchors_for_the_closed_form_are_refused():
    Y = np.random.default_rng(0).random((20, 3))
    with pytest.raises(ValueError, match="k \\+ 2 = 7"):
        anchor_seeds(Y, np.arange(6), 5)
    assert anchor_seeds(Y, None, 5) is None


def test_anchors_are_drawn_by_the_seed():
    a = choose_anchors(1000, 50, seed=4)
    assert a.size == 50 and np.all(np.diff(a) > 0) and a[0] >= 0 and a[-1] < 1000
    np.testing.assert_array_equal(a, choose_anchors(1000, 50, seed=4))
    assert not np.array_equal(a, choose_anchors(1000, 50, seed=5))


def test_auto_has_anchors_beyond_anchor_n_samples_only_and_not_with_given_neighbours():
    assert resolve_anchors("auto", ANCHOR_N) is None
    assert resolve_anchors("auto", ANCHOR_N + 1) == AUTO_ANCHORS
    assert resolve_anchors("auto", ANCHOR_N + 1, given_neighbors=True) is None
    assert resolve_anchors(None, 10**7) is None
    assert resolve_anchors(300, 1000) == 300
    with pytest.raises(InvalidParameterError, match="n_anchors=300: the fit was given"):
        resolve_anchors(300, 1000, given_neighbors=True)


@pytest.mark.parametrize("value, message", [
    (61, "n_anchors=61: exceeds the 60 samples"),
    (6, "n_anchors=6: needs at least n_neighbors \\+ 2 = 7"),
])
def test_a_number_of_anchors_the_data_cannot_hold_is_refused(value, message):
    X = np.random.default_rng(0).random((60, 5))
    with pytest.raises(InvalidParameterError, match=message):
        CauseFS(n_clusters=3, n_features_to_select=2, n_anchors=value).fit(X)


@pytest.mark.parametrize("value", [2, 2.5, "all"])
def test_n_anchors_takes_auto_none_or_an_int_of_at_least_three(value):
    with pytest.raises(InvalidParameterError, match="n_anchors"):
        Settings(n_anchors=value)


def test_anchors_with_given_neighbours_are_refused_and_auto_takes_the_given_graph():
    rng = np.random.default_rng(0)
    X = rng.random((80, 6))
    neighbors = kneighbors_graph(X, 7)
    with pytest.raises(InvalidParameterError, match="n_anchors=30: the fit was given"):
        CauseFS(n_clusters=3, n_features_to_select=2, n_anchors=30).fit(
            X, neighbors=neighbors)
    fitted = CauseFS(n_clusters=3, n_features_to_select=2, random_state=0).fit(
        X, neighbors=neighbors)
    assert fitted.settings_.n_anchors is None


@pytest.mark.parametrize("bad", [np.array([3, 1, 2, 5, 6, 7, 8]), np.arange(5),
                                 np.array([0, 1, 2, 3, 4, 5, 40])])
def test_a_problem_refuses_anchors_that_are_not_sorted_distinct_sample_indices(bad):
    X = np.random.default_rng(0).random((40, 3))
    with pytest.raises(ValueError, match="anchors must be sorted distinct sample indices"):
        Problem(X=X, coding=np.zeros_like(X), n_neighbors=4, anchors=bad)


def test_a_fit_with_anchors_links_every_sample_to_anchors_only_and_is_reproducible():
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(c, 0.3, size=(100, 8)) for c in (0.0, 1.5, 3.0)])
    X = (X - X.min(0)) / np.ptp(X, axis=0)
    settings = Settings(n_clusters=3, n_features_to_select=4, n_anchors=40, max_iter=4)
    parts = build_parts(settings, 11)
    result = run_cause_fs(X, parts, seed=11)
    anchors = choose_anchors(300, 40, 11)
    for graph in (result.state.G, *result.state.S):
        assert set(np.unique(sp.coo_array(graph).row)) <= set(anchors.tolist())
    first = CauseFS(n_clusters=3, n_features_to_select=4, n_anchors=40,
                    random_state=5).fit(X)
    again = CauseFS(n_clusters=3, n_features_to_select=4, n_anchors=40,
                    random_state=5).fit(X)
    np.testing.assert_array_equal(first.scores_, again.scores_)


def test_the_estimate_prices_anchor_searches_below_the_searches_among_all_samples():
    # the searches of a large fit are most of its estimate (docs/PERFORMANCE.md)
    settings = Settings(n_clusters=10, n_features_to_select=20)
    with_anchors = estimate(1_000_000, 64, settings.replace(n_anchors="auto")).seconds
    without = estimate(1_000_000, 64, settings.replace(n_anchors=None)).seconds
    assert with_anchors < 0.6 * without
