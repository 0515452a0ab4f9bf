"""CNAFS against independent computations: its objective written densely from the
formula, the S step against scipy's constrained minimizer, the W step against cvxpy,
the F step against eigen- and polar decompositions and its KKT conditions, the G and V
updates against finite differences of the objective; and the objective's descent."""

import numpy as np
import pytest
import scipy.optimize

from causefs.selectors import CNAFS, make_selector
from causefs.selectors.cnafs import (AdaptiveGraph, CNAFSResult, CNAFSWeights, FactorGram,
                                     cnafs_objective, coefficient_gradient,
                                     combination_gradient, entropic_similarity)
from causefs.selectors.fsdk import weights_step
from causefs.selectors.udfs import l21_reweights

WEIGHTS = CNAFSWeights(alpha=0.7, beta=0.4, gamma=1.3, lam=0.5, epsilon=0.2)


def dense_objective(X, W, F, G, V, S, weights=WEIGHTS):
    """The paper's objective with every matrix formed (samples in the rows of X)."""
    n = X.shape[0]
    H = np.eye(n) - np.ones((n, n)) / n
    A = (S + S.T) / 2
    L = np.diag(A.sum(axis=1)) - A
    m = V.shape[0]
    Q = np.ones((m, m)) - np.eye(m)
    positive = S > 0
    entropy = np.sum(S[positive] * np.log(S[positive]))
    return (np.linalg.norm(X.T - X.T @ G @ V) ** 2
            + np.linalg.norm(H @ (X @ W - F)) ** 2
            + weights.lam * np.sum(np.sqrt(np.sum(W ** 2, axis=1)))
            + 2 * weights.alpha * (np.trace(F.T @ L @ F) + weights.beta * entropy)
            + weights.gamma * np.trace(V @ L @ V.T) + weights.epsilon * np.trace(V.T @ Q @ V))


def random_state(rng, n=7, d=5, c=2, m=3):
    W = rng.normal(size=(d, c))
    F, _ = np.linalg.qr(rng.normal(size=(n, c)))
    G, V = rng.random((n, m)), rng.random((m, n))
    S = rng.random((n, n))
    np.fill_diagonal(S, 0.0)
    return W, F, G, V, S / S.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("shift", [0.0, -0.5])  # non-negative data, and data of any sign
def test_objective_is_the_dense_formula(shift):
    rng = np.random.default_rng(0)
    X = rng.random((7, 5)) + shift
    W, F, G, V, S = random_state(rng)
    positive = S > 0
    graph = AdaptiveGraph.from_similarity(
        S.copy(), float(np.sum(S[positive] * np.log(S[positive]))))
    state = CNAFSResult(W, F, G, V, graph, [])
    ours = cnafs_objective(X - X.mean(axis=0), FactorGram.of(X), state, WEIGHTS)
    assert ours == pytest.approx(dense_objective(X, W, F, G, V, S), rel=1e-10)


def test_similarity_step_is_the_minimizer_over_the_simplex_rows():
    rng = np.random.default_rng(1)
    n = 5
    X = rng.random((n, 4))
    W, F, G, V, _ = random_state(rng, n=n, d=4)
    off_diagonal = ~np.eye(n, dtype=bool)

    def objective(free):
        S = np.zeros((n, n))
        S[off_diagonal] = free
        return dense_objective(X, W, F, G, V, S)

    rows = np.repeat(np.arange(n), n - 1)
    constraints = [{"type": "eq", "fun": lambda free, i=i: free[rows == i].sum() - 1.0}
                   for i in range(n)]
    found = scipy.optimize.minimize(objective, np.full(n * (n - 1), 1.0 / (n - 1)),
                                    method="SLSQP", bounds=[(1e-12, 1.0)] * (n * (n - 1)),
                                    constraints=constraints,
                                    options=dict(ftol=1e-14, maxiter=1000))
    assert found.success
    S, neg_entropy = entropic_similarity(F, V, WEIGHTS.alpha, WEIGHTS.beta, WEIGHTS.gamma)
    np.testing.assert_allclose(S[off_diagonal], found.x, atol=1e-5)
    assert np.all(np.diag(S) == 0)
    assert neg_entropy == pytest.approx(np.sum(S[off_diagonal] * np.log(S[off_diagonal])))


@pytest.mark.parametrize("n, d", [(12, 4), (6, 9)])  # the d x d and the n x n solve
def test_weights_step_iterated_is_the_l21_regression_solved_by_cvxpy(n, d):
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(2)
    X = rng.random((n, d))
    F, _ = np.linalg.qr(rng.normal(size=(n, 2)))
    lam = 0.3
    X_centred, target = X - X.mean(axis=0), F - F.mean(axis=0)
    reweights = np.ones(d)
    for _ in range(300):
        W = weights_step(X_centred, target, reweights, lam)
        reweights = l21_reweights(W)
    H = np.eye(n) - np.ones((n, n)) / n
    Wv = cp.Variable((d, 2))
    problem = cp.Problem(cp.Minimize(cp.sum_squares(H @ (X @ Wv - F))
                                     + lam * cp.sum(cp.norm(Wv, 2, axis=1))))
    problem.solve()
    value = np.linalg.norm(H @ (X @ W - F)) ** 2 + lam * np.linalg.norm(W, axis=1).sum()
    assert value == pytest.approx(problem.value, rel=1e-4, abs=1e-6)
    np.testing.assert_allclose(W, Wv.value, atol=2e-3)


def _graph(rng, n):
    S = rng.random((n, n))
    np.fill_diagonal(S, 0.0)
    return AdaptiveGraph.from_similarity(S / S.sum(axis=1, keepdims=True), 0.0)


def _pseudo_label_matrix(graph, alpha):
    n = len(graph.degrees)
    return (np.eye(n) - np.ones((n, n)) / n
            + 2 * alpha * (np.diag(graph.degrees) - graph.affinity))


def test_pseudo_label_step_without_data_term_is_the_bottom_eigenspace():
    rng = np.random.default_rng(3)
    graph = _graph(rng, 8)
    A = _pseudo_label_matrix(graph, 0.7)
    start, _ = np.linalg.qr(rng.normal(size=(8, 3)))
    F = CNAFS(alpha=0.7).pseudo_label_step(graph, np.zeros((8, 3)), start)
    np.testing.assert_allclose(F.T @ F, np.eye(3), atol=1e-10)
    assert np.trace(F.T @ A @ F) == pytest.approx(np.linalg.eigvalsh(A)[:3].sum(), abs=1e-5)


def test_pseudo_label_step_with_a_dominant_data_term_is_the_polar_factor():
    rng = np.random.default_rng(4)
    graph = _graph(rng, 8)
    B = 1e6 * rng.normal(size=(8, 3))  # Tr(F'AF) is negligible: max Tr(F'B) is polar(B)
    start, _ = np.linalg.qr(rng.normal(size=(8, 3)))
    F = CNAFS(alpha=0.7).pseudo_label_step(graph, B, start)
    U, _, Vt = np.linalg.svd(B, full_matrices=False)
    np.testing.assert_allclose(F, U @ Vt, atol=1e-5)


def test_pseudo_label_step_meets_the_stiefel_kkt_conditions():
    rng = np.random.default_rng(5)
    graph = _graph(rng, 9)
    A = _pseudo_label_matrix(graph, 0.7)
    B = rng.normal(size=(9, 2))
    start, _ = np.linalg.qr(rng.normal(size=(9, 2)))
    F = CNAFS(alpha=0.7).pseudo_label_step(graph, B, start)
    gradient = A @ F - B  # half the Euclidean gradient of Tr(F'AF) - 2 Tr(F'B)
    multipliers = F.T @ gradient
    np.testing.assert_allclose(gradient - F @ multipliers, 0.0, atol=1e-4)
    np.testing.assert_allclose(multipliers, multipliers.T, atol=1e-4)

    def value(F):
        return np.trace(F.T @ A @ F) - 2 * np.trace(F.T @ B)
    assert value(F) <= value(start)


@pytest.mark.parametrize("shift", [0.0, -0.5])
def test_factor_updates_split_the_objective_gradient(shift):
    rng = np.random.default_rng(6)
    X = rng.random((7, 5)) + shift
    W, F, G, V, S = random_state(rng)
    graph = AdaptiveGraph.from_similarity(S.copy(), 0.0)
    gram = FactorGram.of(X)

    def numeric_gradient(block, rebuild):
        step, gradient = 1e-6, np.zeros_like(block)
        for index in np.ndindex(block.shape):
            shift_ = np.zeros_like(block)
            shift_[index] = step
            gradient[index] = (dense_objective(X, W, F, *rebuild(block + shift_), S)
                               - dense_objective(X, W, F, *rebuild(block - shift_), S)) / (2 * step)
        return gradient

    for split, block, rebuild in (
            (combination_gradient(gram, G, V), G, lambda G_: (G_, V)),
            (coefficient_gradient(gram, G, V, graph, WEIGHTS.gamma, WEIGHTS.epsilon), V,
             lambda V_: (G, V_))):
        assert np.all(split.ascent_part >= 0) and np.all(split.descent_part >= 0)
        np.testing.assert_allclose(2 * (split.descent_part - split.ascent_part),
                                   numeric_gradient(block, rebuild), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("options", [{}, dict(beta=1e-2), dict(beta=1e-2, gamma=10.0,
                                                                epsilon=1.0, lam=0.1)])
@pytest.mark.parametrize("shift", [0.0, -0.5])  # [0, 1] data, and centred data (XX' mixed)
def test_objective_never_rises(separated_blobs, options, shift):
    X, _ = separated_blobs
    history = CNAFS(tol=0, max_iter=60, **options).solve(X + shift, n_clusters=3).objective
    assert len(history) == 60
    assert np.all(np.diff(history) <= 1e-9 * np.abs(history[:-1]))


def test_seeds_choose_the_start():
    X = np.random.default_rng(7).random((30, 8))
    kwargs = dict(n_clusters=3, n_features_to_select=3)
    same = [CNAFS().score(X, random_state=1, **kwargs) for _ in range(2)]
    np.testing.assert_array_equal(*same)
    assert not np.array_equal(same[0], CNAFS().score(X, random_state=2, **kwargs))


@pytest.mark.parametrize("options, match", [
    (dict(alpha=0.0), "alpha=0.0: must be a real number > 0"),
    (dict(beta=-1.0), "beta=-1.0: must be"),
    (dict(epsilon=-1e-3), "epsilon=-0.001: must be a real number >= 0"),
    (dict(n_components=0), "n_components=0: must be an integer >= 1 or None"),
    (dict(max_iter=2.5), "max_iter=2.5: must be an integer"),
])
def test_options_are_validated(options, match):
    with pytest.raises(ValueError, match=match):
        CNAFS(**options)


def test_bad_data_is_refused_with_the_reason():
    X = np.random.default_rng(8).random((4, 6))
    with pytest.raises(ValueError, match="n_clusters=5: CNAFS needs at most n_samples=4"):
        CNAFS().score(X, n_clusters=5, n_features_to_select=2)
    with pytest.raises(ValueError, match="at least 2 samples"):
        CNAFS().solve(X[:1], n_clusters=1)  # (score gives one sample's features -1)
    with pytest.raises(ValueError, match="NaN or infinite values"):
        CNAFS().score(np.where(X > 0.9, np.nan, X), n_clusters=2, n_features_to_select=2)
    with pytest.raises(ValueError, match="overflow the sample Gram"):
        CNAFS().score(X * 1e306, n_clusters=2, n_features_to_select=2)


def test_registered_with_its_defaults():
    selector = make_selector("cnafs")
    assert isinstance(selector, CNAFS)
    assert selector.options() == dict(alpha=1.0, beta=1.0, gamma=1.0, lam=1.0,
                                      epsilon=1e-6, n_components=None, max_iter=100,
                                      tol=1e-4)


@pytest.fixture(scope="module")
def separated_blobs():
    """3 clusters of 20; features 0, 3, 5, 8 separate them, the other 6 are noise;
    scaled to [0, 1]."""
    rng = np.random.default_rng(2)
    labels = np.repeat(np.arange(3), 20)
    X = rng.normal(scale=0.3, size=(60, 10))
    for offset, j in enumerate([0, 3, 5, 8]):
        X[:, j] += 3.0 * ((labels + offset) % 3)
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    return X, [0, 3, 5, 8]
