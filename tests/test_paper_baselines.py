"""The paper's baselines FSDK and VCSDFS, and the random-features row, each against an
independent computation: cvxpy for FSDK's W step, an exhaustive check of its Y step,
finite differences of VCSDFS's objective for its multiplicative update."""

import numpy as np
import pytest

from causefs.selectors import FSDK, VCSDFS, RandomFeatures, make_selector
from causefs.selectors.fsdk import reassign_rows, scaled_indicator, weights_step
from causefs.selectors.vcsdfs import gradient_parts, vcsdfs_objective


def _trace_gm(M, labels, c):
    """Tr(G'M) from its definition, G = Y (Y'Y)^-1/2 formed densely."""
    Y = np.zeros((len(labels), c))
    Y[np.arange(len(labels)), labels] = 1.0
    sizes = Y.sum(axis=0)
    inv_sqrt = np.diag([1 / np.sqrt(s) if s > 0 else 0.0 for s in sizes])
    return float(np.trace((Y @ inv_sqrt).T @ M))


@pytest.mark.parametrize("n, d", [(12, 4), (6, 9)])  # the d x d and the n x n solve
def test_fsdk_weights_step_iterated_is_the_l21_regression_solved_by_cvxpy(n, d):
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(0)
    X = rng.random((n, d))
    X = X - X.mean(axis=0)
    G = scaled_indicator(rng.integers(0, 3, n), 3)
    gamma = 0.3
    reweights = np.ones(d)
    for _ in range(300):  # the reweighted steps converge to the l2,1 problem's minimum
        W = weights_step(X, G, reweights, gamma)
        reweights = 0.5 / np.maximum(np.linalg.norm(W, axis=1), 1e-12)
    b = G.mean(axis=0)
    Wv, bv = cp.Variable((d, 3)), cp.Variable(3)
    problem = cp.Problem(cp.Minimize(
        cp.sum_squares(X @ Wv + np.ones((n, 1)) @ cp.reshape(bv, (1, 3), order="C") - G)
        + gamma * cp.sum(cp.norm(Wv, 2, axis=1))))
    problem.solve()

    def objective(W, b):
        return (np.sum((X @ W + b - G) ** 2) + gamma * np.linalg.norm(W, axis=1).sum())

    assert objective(W, b) == pytest.approx(problem.value, rel=1e-4, abs=1e-6)
    np.testing.assert_allclose(b, bv.value, atol=1e-4)
    np.testing.assert_allclose(W, Wv.value, atol=2e-3)


def test_fsdk_assignment_step_leaves_no_improving_single_move():
    rng = np.random.default_rng(3)
    M = rng.normal(size=(15, 3))
    start = rng.integers(0, 3, 15)
    labels = reassign_rows(M, start, max_sweeps=100)
    assert _trace_gm(M, labels, 3) >= _trace_gm(M, start, 3)
    best = _trace_gm(M, labels, 3)
    for i in range(15):
        for k in range(3):
            moved = labels.copy()
            moved[i] = k
            assert _trace_gm(M, moved, 3) <= best + 1e-12


def test_fsdk_finds_the_clusters_and_their_features(separated_blobs):
    X, informative = separated_blobs
    scores = FSDK().score(X, n_clusters=3, n_features_to_select=4, random_state=0)
    assert set(np.argsort(-scores)[:4]) == set(informative)


def test_vcsdfs_update_is_the_split_of_the_objective_gradient():
    rng = np.random.default_rng(1)
    X, W, rho = rng.random((7, 5)), rng.random((5, 2)), 0.7

    def objective(W):  # the paper's formula, with every matrix formed
        K = X @ X.T
        WW = W @ W.T
        return 0.5 * np.sum((K - X @ WW @ X.T) ** 2) + rho * (
            np.trace(np.ones((5, 5)) @ WW) - np.trace(WW))

    step = 1e-6
    numeric = np.zeros_like(W)
    for index in np.ndindex(W.shape):
        shift = np.zeros_like(W)
        shift[index] = step
        numeric[index] = (objective(W + shift) - objective(W - shift)) / (2 * step)
    ascent, descent = gradient_parts(X, W, rho)
    np.testing.assert_allclose(2 * (descent - ascent), numeric, rtol=1e-5, atol=1e-6)
    assert vcsdfs_objective(X, W, rho) == pytest.approx(objective(W), rel=1e-12)


def test_vcsdfs_objective_does_not_increase(separated_blobs):
    X, _ = separated_blobs
    history = VCSDFS(tol=0).solve(X, n_components=4, random_state=0).objective
    assert np.all(np.diff(history) <= 1e-9 * np.abs(history[:-1]))


def test_random_features_is_a_seeded_uniform_permutation():
    X = np.random.default_rng(0).random((10, 30))
    rankings = [RandomFeatures().ranking(X, n_clusters=2, n_features_to_select=5,
                                         random_state=seed) for seed in range(200)]
    np.testing.assert_array_equal(rankings[0], RandomFeatures().ranking(
        X, n_clusters=2, n_features_to_select=5, random_state=0))
    first = np.bincount([r[0] for r in rankings], minlength=30)
    assert first.max() < 25  # 200 draws over 30 features: about 6.7 each


@pytest.mark.parametrize("name", ["fsdk", "vcsdfs", "random_features"])
def test_registered(name):
    assert make_selector(name).name == name


@pytest.fixture(scope="module")
def separated_blobs():
    """3 clusters of 20; features 0, 3, 5, 8 separate them, the other 6 are noise."""
    rng = np.random.default_rng(2)
    labels = np.repeat(np.arange(3), 20)
    informative = [0, 3, 5, 8]
    X = rng.normal(scale=0.3, size=(60, 10))
    for offset, j in enumerate(informative):
        X[:, j] += 3.0 * ((labels + offset) % 3)
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    return X, informative
