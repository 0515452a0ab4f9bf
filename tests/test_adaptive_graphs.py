"""The adaptive-neighbour closed form (paper eqs. S.5 and G.3) against a dense computation
written from its statement in :mod:`causefs.numerics.adaptive_graphs`, and the monotone
update against its documented rule, with cvxpy's minimizer of the column problem."""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from causefs.numerics.adaptive_graphs import adaptive_graph, adaptive_neighbors
from causefs.testing import random_graph


def closed_form(Y, k, prior=None):
    """Column j: tau_ij = 1/2 ||y_i - y_j||^2 - P_ij (i != j), the k smallest (ties to the
    smaller index), S_ij = (tau_(k+1)j - tau_ij) / (k tau_(k+1)j - sum_p<=k tau_pj),
    gamma_j half that denominator; uniform weights 1/k and gamma 0 where it is 0."""
    n = len(Y)
    P = np.zeros((n, n)) if prior is None else prior.toarray()
    S, gamma = np.zeros((n, n)), np.zeros(n)
    for j in range(n):
        tau = {i: 0.5 * np.sum((Y[i] - Y[j]) ** 2) - P[i, j] for i in range(n) if i != j}
        order = sorted(tau, key=lambda i: (tau[i], i))
        nearest, next_one = order[:k], tau[order[k]]
        denominator = k * next_one - sum(tau[i] for i in nearest)
        if denominator == 0:  # the k + 1 smallest equal: uniform weights, gamma 0
            S[nearest, j] = 1 / k
            continue
        for i in nearest:
            S[i, j] = (next_one - tau[i]) / denominator
        gamma[j] = denominator / 2
    return S, gamma


@pytest.mark.parametrize("algorithm", ["exact", "all"])
@pytest.mark.parametrize("k", [1, 3, 8])
def test_the_graph_is_the_closed_form_with_and_without_a_prior(algorithm, k):
    rng = np.random.default_rng(k)
    Y = rng.normal(size=(10, 3))
    prior = 0.4 * random_graph(rng, 10, 3)
    for given in (None, prior):
        graph, gamma = adaptive_graph(Y, k, given, algorithm)
        S, expected_gamma = closed_form(Y, k, given)
        assert sp.issparse(graph) and graph.format == "csc" and graph.has_sorted_indices
        np.testing.assert_allclose(graph.toarray(), S, atol=1e-12)
        np.testing.assert_allclose(gamma, expected_gamma, rtol=1e-12)
        assert graph.nnz == np.count_nonzero(S)


def test_ties_go_to_the_smaller_index_whatever_the_candidates_order():
    # column 0's candidates 3, 1, 2, 4 at tau 1, 1, 1, 5: with k = 2, rows 1 and 2 win
    idx = np.array([[3, 1, 2, 4]] * 5)
    tau = np.array([[1.0, 1.0, 1.0, 5.0]] * 5)
    graph, gamma = adaptive_neighbors(idx, tau, 2)
    assert graph[:, [0]].toarray().ravel().nonzero()[0].tolist() == [1, 2]
    np.testing.assert_allclose(graph.toarray()[[1, 2], 0], [0.5, 0.5])
    np.testing.assert_allclose(gamma, (2 * 1.0 - 2.0) / 2)  # tau_(3) = 1: k tau - sum = 0


def test_the_number_of_candidates_is_checked():
    idx = np.tile(np.arange(1, 4), (4, 1))
    tau = np.tile([1.0, 2.0, 3.0], (4, 1))
    adaptive_neighbors(idx, tau, 2)  # exactly k + 1 candidates
    with pytest.raises(ValueError, match="need at least k \\+ 1 = 4 candidates per column, "
                                         "got 3"):
        adaptive_neighbors(idx, tau, 3)
    tau[2, 2] = np.inf
    with pytest.raises(ValueError, match="^fewer than k \\+ 1 finite candidates in some "
                                         "column$"):
        adaptive_neighbors(idx, tau, 2)


def test_the_neighbour_count_is_checked_against_the_samples():
    Y = np.random.default_rng(0).normal(size=(6, 2))
    assert adaptive_graph(Y, 4)[0].nnz == 6 * 4  # k = n - 2: the largest
    for k in (0, 5):
        with pytest.raises(ValueError, match=rf"^n_neighbors={k} needs 1 <= n_neighbors <= "
                                             r"n_samples - 2 = 4 \(the closed form uses the "
                                             r"\(k\+1\)-th neighbour of every sample\)$"):
            adaptive_graph(Y, k)


def minimizer(tau, gamma):
    """argmin <tau, s> + gamma ||s||^2 on the simplex (cvxpy)."""
    s = cp.Variable(len(tau))
    cp.Problem(cp.Minimize(tau @ s + gamma * cp.sum_squares(s)), [s >= 0, cp.sum(s) == 1]).solve()
    return np.clip(s.value, 0.0, None)


def column_value(tau, s, gamma):
    return tau @ s + gamma * s @ s


def test_a_monotone_update_never_raises_a_columns_value():
    """adaptive_update="monotone": a column whose re-estimated closed form would raise
    <tau, s> + gamma ||s||^2 above its previous value keeps its gamma and takes the
    exact minimizer for it; the others take the closed form."""
    rng = np.random.default_rng(5)
    n, c, k = 12, 6, 3
    idx = np.array([rng.permutation(np.delete(np.arange(n), j))[:c] for j in range(n)])
    tau = rng.normal(size=(n, c))
    fresh, fresh_gamma = adaptive_neighbors(idx, tau, k)
    # even columns: random previous weights (the fresh closed form does better); odd:
    # the minimizer for a small gamma, lower than the fresh value at its larger gamma
    old = rng.dirichlet(np.ones(c), size=n) * (rng.random((n, c)) < 0.7)
    old /= old.sum(axis=1, keepdims=True)
    old_gamma = rng.uniform(0.0, 3.0, size=n)
    old_gamma[1::2] = rng.uniform(0.05, 0.5, size=n // 2)
    old[1::2] = [minimizer(tau[j], old_gamma[j]) for j in range(1, n, 2)]
    old_gamma[0] = 0.0  # a linear column
    graph, gamma = adaptive_neighbors(idx, tau, k, (old, old_gamma))
    S, F = graph.toarray(), fresh.toarray()
    kept = 0
    for j in range(n):
        before = column_value(tau[j], old[j], old_gamma[j])
        s_fresh = F[idx[j], j]
        if column_value(tau[j], s_fresh, fresh_gamma[j]) <= before:
            np.testing.assert_allclose(S[:, j], F[:, j])
            assert gamma[j] == fresh_gamma[j]
            continue
        kept += 1
        assert gamma[j] == old_gamma[j]
        ours = S[idx[j], j]
        best = minimizer(tau[j], old_gamma[j])
        assert column_value(tau[j], ours, old_gamma[j]) <= \
            column_value(tau[j], best, old_gamma[j]) + 1e-7
        if old_gamma[j] > 0:  # strictly convex: one minimizer
            np.testing.assert_allclose(ours, best, atol=1e-5)
        assert column_value(tau[j], ours, old_gamma[j]) <= before + 1e-12
        assert np.count_nonzero(ours) <= k and ours.sum() == pytest.approx(1.0)
    assert n // 2 <= kept < n  # both branches ran, kept quadratic columns among them


def test_a_kept_linear_column_spreads_its_mass_over_its_smallest_ties():
    # old gamma 0 (a linear column) at its minimum, value 0.5; the closed form (gamma
    # 0.5, value 0.75) would raise it: gamma 0 is kept, the mass uniform on the two ties
    idx = np.array([[1, 2, 3, 4]] * 5)
    tau = np.array([[0.5, 0.5, 1.0, 3.0]] * 5)
    old = np.tile([0.5, 0.5, 0.0, 0.0], (5, 1))
    graph, gamma = adaptive_neighbors(idx, tau, 2, (old, np.zeros(5)))
    assert np.all(gamma == 0)
    np.testing.assert_allclose(graph.toarray()[[1, 2], 0], [0.5, 0.5])
    assert graph.toarray()[[3, 4], 0].tolist() == [0.0, 0.0]


def test_integer_and_boolean_points_are_numbers():
    # int8 differences overflow (100 - -100) and booleans cannot be subtracted: the
    # points are read as floats
    Y = np.array([[100], [-100], [90], [-95], [0], [5]], dtype=np.int8)
    graph, gamma = adaptive_graph(Y, 2, algorithm="all")
    S, expected_gamma = closed_form(Y.astype(float), 2)
    np.testing.assert_allclose(graph.toarray(), S, atol=1e-12)
    np.testing.assert_allclose(gamma, expected_gamma)
    B = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 1], [0, 0]], dtype=bool)
    np.testing.assert_allclose(adaptive_graph(B, 2, algorithm="all")[0].toarray(),
                               closed_form(B.astype(float), 2)[0], atol=1e-12)


def test_warm_graphs_seed_an_approximate_search_only(monkeypatch):
    """``warm`` graphs join the candidates of an approximate search (None entries
    dropped); an exact search is given the prior alone (it needs no seeds)."""
    import causefs.numerics.adaptive_graphs as module

    searched = []
    search = module.nearest_candidates

    def spy(Y, m, algorithm, graphs):
        searched.append((algorithm, graphs))
        return search(Y, m, algorithm, graphs)

    monkeypatch.setattr(module, "nearest_candidates", spy)
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(40, 3))
    prior, warm = 0.3 * random_graph(rng, 40, 3), random_graph(rng, 40, 5)
    adaptive_graph(Y, 4, prior, "approximate", warm=[None, warm])
    assert searched[-1][0] == "approximate"
    assert [id(g) for g in searched[-1][1]] == [id(warm), id(prior)]
    adaptive_graph(Y, 4, prior, "exact", warm=[warm])
    assert searched[-1][0] == "exact" and [id(g) for g in searched[-1][1]] == [id(prior)]
    adaptive_graph(Y, 4, None, "exact")
    assert searched[-1] == ("exact", [])


def test_an_unknown_adaptive_update_is_refused_by_name():
    from causefs.core.validation import InvalidParameterError
    from causefs.numerics.adaptive_graphs import check_adaptive_update

    assert check_adaptive_update("monotone") == "monotone"
    with pytest.raises(InvalidParameterError, match="^adaptive_update='fast': must be one "
                                                    "of 'closed_form', 'monotone'$"):
        check_adaptive_update("fast")


@pytest.mark.parametrize("with_prior", [True, False])
@pytest.mark.parametrize("algorithm", ["exact", "all"])
def test_a_monotone_graph_update_follows_the_rule_on_the_dense_problem(algorithm, with_prior):
    """``previous=(graph, gamma)``: column j keeps gamma_j and the exact minimizer for it
    where the fresh closed form (with the prior) would raise <tau_j, s> + gamma ||s||^2
    above the previous graph's value, on every pair's tau (the previous support joins
    the candidates)."""
    rng = np.random.default_rng(7)
    n, k = 12, 3
    Y = rng.normal(size=(n, 2))
    prior = 0.2 * random_graph(rng, n, 2) if with_prior else None
    tau = 0.5 * ((Y[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    tau -= 0.0 if prior is None else prior.toarray()
    S_fresh, gamma_fresh = closed_form(Y, k, prior)
    previous, gamma_previous = np.zeros((n, n)), rng.uniform(0.05, 0.3, size=n)
    for j in range(n):  # odd columns at their minimizer for a small gamma: kept
        others = np.delete(np.arange(n), j)
        if j % 2:
            previous[others, j] = minimizer(tau[others, j], gamma_previous[j])
        else:
            previous[rng.choice(others, 4, replace=False), j] = 0.25
    previous[previous < 1e-9] = 0.0
    graph, gamma = adaptive_graph(Y, k, prior, algorithm,
                                  previous=(sp.csc_array(previous), gamma_previous))
    S = graph.toarray()
    kept = 0
    for j in range(n):
        others = np.delete(np.arange(n), j)
        before = column_value(tau[others, j], previous[others, j], gamma_previous[j])
        if column_value(tau[others, j], S_fresh[others, j], gamma_fresh[j]) <= before:
            np.testing.assert_allclose(S[:, j], S_fresh[:, j], atol=1e-12)
            assert gamma[j] == pytest.approx(gamma_fresh[j])
            continue
        kept += 1
        assert gamma[j] == gamma_previous[j]
        np.testing.assert_allclose(S[others, j], minimizer(tau[others, j], gamma[j]),
                                   atol=1e-5)
    assert 0 < kept < n


def test_ties_among_many_candidates_go_to_the_smaller_index():
    # 40 candidates at three tau levels: an unstable sort would break the ties at random
    rng = np.random.default_rng(0)
    n, c, k = 41, 40, 5
    idx = np.array([rng.permutation(np.delete(np.arange(n), j)) for j in range(n)])
    tau = rng.integers(0, 3, size=(n, c)).astype(float)
    graph = adaptive_neighbors(idx, tau, k)[0].toarray()
    for j in range(n):
        by_tau_then_index = sorted(range(c), key=lambda p: (tau[j, p], idx[j, p]))
        assert set(np.flatnonzero(graph[:, j])) <= {idx[j, p] for p in by_tau_then_index[:k]}
        expected = {idx[j, p] for p in by_tau_then_index[:k]
                    if tau[j, p] < tau[j, by_tau_then_index[k]]}
        degenerate = tau[j, by_tau_then_index[0]] == tau[j, by_tau_then_index[k]]
        chosen = set(np.flatnonzero(graph[:, j]))
        assert chosen == ({idx[j, p] for p in by_tau_then_index[:k]} if degenerate
                          else expected)


def test_every_column_lists_its_rows_in_order():
    graph = adaptive_graph(np.random.default_rng(1).normal(size=(15, 2)), 4)[0]
    for j in range(15):
        rows = graph.indices[graph.indptr[j]:graph.indptr[j + 1]]
        assert np.all(np.diff(rows) > 0)


@pytest.mark.parametrize("old_gamma, kept", [(1.5, False), (0.5, False), (0.4, True)])
def test_the_previous_value_decides_at_its_bound(old_gamma, kept):
    """Candidates 1..4 at tau 0, 0, 1, 1 and k = 2: the closed form puts 1/2 on rows 1, 2
    with gamma 1, value 0 + 1 * (1/4 + 1/4) = 1/2. Previous weights (1/2, 1/2) at gamma
    1.5 have value 1.5 * 1/2 = 0.75 (their cubes would give 0.375: kept); weight 1 on
    row 1 at gamma 0.5 has value 0.5, equal (not raised: the closed form is taken), at
    gamma 0.4 value 0.4 (raised: kept)."""
    idx = np.tile([1, 2, 3, 4], (5, 1))
    tau = np.tile([0.0, 0.0, 1.0, 1.0], (5, 1))
    old = np.tile([0.5, 0.5, 0.0, 0.0] if old_gamma == 1.5 else [1.0, 0.0, 0.0, 0.0],
                  (5, 1))
    graph, gamma = adaptive_neighbors(idx, tau, 2, (old, np.full(5, old_gamma)))
    assert np.all(gamma == (old_gamma if kept else 1.0))
    np.testing.assert_allclose(graph.toarray()[[1, 2], 0], [0.5, 0.5])


@pytest.fixture
def asked(monkeypatch):
    """The arguments every ``resolve_algorithm`` call of ``adaptive_graph`` gets."""
    import causefs.numerics.adaptive_graphs as module

    calls = []
    resolve = module.resolve_algorithm
    monkeypatch.setattr(module, "resolve_algorithm",
                        lambda *args: calls.append(args) or resolve(*args))
    return calls


def test_the_search_is_resolved_for_the_points_dimension(asked):
    adaptive_graph(np.random.default_rng(0).normal(size=(9, 3)), 2)
    assert asked == [("auto", 9, 3)]


def low_rank_points(n=40, dims=10, rank=3, seed=0):
    """n points in ``dims`` columns spanning ``rank`` of them, as a group embedding
    ``X_m W_m`` of ``rank`` features and ``dims`` clusters does."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, rank)) @ rng.normal(size=(rank, dims))


def test_row_space_keeps_the_distances_in_as_many_columns_as_the_rank():
    from scipy.spatial.distance import pdist

    from causefs.numerics.neighbors import ROW_SPACE_DIMS, row_space

    Y = low_rank_points()
    reduced = row_space(Y)
    assert reduced.shape == (40, 3)
    np.testing.assert_allclose(pdist(reduced), pdist(Y), rtol=1e-10)
    full = np.random.default_rng(1).normal(size=(40, 10))
    wide = low_rank_points(dims=ROW_SPACE_DIMS + 1)
    for kept in (full, wide, np.zeros((40, 10)), low_rank_points(dims=1, rank=1)):
        assert row_space(kept) is kept  # full rank, too wide, no rank, one column


def test_row_space_counts_the_directions_above_p_eps_times_the_largest():
    from causefs.numerics.neighbors import ROW_SPACE_DIMS, row_space

    # Y'Y = diag(1, 1e-4, 2^-50, 1.024e-17), its eigenvalues exactly; for p = 4 the
    # bound 4 eps is 2^-50: the direction at the bound and the one below it are dropped
    Y = np.zeros((6, 4))
    Y[0, 0], Y[1, 1], Y[2, 2], Y[3, 3] = 1.0, 1e-2, 2.0**-25, 3.2e-9
    assert row_space(Y).shape == (6, 2)
    # from two columns, and up to ROW_SPACE_DIMS of them
    two = np.random.default_rng(3).normal(size=(20, 1)) * [1.0, 2.0]
    assert row_space(two).shape == (20, 1)
    assert row_space(low_rank_points(dims=ROW_SPACE_DIMS)).shape == (40, 3)


@pytest.mark.parametrize("algorithm", ["auto", "exact", "kd_tree"])
def test_points_of_lower_rank_give_the_closed_form_searched_in_their_rank(algorithm,
                                                                          asked):
    Y = low_rank_points(n=30)
    prior = 0.4 * random_graph(np.random.default_rng(2), 30, 3)
    graph, gamma = adaptive_graph(Y, 4, prior, algorithm)
    S, expected_gamma = closed_form(Y, 4, prior)
    np.testing.assert_allclose(graph.toarray(), S, atol=1e-10)
    np.testing.assert_allclose(gamma, expected_gamma, rtol=1e-10)
    assert asked == [(algorithm, 30, 3)]  # searched in the 3 dimensions the points span


def test_boolean_points_of_lower_rank_are_searched_as_numbers():
    # a repeated 0-1 column: rank 2 of 3 columns, found from the numbers' Gram (the
    # logical one, any(a & b), would call every pair of columns equal and keep one)
    rng = np.random.default_rng(4)
    a, b = rng.random((2, 30)) < 0.5
    Y = np.column_stack([a, a, b])
    graph, gamma = adaptive_graph(Y, 3, algorithm="exact")
    S, expected_gamma = closed_form(Y.astype(float), 3)
    np.testing.assert_allclose(graph.toarray(), S, atol=1e-10)
    np.testing.assert_allclose(gamma, expected_gamma, rtol=1e-10)


def test_the_dense_reference_keeps_the_points_as_given(asked):
    adaptive_graph(low_rank_points(n=12), 2, algorithm="all")
    assert asked == [("all", 12, 10)]


def wide_sparse_rows(n=80, d=3000, seed=0):
    """0-1 rows of 1 % non-zeros and many features: the exact search multiplies them
    sparse (:func:`causefs.numerics.neighbors.search_points`)."""
    rng = np.random.default_rng(seed)
    return sp.csr_array((rng.random((n, d)) < 0.01).astype(float))


@pytest.mark.parametrize("algorithm", ["exact", "kd_tree", "brute"])
def test_sparse_rows_give_the_graph_of_their_dense_rows(algorithm):
    X = wide_sparse_rows()
    graph, gamma = adaptive_graph(X, 4, algorithm=algorithm)
    reference, reference_gamma = adaptive_graph(X.toarray(), 4, algorithm=algorithm)
    np.testing.assert_array_equal(graph.toarray(), reference.toarray())
    np.testing.assert_array_equal(gamma, reference_gamma)


@pytest.mark.parametrize("seeded", [False, True])
def test_the_exact_search_and_given_seeds_take_sparse_rows(monkeypatch, seeded):
    """Sparse rows are not densified for the searches that take them: the exact search,
    and given seeds (completed by it), whatever search the fit names."""
    from causefs.numerics import adaptive_graphs

    X = wide_sparse_rows(seed=1)
    seen = []
    for name in ("nearest_candidates", "nearest_given", "half_squared_distances"):
        original = getattr(adaptive_graphs, name)

        def spy(Y, *args, _original=original, **kwargs):
            seen.append(sp.issparse(Y))
            return _original(Y, *args, **kwargs)

        monkeypatch.setattr(adaptive_graphs, name, spy)
    seeds = np.tile(np.arange(1, 8), (80, 1)) if seeded else None
    adaptive_graph(X, 4, algorithm="kd_tree" if seeded else "exact", seeds=seeds)
    assert len(seen) == 2 and all(seen)
