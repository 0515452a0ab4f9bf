"""Closed forms checked against cvxpy and dense references on small problems."""

import cvxpy as cp
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse.linalg
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from causefs.blocks import EmbeddingBlock
from causefs.blocks.descent.embedding import EMBEDDING_SOLVERS, orthonormal_basis
from causefs.blocks.descent.sample_weights import sample_weight_qp
from causefs.blocks.initialization.spectral_embedding import smallest_eigenvectors
from causefs.model.objective import objective
from causefs.model.subproblems import SelectionSystem
from causefs.numerics.adaptive_graphs import adaptive_graph, adaptive_neighbors
from causefs.numerics.laplacian import laplacian_quadratic
from causefs.numerics.preconditioners import jacobi_preconditioner
from causefs.terms import GranularGraphsTerm
from causefs.terms.granular_graphs import granular_hessian
from causefs.terms.sparsity import irls_weights
from causefs.testing import random_graph, states
from conftest import weight


def w_system(state):
    """The W subproblem of the state's objective: A, B of eq. W.3."""
    system = state.problem.objective.subproblem(SelectionSystem, state, "W")
    return system.matrix(), system.rhs(system.weighted_data())

SETTINGS = settings(max_examples=20)  # the rest from the loaded profile (conftest.py)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.booleans())
def test_adaptive_neighbours_solve_the_column_problem(seed, k, ties):
    """Each column minimizes <tau, s> + gamma ||s||^2 on the simplex with s_jj = 0."""
    rng = np.random.default_rng(seed)
    n = 9
    tau = rng.standard_normal((n, n))
    if ties:
        tau = np.round(tau, 1)
    idx = np.broadcast_to(np.arange(n), (n, n)).copy()
    tau_no_self = tau.copy()
    np.fill_diagonal(tau_no_self, np.inf)
    graph, gamma = adaptive_neighbors(idx, tau_no_self, k)
    S = graph.toarray()
    for j in range(n):
        s = cp.Variable(n)
        column = tau[j]  # candidate i of column j is row i of the graph
        cost = column @ s + gamma[j] * cp.sum_squares(s)
        cp.Problem(cp.Minimize(cost), [s >= 0, cp.sum(s) == 1, s[j] == 0]).solve()
        ours = column @ S[:, j] + gamma[j] * S[:, j] @ S[:, j]
        assert ours <= cost.value + 1e-6
        assert np.count_nonzero(S[:, j]) <= k and S[j, j] == 0


@pytest.mark.parametrize("algorithm", ["auto", "exact", "brute", "kd_tree"])
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 4))
def test_knn_candidates_equal_the_dense_reference(algorithm, seed, k):
    """kNN search plus the prior's support finds the same graph as scanning all pairs."""
    rng = np.random.default_rng(seed)
    Y = rng.standard_normal((30, 3))
    prior = 0.3 * random_graph(rng, 30, k)
    fast, gamma_fast = adaptive_graph(Y, k, prior, algorithm)
    dense, gamma_dense = adaptive_graph(Y, k, prior, "all")
    assert np.allclose(fast.toarray(), dense.toarray())
    assert np.allclose(gamma_fast, gamma_dense)


def test_duplicate_points_fall_back_to_uniform_weights():
    Y = np.zeros((6, 2))
    graph, gamma = adaptive_graph(Y, 2)
    assert np.allclose(graph.toarray().sum(axis=0), 1.0)
    assert set(np.round(graph.data, 12)) == {0.5} and np.all(gamma == 0)
    assert not graph.diagonal().any()


@SETTINGS
@given(states())
def test_w_system_minimizes_the_quadratic_surrogate(state):
    """eq. W.3 solves min Tr(W'VW) + alpha ||X~W - F||^2 + lam Tr(W'DW) (cvxpy)."""
    p = state.problem
    alpha, lam = weight(p, "alpha"), weight(p, "lam")
    D = irls_weights(state.W, weight(p, "eps"))
    A, B = w_system(state)
    W = np.linalg.solve(A, B)
    Xt = state.mu[:, None] * state.X_adjusted  # X - Z Theta when Z is given
    V = A - alpha * Xt.T @ Xt - np.diag(lam * D)  # the granular graph part, PSD
    values, vectors = np.linalg.eigh(0.5 * (V + V.T))
    R = np.sqrt(np.clip(values, 0, None))[:, None] * vectors.T  # V = R'R

    def surrogate(M, square=np.square, total=np.sum, times=np.multiply):
        return (total(square(R @ M)) + alpha * total(square(Xt @ M - state.F))
                + lam * total(times(np.repeat(D[:, None], M.shape[1], 1), square(M))))

    M = cp.Variable(W.shape)
    problem = cp.Problem(cp.Minimize(surrogate(M, cp.square, cp.sum, cp.multiply)))
    problem.solve(solver="CLARABEL")
    assert surrogate(W) <= problem.value + 1e-6 * max(1.0, abs(problem.value))


@SETTINGS
@given(states())
def test_granular_graph_part_of_w_system_is_the_graph_term(state):
    """Tr(W' V W) with V from the term's part of the system equals the granular graph
    smoothness term."""
    system = SelectionSystem(state)
    GranularGraphsTerm().add_to_selection_system(state, system)
    V = system.matrix()
    Xt = state.mu[:, None] * state.X_adjusted  # X - Z Theta when Z is given
    expected = sum(
        laplacian_quadratic(S, Xt[:, state.groups == m] @ state.W[state.groups == m])
        for m, S in enumerate(state.S))
    assert np.trace(state.W.T @ V @ state.W) == pytest.approx(expected, rel=1e-8, abs=1e-12)


@SETTINGS
@given(states(), st.integers(0, 2**32 - 1))
def test_mu_qp_is_the_objective_in_mu(state, seed):
    """f(mu1) - f(mu2) of the QP equals J(mu1) - J(mu2)."""
    qp = sample_weight_qp(state)
    rng = np.random.default_rng(seed)
    other = rng.dirichlet(np.ones(state.problem.n_samples)) * state.problem.mu_total
    dq = qp.value(other) - qp.value(state.mu)
    dj = objective(state.replace(mu=other)).total - objective(state).total
    scale = sum(abs(v) for v in objective(state).terms.values())
    assert dq == pytest.approx(dj, abs=1e-9 * scale)


@pytest.mark.parametrize("solver", EMBEDDING_SOLVERS)
@SETTINGS
@given(state=states())
def test_the_embedding_keeps_f_orthonormal(state, solver):
    F = EmbeddingBlock(max_iter=50, solver=solver).step(state).F
    assert np.abs(F.T @ F - np.eye(F.shape[1])).max() < 1e-10


@pytest.mark.parametrize(("solver", "max_iter"), [("gpi", 20000), ("subspace", 2000)])
def test_the_embedding_reaches_a_stationary_point(blobs, solver, max_iter):
    """At the solver's fixed point F'grad is symmetric (first-order optimality on
    F'F = I)."""
    from causefs.numerics.laplacian import laplacian_matmul
    from causefs.numerics.scaling import scale_features
    from conftest import run_engine

    X = scale_features(blobs[0])
    state = run_engine(X, n_clusters=3, lam=0.1, max_iter=2).state
    alpha = weight(state.problem, "alpha")
    F = EmbeddingBlock(max_iter=max_iter, tol=1e-15, solver=solver).step(state).F
    gradient = 2 * (alpha * F + laplacian_matmul(state.G, F)) - 2 * alpha * (
        state.mu[:, None] * (state.X_adjusted @ state.W))
    M = F.T @ gradient
    assert np.abs(M - M.T).max() <= 1e-6 * np.abs(M).max()


def reference_laplacian(G) -> np.ndarray:
    """Dense ``D - (G + G')/2`` written from the definition (docs/MODEL.md)."""
    sym = 0.5 * (G + G.T).toarray()
    return np.diag(sym.sum(axis=1)) - sym


def embedding_problem(seed: int, n: int = 150, h: int = 3, rhs: float = 0.05):
    """A small F subproblem on the kNN graph of a noisy curve (a chain of samples: the
    Laplacian's smallest eigenvalues lie close together, as on large kNN graphs), and
    the dense A (alpha I + L_G) of the same problem, built apart from the block."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.random(n))
    X = np.column_stack([np.cos(3 * t), np.sin(3 * t), t]) + 0.01 * rng.standard_normal((n, 3))
    G, _ = adaptive_graph(X, 5)
    alpha = 0.5
    B = rhs * rng.standard_normal((X.shape[0], h))
    F, _ = np.linalg.qr(rng.standard_normal((X.shape[0], h)))
    A = alpha * np.eye(X.shape[0]) + reference_laplacian(G)
    return alpha, B, F, A


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rhs", [0.0, 0.05])
def test_subspace_descent_reaches_the_minimum_of_the_f_subproblem(seed, rhs):
    """The subspace solver's F against independent answers on a chain of samples (small
    eigengaps, where GPI is slow): with B = 0 the minimum of Tr(F'AF) over F'F = I is
    the sum of A's h smallest eigenvalues (Ky Fan); with B != 0, F'(AF - B) is symmetric
    at a minimizer (first-order optimality on F'F = I) and GPI, run 50,000 iterations,
    reaches the same value (the step against the paper's GPI written apart:
    tests/test_descent_block_steps.py)."""
    from causefs.blocks.descent.embedding import gpi_descent, subspace_descent

    alpha, B, F, A = embedding_problem(seed, rhs=rhs)
    L = A - alpha * np.eye(A.shape[0])
    value = lambda F: np.trace(F.T @ A @ F) - 2 * np.trace(F.T @ B)  # noqa: E731
    F_sub = subspace_descent(lambda Z: L @ Z, jacobi_preconditioner(np.diag(A)), B, F, 5000,
                             0.0)
    assert np.abs(F_sub.T @ F_sub - np.eye(F.shape[1])).max() < 1e-12
    if rhs == 0.0:
        assert value(F_sub) == pytest.approx(np.linalg.eigvalsh(A)[:F.shape[1]].sum(),
                                             rel=1e-9)
        # without a diagonal (an operator known by its products only): the plain gradient
        F_plain = subspace_descent(lambda Z: L @ Z, None, B, F, 5000, 0.0)
        assert value(F_plain) == pytest.approx(value(F_sub), rel=1e-9)
    else:
        M = F_sub.T @ (A @ F_sub - B)
        assert np.abs(M - M.T).max() <= 1e-7 * np.abs(M).max()
        F_gpi = gpi_descent(lambda Z: L @ Z, np.linalg.eigvalsh(L)[-1], B, F, 50_000, 0.0)
        assert value(F_sub) == pytest.approx(value(F_gpi), rel=1e-9)


def test_subspace_descent_leaves_a_zero_diagonal_entry_unscaled():
    """A sample without edges and no identity part has a zero diagonal in A: the
    preconditioner leaves its row unscaled (documented) instead of dividing by zero,
    and the solver still reaches the Ky Fan minimum of Tr(F'AF)."""
    from causefs.blocks.descent.embedding import subspace_descent

    _, B, F, A = embedding_problem(0, rhs=0.0)
    weights = np.where(np.eye(len(A)) > 0, 0.0, -A)  # the graph's symmetric weights
    weights[0], weights[:, 0] = 0.0, 0.0  # sample 0 loses its edges
    L = np.diag(weights.sum(axis=1)) - weights
    assert np.diag(L)[0] == 0.0 and np.all(np.diag(L)[1:] > 0)
    F_sub = subspace_descent(lambda Z: L @ Z, jacobi_preconditioner(np.diag(L)), B, F, 5000,
                             0.0)
    assert np.isfinite(F_sub).all()
    assert np.trace(F_sub.T @ L @ F_sub) == pytest.approx(
        np.linalg.eigvalsh(L)[:F.shape[1]].sum(), abs=1e-9)


@SETTINGS
@given(states())
def test_the_embedding_system_diagonal_is_that_of_the_dense_operator(state):
    """``EmbeddingSystem.diagonal`` against the dense A = alpha I + L_G of the state,
    built from its definition; None once an operator has no diagonal to give."""
    from causefs.model.subproblems import EmbeddingSystem

    system = state.problem.objective.subproblem(EmbeddingSystem, state, "F")
    alpha = weight(state.problem, "alpha")
    dense = alpha * np.eye(state.problem.n_samples) + reference_laplacian(sp.csr_array(state.G))
    assert np.allclose(system.diagonal(), np.diag(dense), rtol=1e-12, atol=1e-12)
    system.add_operator(scipy.sparse.linalg.aslinearoperator(sp.eye_array(dense.shape[0])), 1.0)
    assert system.diagonal() is None


@SETTINGS
@given(states())
def test_the_embedding_system_matrix_is_the_dense_operator(state):
    """``EmbeddingSystem.matrix`` against the dense A = alpha I + L_G of the state, built
    from its definition; None once an operator is not a sparse matrix."""
    from causefs.model.subproblems import EmbeddingSystem

    system = state.problem.objective.subproblem(EmbeddingSystem, state, "F")
    alpha = weight(state.problem, "alpha")
    dense = alpha * np.eye(state.problem.n_samples) + reference_laplacian(sp.csr_array(state.G))
    assert sp.issparse(system.matrix())
    np.testing.assert_allclose(system.matrix().toarray(), dense, rtol=1e-12, atol=1e-12)
    system.add_operator(np.eye(dense.shape[0]), 1.0)  # dense: no sparse matrix to give
    assert system.matrix() is None


def test_the_subspace_basis_spans_the_columns_and_drops_the_dependent_ones():
    """An orthonormal basis of the span, with a column that is a combination of the
    others, a zero column, a copy 1e-9 as long of a column (dependent) and an
    independent column 1e-9 as long (kept: columns are compared at unit length)."""
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((50, 4))
    Z = np.hstack([Z, Z @ rng.standard_normal((4, 1)), np.zeros((50, 1)), 1e-9 * Z[:, :1],
                   1e-9 * rng.standard_normal((50, 1))])
    V = orthonormal_basis(Z)
    assert V.shape == (50, 5)
    assert np.abs(V.T @ V - np.eye(5)).max() < 1e-14
    assert np.allclose(V @ (V.T @ Z), Z, atol=1e-12)  # the span of Z
    tiny = Z[:, -1]  # its tiny column too, to its own size
    assert np.linalg.norm(V @ (V.T @ tiny) - tiny) < 1e-6 * np.linalg.norm(tiny)


def test_the_subspace_basis_drops_directions_at_1e_12_of_the_largest():
    """Five unit columns, four of them one vector u and the fifth u + delta v: their Gram
    matrix has eigenvalues about 5 and 4/5 delta^2 (three zeros). The second is kept
    above 1e-12 times the largest and dropped below, whatever the largest is."""
    rng = np.random.default_rng(1)
    u, v = np.linalg.qr(rng.standard_normal((30, 2)))[0].T
    for ratio, kept in ((3e-12, 2), (0.3e-12, 1)):  # second eigenvalue over the largest
        delta = np.sqrt(ratio * 5 / 0.8)
        Z = np.column_stack([u, u, u, u, (u + delta * v) / np.hypot(1.0, delta)])
        values = np.linalg.eigvalsh(Z.T @ Z)
        assert values[-2] / values[-1] == pytest.approx(ratio, rel=0.01)
        assert orthonormal_basis(Z).shape == (30, kept)


def test_the_subspace_basis_drops_a_direction_exactly_at_its_threshold(monkeypatch):
    """The tie: a Gram eigenvalue of exactly 1e-12 times the largest is dropped ("at
    most 1e-12 of the largest"). No data makes eigh return that value exactly, so its
    result for the 2 x 2 Gram matrix of two unit columns is set."""
    eigh = np.linalg.eigh

    def tied(gram):
        if gram.shape == (2, 2):
            return np.array([1e-12, 1.0]), np.eye(2)
        return eigh(gram)

    monkeypatch.setattr(np.linalg, "eigh", tied)
    assert orthonormal_basis(np.eye(5)[:, :2]).shape == (5, 1)


def test_the_reduced_problem_starts_from_the_better_start_then_runs_gpi(monkeypatch):
    """``reduced_minimizer`` written from its description, apart from the library: the
    better of Y (made orthonormal) and A's h lowest eigenvectors U turned by the polar
    factor of U'B, whose value is ``sum of the h lowest eigenvalues - 2 ||U'B||_*``
    (``Tr(Y'AY)`` is the same on every rotation of an invariant subspace), then
    REDUCED_ITER iterations ``Y <- U V'`` of the SVD of ``lambda_max Y - AY + B`` while
    the value falls."""
    import causefs.blocks.descent.embedding as embedding

    rng = np.random.default_rng(2)
    q, h = 9, 3
    M = rng.standard_normal((q, q))
    A = M @ M.T
    B = 0.3 * rng.standard_normal((q, h))
    Y = np.linalg.qr(rng.standard_normal((q, h)))[0]
    value = lambda Y: np.trace(Y.T @ A @ Y) - 2 * np.trace(Y.T @ B)  # noqa: E731
    values, vectors = np.linalg.eigh(A)
    U = vectors[:, :h]
    ritz_value = values[:h].sum() - 2 * np.linalg.svd(U.T @ B, compute_uv=False).sum()
    # no iteration: the better start
    monkeypatch.setattr(embedding, "REDUCED_ITER", 0)
    start = embedding.reduced_minimizer(A, B, Y)
    assert value(start) == pytest.approx(min(value(Y), ritz_value), rel=1e-12)
    assert value(start) == pytest.approx(ritz_value, rel=1e-12)  # this start is the Ritz one
    monkeypatch.undo()
    # then the iterations, against the same iterations written here
    reference = start
    for _ in range(embedding.REDUCED_ITER):
        P, _, Qt = np.linalg.svd(values[-1] * reference - A @ reference + B,
                                 full_matrices=False)
        if value(P @ Qt) >= value(reference):
            break
        reference = P @ Qt
    assert value(reference) < value(start) - 1e-6  # the iterations do move it
    assert value(embedding.reduced_minimizer(A, B, Y)) == pytest.approx(value(reference),
                                                                          rel=1e-10)


@pytest.mark.parametrize("zero_row", [False, True])
def test_one_subspace_step_is_the_ritz_minimum_of_its_space(zero_row):
    """With B = 0 one step reaches the sum of the h lowest eigenvalues of V'AV, V an
    orthonormal basis of F and ``D^-1 (I - FF') AF`` (D the diagonal of A; where it is
    0, 1), built here with scipy: the preconditioner's exact form is seen, its
    fallback on a zero diagonal entry too."""
    from causefs.blocks.descent.embedding import subspace_descent

    _, _, F, A = embedding_problem(3, rhs=0.0)
    if zero_row:  # sample 0 without edges, no identity part: a zero on A's diagonal
        weights = np.where(np.eye(len(A)) > 0, 0.0, -A)
        weights[0], weights[:, 0] = 0.0, 0.0
        A = np.diag(weights.sum(axis=1)) - weights
        F = np.linalg.qr(F + 0.3)[0]  # F with a share on sample 0
    diagonal = np.diag(A)
    gradient = A @ F - F @ (F.T @ (A @ F))
    direction = gradient / np.where(diagonal > 0, diagonal, 1.0)[:, None]
    V = scipy.linalg.orth(np.hstack([F, direction]))
    expected = np.linalg.eigvalsh(V.T @ A @ V)[:F.shape[1]].sum()
    B = np.zeros_like(F)
    one = subspace_descent(lambda Z: A @ Z, jacobi_preconditioner(diagonal), B, F, 1, 0.0)
    assert np.trace(one.T @ A @ one) == pytest.approx(expected, rel=1e-10)
    # the plain gradient gives another space and another value: the test sees the scaling
    plain = np.linalg.eigvalsh(
        (lambda V: V.T @ A @ V)(scipy.linalg.orth(np.hstack([F, gradient]))))[:F.shape[1]].sum()
    assert abs(plain - expected) > 1e-6 * abs(expected)


@pytest.mark.parametrize("separation", [3.0, 0.5])  # three components / one connected graph
@pytest.mark.parametrize("lobpcg_fails", [False, True])
def test_sparse_spectral_embedding_matches_dense_eigenvectors(monkeypatch, separation,
                                                              lobpcg_fails):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 0.3, size=(150, 2)) for c in (0, separation, 2 * separation)])
    G, _ = adaptive_graph(X, 5)
    if lobpcg_fails:  # the shift-invert fallback must take over
        monkeypatch.setattr(scipy.sparse.linalg, "lobpcg",
                            lambda A, X, **kw: (np.zeros(X.shape[1]), X))
    F = smallest_eigenvectors(G, 3, seed=0)  # n = 450: the sparse path
    L = sp.csr_array(sp.diags_array(0.5 * (np.asarray(G.sum(0)).ravel() + np.asarray(G.sum(1)).ravel()))
                     - 0.5 * (G + G.T)).toarray()
    values, reference = scipy.linalg.eigh(L, subset_by_index=[0, 3])
    assert values[3] - values[2] > 1e-3  # a well-defined 3-dimensional subspace
    reference = reference[:, :3]
    # same subspace: the projection onto one basis reproduces the other
    assert np.allclose(reference @ (reference.T @ F), F, atol=1e-6)
    assert np.allclose(F.T @ F, np.eye(3), atol=1e-12)


@pytest.mark.parametrize(("separation", "h"), [(3.0, 5), (0.5, 3)])
def test_lobpcg_on_an_anchored_graph_matches_dense_eigenvectors(monkeypatch, separation, h):
    """On a graph of anchors LOBPCG takes the anchors' exact preconditioner (spied) and
    converges without the shift-invert fallback (refused here) to the subspace of the
    h smallest eigenvectors of L from scipy's dense eigh."""
    from causefs.blocks.initialization import spectral_embedding
    from causefs.numerics.anchors import anchor_seeds, choose_anchors

    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(c, 0.3, size=(150, 2)) for c in (0, separation, 2 * separation)])
    anchors = choose_anchors(450, 60, 0)
    G, _ = adaptive_graph(X, 5, seeds=anchor_seeds(X, anchors, 5))
    monkeypatch.setattr(spectral_embedding, "SHIFT_INVERT_N", 100)  # n = 450: LOBPCG
    monkeypatch.setattr(spectral_embedding, "_shift_invert", None)  # no fallback
    built = []
    real = spectral_embedding.anchor_preconditioner
    monkeypatch.setattr(spectral_embedding, "anchor_preconditioner",
                        lambda A, a: built.append(real(A, a)) or built[-1])
    F = smallest_eigenvectors(G, h, seed=0, anchors=anchors)
    assert len(built) == 1 and built[0] is not None
    L = reference_laplacian(sp.csr_array(G))
    values, reference = scipy.linalg.eigh(L, subset_by_index=[0, h])
    assert values[h] - values[h - 1] > 1e-3  # a well-defined h-dimensional subspace
    reference = reference[:, :h]
    assert np.allclose(reference @ (reference.T @ F), F, atol=1e-6)
    assert np.allclose(F.T @ F, np.eye(h), atol=1e-12)


@SETTINGS
@given(states())
def test_granular_hessian_is_the_graph_term_in_mu(state):
    H = granular_hessian(state)
    expected = sum(
        laplacian_quadratic(S, state.mu[:, None] * (state.X_adjusted[:, state.groups == m] @ state.W[state.groups == m]))
        for m, S in enumerate(state.S))
    assert state.mu @ (H @ state.mu) == pytest.approx(expected, rel=1e-8, abs=1e-14)


@SETTINGS
@given(states(max_samples=20, min_features=3, max_features=40))
def test_dual_w_system_equals_the_primal(state):
    """The n x n Woodbury form of eq. W.3 gives the d x d solution."""
    system = state.problem.objective.subproblem(SelectionSystem, state, "W")
    primal, dual = system.solve("primal"), system.solve("dual")
    assert np.allclose(dual, primal, rtol=1e-6, atol=1e-9 * np.abs(primal).max())


def test_dual_w_system_without_granular_graphs(blobs):
    from causefs.numerics.scaling import scale_features
    from conftest import run_engine

    state = run_engine(scale_features(blobs[0][:20]), n_clusters=3, beta=1e-3, lam=0.1,
                       n_neighbors=3, schedule="ablation_II", max_iter=1).state
    system = state.problem.objective.subproblem(SelectionSystem, state, "W")
    assert np.allclose(system.solve("dual"), system.solve("primal"), rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("sharded", [False, True])
def test_a_fresh_approximate_search_finds_the_exact_neighbours(monkeypatch, sharded):
    """Above FRESH_EXACT_N points a search without a previous graph runs HNSW and one round
    of local search, or beyond SHARDED_N the HNSW indexes of two shards; checked against
    scipy's exact k-d tree: an index that returned one neighbour too few kept about 96%
    of them."""
    from scipy.spatial import cKDTree

    from causefs.numerics import neighbors
    from causefs.numerics.neighbors import FRESH_EXACT_N, nearest_candidates

    rng = np.random.default_rng(0)
    n, k = FRESH_EXACT_N + 1000, 6
    monkeypatch.setattr(neighbors, "SHARDED_N", n - 1 if sharded else n)
    Y = 4 * rng.standard_normal((8, 6))[rng.integers(0, 8, n)] + rng.standard_normal((n, 6))
    _, truth = cKDTree(Y).query(Y, k=k + 1)  # each point first, then its k nearest
    found = nearest_candidates(Y, k, "approximate")
    recall = np.mean([len(set(a) & set(b[1:])) / k for a, b in zip(found, truth)])
    assert recall >= 0.995
