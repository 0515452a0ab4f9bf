"""The subproblems the terms assemble (:mod:`causefs.model.subproblems`), filled by hand
here and checked against dense matrices written from their definitions (eq. W.3: ``A =
w X~'X~ + diag(v) + sum_m X~_m' L_m X~_m + ...``, ``B = w X~'T + ...`` with ``X~ =
diag(mu) X`` and ``L = D - (G + G')/2``; eq. F.2, S.5/G.3, u.3): the W system in both
forms, the graph cost, the embedding's operators and bound, the mu QP's parts, the
gradient. The terms' parts against the paper: tests/test_terms.py, test_closed_forms.py."""

import os
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from causefs.model.subproblems import (
    CG_DENSITY,
    CG_RTOL,
    DUAL_SLOWDOWN,
    EmbeddingSystem,
    Gradient,
    GraphCost,
    SampleWeightQP,
    SelectionSystem,
    selection_system_cost,
)
from causefs.testing import random_graph
from test_descent_block_costs import cause_fs_state


def dense_laplacian(graph):
    G = graph.toarray()
    S = 0.5 * (G + G.T)
    return np.diag(S.sum(axis=1)) - S


def weighted_state(n=15, d=9, seed=0, sparse=False):
    """A state whose sample weights are uneven, one of them 0 (X~ = diag(mu) X)."""
    state = cause_fs_state(n, d, seed=seed)
    rng = np.random.default_rng(seed)
    mu = rng.random(n) * 2.0
    mu[3] = 0.0
    state = state.replace(mu=mu)
    if sparse:
        X = state.problem.X.copy()
        X[X < 0.5] = 0.0
        state.problem.X = sp.csc_array(X)
    return state


def filled_system(state, seed=0, matrix=False, groups=((0, 2, 5), (1, 3)), gram_first=True):
    """A W system with every kind of part, and the dense A and B it stands for."""
    rng = np.random.default_rng(seed)
    n, d = state.problem.n_samples, state.problem.n_features
    X = state.problem.X
    Xt = state.mu[:, None] * (X.toarray() if sp.issparse(X) else X)
    system = SelectionSystem(state)
    A = np.zeros((d, d))
    diag_a, diag_b = rng.random(d) + 0.5, rng.random(d)
    if not gram_first:
        system.add_diagonal(diag_a)
        A += np.diag(diag_a)
    system.add_data_gram(0.7)
    A += 0.7 * Xt.T @ Xt
    if gram_first:
        system.add_diagonal(diag_a)
        A += np.diag(diag_a)
    system.add_diagonal(diag_b)
    A += np.diag(diag_b)
    for columns in groups:
        cols = np.array(columns)
        graph = random_graph(rng, n, 3)
        system.add_group_graph(cols, graph)
        A[np.ix_(cols, cols)] += Xt[:, cols].T @ dense_laplacian(graph) @ Xt[:, cols]
    if matrix:
        R = rng.standard_normal((d, d))
        system.add_matrix(R @ R.T)
        A += R @ R.T
    T, R2 = rng.standard_normal((n, 3)), rng.standard_normal((d, 3))
    system.add_data_rhs(2.5, T)
    system.add_data_rhs(-1.0, T[:, ::-1].copy())
    system.add_rhs(R2)
    B = 2.5 * Xt.T @ T - Xt.T @ T[:, ::-1] + R2
    return system, A, B


@pytest.mark.parametrize("gram_first", [True, False])
def test_the_w_system_is_its_parts_summed(gram_first):
    state = weighted_state()
    system, A, B = filled_system(state, matrix=True, gram_first=gram_first)
    assert np.allclose(system.matrix(), A, atol=1e-12)
    assert np.allclose(system.rhs(system.weighted_data()), B, atol=1e-12)
    assert np.allclose(system.solve("primal"), np.linalg.solve(A, B), atol=1e-9)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("groups", [((0, 2, 5), (1, 3)), (), (tuple(range(9)),)])
def test_both_forms_solve_the_dense_system(sparse, groups):
    """The primal (Cholesky of A) and the dual (Woodbury through n x n systems) equal
    the dense solve, with features in no group, several diagonals, a sample of weight 0
    and sparse data."""
    state = weighted_state(sparse=sparse)
    system, A, B = filled_system(state, groups=groups)
    assert system.dual_form()
    expected = np.linalg.solve(A, B)
    for form in ("primal", "dual", "auto"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no fallback to least squares
            assert np.allclose(system.solve(form), expected, atol=1e-8), form


@pytest.mark.parametrize("matrix", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("groups", [((0, 2, 5), (1, 3)), (), (tuple(range(9)),)])
def test_conjugate_gradients_solve_the_dense_system(sparse, groups, matrix):
    """``cg`` meets ``CG_RTOL`` on the dense system written out (every kind of part,
    features in no group, a sample of weight 0, sparse data), from zero (no W yet) and
    from the state's W."""
    state = weighted_state(sparse=sparse)
    for start in (None, np.random.default_rng(1).standard_normal((9, 3))):
        state = state.replace(W=start)
        system, A, B = filled_system(state, groups=groups, matrix=matrix)
        W = system._conjugate_gradients()  # not a direct solve after a failed one
        assert W is not None and np.array_equal(system.solve("cg"), W)
        residual = np.linalg.norm(B - A @ W, axis=0)
        assert np.all(residual <= CG_RTOL * np.linalg.norm(B, axis=0))
        assert np.allclose(W, np.linalg.solve(A, B), rtol=1e-4, atol=1e-8)


@pytest.mark.parametrize("sparse", [False, True])
def test_the_preconditioner_is_the_diagonal_of_a_without_the_group_graphs(sparse,
                                                                          monkeypatch):
    """``diag(A)`` less ``diag(X~_m' L_m X~_m)`` of each group, from the dense A."""
    import causefs.model.subproblems as module

    seen = []
    solver = module.block_conjugate_gradients
    monkeypatch.setattr(module, "block_conjugate_gradients",
                        lambda apply, B, start, diagonal, *rest: seen.append(diagonal.copy())
                        or solver(apply, B, start, diagonal, *rest))
    state = weighted_state(sparse=sparse)
    system, A, _ = filled_system(state, matrix=True)
    system.solve("cg")
    X = state.problem.X
    Xt = state.mu[:, None] * (X.toarray() if sp.issparse(X) else X)
    expected = np.diag(A).copy()
    for cols, graph in system.group_graphs:
        expected[cols] -= np.diag(Xt[:, cols].T @ dense_laplacian(graph) @ Xt[:, cols])
    assert np.allclose(seen[0], expected, rtol=1e-12, atol=1e-12)


def test_conjugate_gradients_without_a_diagonal_or_an_embedding():
    """A system of the data Gram alone (n > d: positive definite), and one whose
    right-hand side is a matrix in a state with no F."""
    state = weighted_state(n=30, d=5)
    state = state.replace(mu=np.linspace(0.5, 1.5, 30))
    Xt = state.mu[:, None] * state.problem.X
    gram_only = SelectionSystem(state)
    gram_only.add_data_gram(2.0)
    gram_only.add_data_rhs(1.0, state.F)
    W = gram_only._conjugate_gradients()
    assert W is not None
    assert np.allclose(W, np.linalg.solve(2.0 * Xt.T @ Xt, Xt.T @ state.F), rtol=1e-4)
    no_embedding = SelectionSystem(state.replace(F=None, W=None))
    no_embedding.add_matrix(np.diag(np.arange(1.0, 6.0)))
    no_embedding.add_rhs(np.ones((5, 2)))
    assert np.allclose(no_embedding.solve("auto"), 1.0 / np.arange(1.0, 6.0)[:, None])


@pytest.mark.parametrize("embedding", [True, False])
def test_the_forms_are_priced_for_the_columns_of_the_right_hand_side(embedding,
                                                                   monkeypatch):
    """``auto`` prices conjugate gradients for the h columns of B (a product for each
    column of W), read off B's parts: an embedding's F (n, 3) or, in a state with no F,
    a (d, 2) matrix; a system with no right-hand side is refused before it is priced."""
    import causefs.model.subproblems as module

    priced = []
    cost = module.selection_system_cost
    monkeypatch.setattr(module, "selection_system_cost",
                        lambda *args: priced.append(args[3]) or cost(*args))
    state = weighted_state(n=30, d=5)
    if not embedding:
        state = state.replace(F=None, W=None)
    system = SelectionSystem(state)
    system.add_diagonal(np.arange(1.0, 6.0))
    if embedding:
        system.add_data_rhs(1.0, state.F)
        system.add_data_rhs(-1.0, state.F)
    else:
        system.add_rhs(np.ones((5, 2)))
    W = system.solve("auto")
    assert priced == [W.shape[1]] == [3 if embedding else 2]
    with pytest.raises(ValueError, match="^the W system has no right-hand side: no term "
                                         "of the objective ties W to the other variables$"):
        SelectionSystem(state).solve("auto")


def test_the_choice_of_form_from_the_counts():
    """The dual only where it costs strictly less than the primal and is allowed;
    conjugate gradients only where they cost strictly less than the direct form's
    repeated solve: the primal's without its Gram, or the dual's."""
    from causefs.model.subproblems import cheapest_system, direct_system

    def counts(primal, repeat, dual, cg):
        return {"primal": primal, "repeat": repeat, "dual": dual, "cg": cg}
    assert direct_system(counts(10.0, 8.0, 5.0, 0.0), True) == "dual"
    assert direct_system(counts(10.0, 8.0, 5.0, 0.0), False) == "primal"
    assert direct_system(counts(5.0, 4.0, 5.0, 0.0), True) == "primal"  # a tie
    assert cheapest_system(counts(10.0, 8.0, 5.0, 6.0), True) == "dual"
    assert cheapest_system(counts(10.0, 8.0, 5.0, 4.0), True) == "cg"
    assert cheapest_system(counts(10.0, 8.0, 5.0, 5.0), True) == "dual"  # a tie
    assert cheapest_system(counts(10.0, 8.0, 5.0, 6.0), False) == "cg"
    assert cheapest_system(counts(10.0, 8.0, 12.0, 9.0), True) == "primal"
    assert cheapest_system(counts(10.0, 8.0, 12.0, 8.0), True) == "primal"  # a tie


def test_the_conjugate_gradients_count_grows_with_its_factors():
    """Priced as products over the data's entries for each column of W, a number of
    iterations each (the constants are calibrated, not pinned here): one column by
    default, n d entries for dense data."""
    n, d, groups = 40, 30, [10, 20]
    base = selection_system_cost(n, d, groups)
    assert base == selection_system_cost(n, d, groups, 1, n * d)
    cg = base["cg"]
    assert selection_system_cost(n, d, groups, 3)["cg"] == pytest.approx(3 * cg)
    assert selection_system_cost(n, d, groups, 1, n * d // 4)["cg"] == pytest.approx(cg / 4)
    assert selection_system_cost(n, d, groups, 1, None, 60)["cg"] == pytest.approx(
        2 * selection_system_cost(n, d, groups, 1, None, 30)["cg"])
    assert base["repeat"] == pytest.approx(base["primal"] - n * d * d)


def test_data_exactly_at_the_density_bound_go_sparse():
    """At most CG_DENSITY of the entries non-zero, equality included: the non-zeros are
    priced; one more, every entry. 37 x 27 = 999 cells, of which a third is exactly 333
    in floating point (a tie of the bound itself)."""
    bound = 333
    assert CG_DENSITY * 999 == bound
    for nonzeros, entries in ((bound, bound), (bound + 1, 999)):
        state = weighted_state(n=37, d=27, seed=3)
        X = np.zeros(999)
        X[np.random.default_rng(3).permutation(999)[:nonzeros]] = 1.0
        state.problem.X = X.reshape(37, 27)
        assert SelectionSystem(state)._cg_entries() == entries


def test_sparse_data_are_priced_at_their_stored_entries_whatever_their_density():
    """Sparse data are passed over as they are stored: their non-zeros are priced, at
    half the entries non-zero as at 2 %."""
    for share in (0.5, 0.02):
        state = weighted_state(n=40, d=25, seed=4)
        X = np.where(np.random.default_rng(4).random((40, 25)) < share, 1.0, 0.0)
        X[0, 0] = 1.0
        state.problem.X = sp.csc_array(X)
        assert SelectionSystem(state)._cg_entries() == np.count_nonzero(X)


def test_conjugate_gradients_start_from_the_state_w(monkeypatch):
    """The warm start is the state's W (its residual is the first product), zero
    before there is one or when its shape is not the system's."""
    import causefs.model.subproblems as module

    starts = []
    solver = module.block_conjugate_gradients
    monkeypatch.setattr(module, "block_conjugate_gradients",
                        lambda apply, B, start, *rest: starts.append(start.copy())
                        or solver(apply, B, start, *rest))
    state = weighted_state()
    system, A, B = filled_system(state)
    exact = np.linalg.solve(A, B)
    for W, expected in ((exact, exact), (None, np.zeros_like(B)),
                        (np.ones((9, 2)), np.zeros_like(B))):
        system.state = state.replace(W=W)
        system.solve("cg")
        assert np.array_equal(starts[-1], expected)


def test_data_mostly_zeros_go_sparse_for_conjugate_gradients():
    """Dense weighted data with at most CG_DENSITY of their entries non-zero are passed
    over as CSC (their non-zeros priced), denser data stay dense (n d priced)."""
    import causefs.model.subproblems as module

    for share, sparse in ((0.05, True), (0.5, False)):
        state = weighted_state(n=40, d=25, seed=2)
        X = state.problem.X.copy()
        X[np.random.default_rng(2).random(X.shape) >= share] = 0.0
        state.problem.X = X
        system, A, B = filled_system(state)
        pieces = system._data_pieces()
        assert all(sp.issparse(Xm) == sparse for _, _, Xm in pieces)
        assert sorted(np.concatenate([cols for cols, _, _ in pieces])) == list(range(25))
        for cols, _, Xm in pieces:
            assert np.array_equal(module.dense(Xm), state.mu[:, None] * X[:, cols])
        nonzeros = np.count_nonzero(X)
        assert system._cg_entries() == (nonzeros if sparse else X.size)
        assert nonzeros <= CG_DENSITY * X.size if sparse else nonzeros > CG_DENSITY * X.size
        residual = np.linalg.norm(B - A @ system.solve("cg"), axis=0)
        assert np.all(residual <= CG_RTOL * np.linalg.norm(B, axis=0))


def test_a_cg_solve_that_cannot_finish_is_done_directly(monkeypatch):
    """Out of iterations, overlapping groups, or an A that is not positive definite: the
    exact solve of the cheaper direct form takes over."""
    import causefs.model.subproblems as module

    state = weighted_state()
    system, A, B = filled_system(state)
    monkeypatch.setattr(module, "CG_MAX_ITER", 1)
    assert np.allclose(system.solve("cg"), np.linalg.solve(A, B), rtol=1e-10, atol=1e-12)
    monkeypatch.undo()
    overlapping, A, B = filled_system(state, groups=((0, 1), (1, 2)))
    assert not overlapping.disjoint_groups()
    assert np.allclose(overlapping.solve("cg"), np.linalg.solve(A, B), rtol=1e-10,
                       atol=1e-12)
    indefinite = SelectionSystem(state)
    A = np.diag([2.0, -1.0, 3.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    indefinite.add_matrix(A)
    indefinite.add_rhs(np.ones((9, 2)))
    assert np.allclose(indefinite.solve("cg"), np.linalg.solve(A, np.ones((9, 2))))


def test_the_dual_form_is_taken_only_where_the_structure_allows_it():
    """One data Gram of positive weight, a diagonal, group graphs on disjoint features,
    nothing else; otherwise the solve is the primal whatever is asked."""
    state = weighted_state(n=8, d=30)
    assert filled_system(state)[0].dual_form()
    assert not filled_system(state, matrix=True)[0].dual_form()
    assert not filled_system(state, groups=((0, 1), (1, 2)))[0].dual_form()
    two_grams = filled_system(state)[0]
    two_grams.add_data_gram(1.0)
    no_diagonal, zero_gram = SelectionSystem(state), SelectionSystem(state)
    no_diagonal.add_data_gram(1.0)
    zero_gram.add_data_gram(0.0)
    zero_gram.add_diagonal(np.ones(30))
    for system in (two_grams, no_diagonal, zero_gram):
        assert not system.dual_form()
    system, A, B = filled_system(state, matrix=True)
    assert np.allclose(system.solve("dual"), np.linalg.solve(A, B), atol=1e-8)


def test_an_indefinite_or_singular_w_system_is_still_solved():
    """The Cholesky factorization fails on an indefinite A: a general solve takes over;
    a singular A gets a warning and the least-squares solution."""
    state = weighted_state(n=10, d=4)
    indefinite = SelectionSystem(state)
    A = np.diag([2.0, -1.0, 3.0, 1.0])
    indefinite.add_matrix(A)
    B = np.arange(8.0).reshape(4, 2)
    indefinite.add_rhs(B)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a general solve, not least squares
        assert np.allclose(indefinite.solve(), np.linalg.solve(A, B))
    singular = SelectionSystem(state)
    singular.add_matrix(np.diag([1.0, 0.0, 2.0, 1.0]))
    singular.add_rhs(B)
    with pytest.warns(RuntimeWarning, match="^W system numerically singular; using a "
                                            "least-squares solve$"):
        W = singular.solve("primal")
    assert np.allclose(W, np.linalg.lstsq(np.diag([1.0, 0.0, 2.0, 1.0]), B, rcond=None)[0])


@pytest.mark.skipif("MUTANT_UNDER_TEST" in os.environ,
                    reason="mutmut's trampoline adds a frame to every call of a mutated "
                           "module: no stacklevel holds under it (docs/MUTATION.md)")
def test_the_singular_warning_points_at_the_line_that_asked_for_the_solve():
    """``stacklevel=4``: past ``_solve``, the form's method and ``solve`` to its caller
    (a block's step in a fit; this test here)."""
    state = weighted_state(n=10, d=4)
    singular = SelectionSystem(state)
    singular.add_matrix(np.diag([1.0, 0.0, 2.0, 1.0]))
    singular.add_rhs(np.ones((4, 2)))
    with pytest.warns(RuntimeWarning, match="singular") as record:
        singular.solve("primal")
    assert record[0].filename == __file__


def test_the_parts_of_a_are_added_in_the_order_they_were_given():
    """The documented order (reproducible rounding): with parts 1e16, 1 and -1e16 the
    sum in that order is 0 and in any other order 1, for the data Grams, the diagonals
    and the matrices alike."""
    state = weighted_state(n=6, d=3)
    Xt = state.mu[:, None] * state.problem.X
    gram = Xt.T @ Xt
    for add, unit in (("add_data_gram", gram), ("add_diagonal", np.ones(3)),
                      ("add_matrix", np.eye(3))):
        system = SelectionSystem(state)
        for weight in (1e16, 1.0, -1e16):
            part = weight if add == "add_data_gram" else weight * unit
            getattr(system, add)(part)
        expected = (1e16 * unit + unit) - 1e16 * unit
        if add == "add_data_gram":
            expected = (1e16 * gram + 1.0 * gram) + -1e16 * gram
        elif add == "add_diagonal":
            expected = np.diag(expected)
        assert np.array_equal(system.matrix(), expected), add


def test_the_group_parts_of_a_are_added_in_the_order_they_were_given():
    """The same for the group graphs, whose parts ``X~_m' L X~_m`` are PSD: between them
    diagonals of 2^60 and -2^60, each group on one column, so that the group added
    after 2^60 is lost (``2^60 + p = 2^60`` for ``p < 128``) and the one after -2^60 kept.
    Any other order of the groups loses the other one."""
    state = weighted_state(n=6, d=3)
    Xt = state.mu[:, None] * state.problem.X
    rng = np.random.default_rng(0)
    graphs = [random_graph(rng, 6, 2) for _ in range(2)]
    parts = [float(Xt[:, j] @ dense_laplacian(graph) @ Xt[:, j])
             for j, graph in enumerate(graphs)]
    assert 0.0 < min(parts) and max(parts) < 128.0
    system = SelectionSystem(state)
    system.add_diagonal(np.full(3, 2.0**60))
    system.add_group_graph(np.array([0]), graphs[0])
    system.add_diagonal(np.full(3, -2.0**60))
    system.add_group_graph(np.array([1]), graphs[1])
    A = system.matrix()
    assert A[0, 0] == 0.0 and A[2, 2] == 0.0
    assert A[1, 1] == pytest.approx(parts[1], rel=1e-12)
    assert np.count_nonzero(A - np.diag(np.diag(A))) == 0


def test_a_is_formed_from_the_weighted_data_it_is_given():
    state = weighted_state(n=8, d=3)
    system = SelectionSystem(state)
    system.add_data_gram(1.0)
    Xt = state.mu[:, None] * state.problem.X
    assert np.allclose(system.matrix(), Xt.T @ Xt)
    assert np.allclose(system.matrix(2.0 * Xt), 4.0 * Xt.T @ Xt)


def test_the_data_gram_is_formed_once_while_the_data_and_weights_stay(monkeypatch):
    """The W step's largest product, X~'X~, is reused by the next W system of the same fit
    while X and mu are the same objects (a schedule fitting no sample weights), and
    formed again from new weights: A against ``Xt' Xt`` written out each time."""
    import causefs.model.subproblems as module

    formed = []
    data_gram = module._data_gram
    monkeypatch.setattr(module, "_data_gram", lambda Xt: formed.append(1) or data_gram(Xt))

    def A(state):
        system = SelectionSystem(state)
        system.add_data_gram(2.0)
        return system.matrix()

    state = weighted_state(n=8, d=3)
    Xt = state.mu[:, None] * state.problem.X
    assert np.allclose(A(state), 2.0 * Xt.T @ Xt)
    moved = state.replace(W=state.W + 1.0)  # another variable moved: the same X~
    assert np.allclose(A(moved), 2.0 * Xt.T @ Xt) and len(formed) == 1
    mu = state.mu.copy()
    mu[0] += 1.0  # new weights, even of the same length: formed again
    Xt = mu[:, None] * state.problem.X
    assert np.allclose(A(moved.replace(mu=mu)), 2.0 * Xt.T @ Xt) and len(formed) == 2
    # a state's own data and Gram are what the primal solve uses: W = A^-1 B by hand
    system = SelectionSystem(moved)
    system.add_data_gram(1.0)
    system.add_diagonal(np.ones(3))
    system.add_data_rhs(1.0, moved.F)
    Xt = moved.mu[:, None] * moved.problem.X
    expected = np.linalg.solve(Xt.T @ Xt + np.eye(3), Xt.T @ moved.F)
    assert np.allclose(system.solve("primal"), expected)
    assert len(formed) == 3  # the cache held the last weights' Gram
    assert np.array_equal(system.solve("primal"), system.solve("primal"))
    assert len(formed) == 3  # the primal solves took the state's Gram


def test_the_dual_count_has_the_form_of_what_the_dual_runs():
    """The dual runs n x d x n products (the data's and each group's: ``n^2 d`` in all),
    one n x n solve a group and one more: its count is ``a n^2 d + b M n^3 + c n^3``
    with positive a, b, c (their values are calibrated, not pinned here)."""
    def dual(n, d, M):
        return selection_system_cost(n, d, [d // M] * M)["dual"] / DUAL_SLOWDOWN

    points = [(10, 60, 1), (10, 120, 1), (10, 60, 2)]
    rows = [[n * n * d, M * n**3, n**3] for n, d, M in points]
    a, b, c = np.linalg.solve(np.array(rows, float), [dual(*p) for p in points])
    assert min(a, b, c) > 0
    for n, d, M in [(7, 30, 3), (20, 60, 4), (50, 5, 1), (3, 300, 5)]:
        assert dual(n, d, M) == pytest.approx(a * n * n * d + b * M * n**3 + c * n**3)


def test_an_empty_w_system():
    state = weighted_state(n=10, d=4)
    system = SelectionSystem(state)
    assert np.array_equal(system.matrix(), np.zeros((4, 4)))
    with pytest.raises(ValueError, match="^the W system has no right-hand side: no term "
                                         "of the objective ties W to the other variables$"):
        system.rhs(system.weighted_data())
    with pytest.raises(ValueError, match="system='both'"):
        system.solve("both")


def test_the_w_cost_of_no_groups_is_that_of_one_group_of_all_features():
    """The primal counts the Gram, the groups' products and the factorization
    (multiply-adds); the dual is priced at DUAL_SLOWDOWN times its count."""
    n, d = 50, 20
    assert selection_system_cost(n, d, []) == selection_system_cost(n, d, [d])
    primal = n * d * d + n * (8**2 + 12**2) + d**3 / 6
    assert selection_system_cost(n, d, [8, 12])["primal"] == pytest.approx(primal)
    assert DUAL_SLOWDOWN > 1


# -- the graph cost ---------------------------------------------------------------------


def test_the_graph_cost_joins_the_terms_points_and_sums_their_priors():
    state = weighted_state()
    rng = np.random.default_rng(0)
    cost = GraphCost(state, "S", 1)
    assert (cost.target, cost.index, cost.prior) == ("S", 1, None) and cost.state is state
    with pytest.raises(ValueError, match="^no term of the objective gives the S graph a "
                                         "distance cost$"):
        cost.points
    first, second = rng.random((15, 2)), rng.random((15, 3))
    cost.add_points(first)
    assert cost.points is first
    cost.add_points(second)
    assert np.array_equal(cost.points, np.hstack([first, second]))
    priors = [random_graph(rng, 15, 2) for _ in range(3)]
    for prior in priors:
        cost.add_prior(prior)
    assert np.allclose(cost.prior.toarray(), sum(p.toarray() for p in priors))
    weights = np.ones(15)
    cost.add_regularizer(weights)
    assert len(cost.regularizers) == 1 and cost.regularizers[0] is weights


# -- the embedding ----------------------------------------------------------------------


def test_the_embedding_system_sums_its_operators_and_bounds_their_eigenvalues():
    """``A`` less its identity part is the sum of the operators; the shift bounds its
    largest eigenvalue (Gershgorin: twice the largest degree of (G + G')/2)."""
    state = weighted_state(n=20)
    rng = np.random.default_rng(1)
    graph, other, third = (random_graph(rng, 20, k) for k in (3, 2, 4))
    F = state.F
    system = EmbeddingSystem(state)
    assert np.array_equal(system.apply(F), np.zeros_like(F)) and system.shift == 0.0
    assert np.array_equal(system.rhs, np.zeros_like(F))
    system.add_laplacian(graph)
    system.add_laplacian(other, weight=2.5)
    system.add_laplacian(third, weight=2.0)
    R = rng.standard_normal((20, 20))
    system.add_operator(R @ R.T, 7.0)
    system.add_identity(0.5)
    system.add_identity(1.5)
    A = (dense_laplacian(graph) + 2.5 * dense_laplacian(other)
         + 2.0 * dense_laplacian(third) + R @ R.T)
    assert np.allclose(system.apply(F), A @ F, atol=1e-12)
    degree = lambda g: 0.5 * (g.toarray().sum(0) + g.toarray().sum(1))  # noqa: E731
    assert system.shift == pytest.approx(2 * degree(graph).max()
                                         + 2.5 * 2 * degree(other).max()
                                         + 2.0 * 2 * degree(third).max() + 7.0)
    assert np.linalg.eigvalsh(dense_laplacian(graph))[-1] <= 2 * degree(graph).max()
    assert system.identity == 2.0
    B1, B2 = rng.standard_normal(F.shape), rng.standard_normal(F.shape)
    system.add_rhs(B1)
    system.add_rhs(B2)
    assert np.allclose(system.rhs, B1 + B2)


# -- mu and the gradient -----------------------------------------------------------------


def test_the_mu_qp_sums_its_parts_and_takes_one_balance_operator():
    state = weighted_state(n=12)
    rng = np.random.default_rng(2)
    qp = SampleWeightQP(state)
    assert qp.state is state and qp.n == 12
    assert np.array_equal(qp.diagonal, np.zeros(12)) and np.array_equal(qp.linear,
                                                                       np.zeros(12))
    assert qp.sparse is None and qp.balance is None and qp.balance_weight == 0.0
    d1, d2, q1, q2 = (rng.random(12) for _ in range(4))
    P1, P2 = (sp.csr_array(random_graph(rng, 12, 2)) for _ in range(2))
    for add, parts in ((qp.add_diagonal, (d1, d2)), (qp.add_linear, (q1, q2)),
                       (qp.add_sparse, (P1, P2))):
        for part in parts:
            add(part)
    assert np.allclose(qp.diagonal, d1 + d2) and np.allclose(qp.linear, q1 + q2)
    assert np.allclose(qp.sparse.toarray(), (P1 + P2).toarray())
    qp.add_balance("H", 0.25)
    assert (qp.balance, qp.balance_weight) == ("H", 0.25)
    with pytest.raises(ValueError, match="^the mu subproblem takes one balance operator$"):
        qp.add_balance("H2", 1.0)


def test_the_gradient_sums_its_parts_in_the_variables_shape():
    state = weighted_state(n=12)
    gradient = Gradient(state, "mu")
    assert gradient.variable == "mu"
    zero = gradient.value
    assert np.array_equal(zero, np.zeros(12)) and zero.dtype == float
    integer = Gradient(state.replace(mu=np.arange(12)), "mu").value
    assert integer.dtype == float
    parts = [np.full(12, 1.0), np.arange(12.0), np.full(12, -0.5)]
    for part in parts:
        gradient.add(part)
    assert np.allclose(gradient.value, sum(parts))
