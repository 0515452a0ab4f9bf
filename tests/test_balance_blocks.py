"""Deconfounding sample-weight blocks (DWR, SRDO): math against independent computations."""

import numpy as np
import pytest

from causefs import CauseFS
from causefs.blocks import DecorrelationWeightsBlock, DensityRatioWeightsBlock
from causefs.blocks.initialization.decorrelation_weights import decorrelation_loss
from causefs.numerics.correlation import standardized

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)


def weighted_offdiag_sq(Z, w):
    C = np.cov(Z.T, aweights=w, bias=True)  # NumPy's weighted covariance
    return np.sum(C**2) - np.sum(np.diag(C) ** 2)


def confounded(n=600, seed=0):
    """Two features tied only through a binary confounder, plus an independent one."""
    rng = np.random.default_rng(seed)
    b = rng.random(n) < 0.5
    return np.column_stack([2.0 * b + rng.standard_normal(n), 2.0 * b + rng.standard_normal(n),
                            rng.standard_normal(n)])


def weighted_corr(X, w):
    C = np.cov(X.T, aweights=w)
    return C[0, 1] / np.sqrt(C[0, 0] * C[1, 1])


def test_decorrelation_loss_and_gradient():
    rng = np.random.default_rng(0)
    Z = standardized(rng.random((40, 5)) + rng.random((40, 1)))
    w = rng.random(40)
    w *= 40 / w.sum()
    value, grad = decorrelation_loss(Z, w)
    assert value == pytest.approx(weighted_offdiag_sq(Z, w))
    # the gradient is taken with n fixed (mean-one weights): finite differences of the
    # loss written with Z' diag(w) Z / n - m m', m = Z'w / n
    n = 40

    def loss(v):
        m = Z.T @ v / n
        C = (Z.T * v) @ Z / n - np.outer(m, m)
        return np.sum(C**2) - np.sum(np.diag(C) ** 2)

    h = 1e-6
    numeric = [(loss(w + h * e) - loss(w - h * e)) / (2 * h) for e in np.eye(n)]
    assert np.allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_dwr_weights_decorrelate_and_stay_on_the_simplex():
    X = confounded()
    w = DecorrelationWeightsBlock(penalty=0.0).weights(X)
    assert np.all(w >= 0) and w.sum() == pytest.approx(X.shape[0])
    Z = standardized(X)
    assert weighted_offdiag_sq(Z, w) < 0.05 * weighted_offdiag_sq(Z, np.ones(len(w)))
    assert abs(weighted_corr(X, w)) < 0.1 < 0.4 < abs(weighted_corr(X, np.ones(len(w))))
    # the spread penalty keeps more of the sample
    ess = lambda v: v.sum() ** 2 / (v @ v)  # noqa: E731
    assert ess(DecorrelationWeightsBlock(penalty=1.0).weights(X)) > ess(w)


def test_dwr_on_uncorrelated_features_is_uniform():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    assert np.allclose(DecorrelationWeightsBlock().weights(X), 1.0)


def test_srdo_weights_lower_the_dependence():
    X = confounded(seed=1)
    block = DensityRatioWeightsBlock(C=1.0, max_ratio=20.0)
    w = block.weights(X, seed=0)
    assert np.array_equal(w, block.weights(X, seed=0))
    assert w.mean() == pytest.approx(1.0) and w.max() <= 20.0 * (1 + 1e-6)
    assert abs(weighted_corr(X, w)) < 0.6 * abs(weighted_corr(X, np.ones(len(w))))
    # independent features: the classifier cannot tell the samples apart, weights ~ 1
    rng = np.random.default_rng(2)
    flat = block.weights(rng.standard_normal((600, 3)), seed=0)
    assert flat.sum() ** 2 / (flat @ flat) > 0.95 * 600


def test_srdo_caps_the_ratio():
    X = confounded(seed=3)
    w = DensityRatioWeightsBlock(C=100.0, max_ratio=2.0).weights(X, seed=0)
    assert w.max() <= 2.0 * (1 + 1e-6) and w.mean() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="max_ratio"):
        DensityRatioWeightsBlock(max_ratio=1.0)
    with pytest.raises(ValueError, match="penalty"):
        DecorrelationWeightsBlock(penalty=-1)


@pytest.mark.parametrize("schedule", ["dwr", "srdo"])
def test_schedules_fit_with_fixed_deconfounding_weights(blobs, schedule):
    X, _ = blobs
    est = CauseFS(n_clusters=3, schedule=schedule, max_iter=3, random_state=0).fit(X)
    assert est.sample_weight_.sum() == pytest.approx(X.shape[0])
    # mu is computed once, before the loop: no block of the loop changes it
    assert "sample_weights" not in {r["block"] for r in est.trace_}
    assert est.diagnostics_.effective_sample_fraction < 1.0


def test_srdo_subsamples_pairs_reproducibly():
    from causefs.blocks.initialization.density_ratio_weights import feature_pairs

    j, k = feature_pairs(5, 100, np.random.default_rng(0))
    assert j.size == 10 and np.all(j < k)
    j, k = feature_pairs(50, 30, np.random.default_rng(0))
    assert j.size == 30 and np.all(j < k) and len(set(zip(j, k))) == 30
    X = np.random.default_rng(4).standard_normal((80, 12))
    block = DensityRatioWeightsBlock(max_pairs=10)
    assert np.array_equal(block.weights(X, seed=1), block.weights(X, seed=1))


@pytest.mark.parametrize("penalty", [0.1, 1.0])
def test_dwr_weights_are_a_kkt_point_of_the_documented_loss(penalty):
    """The weights minimize, over mean-one weights, the loss the block documents:
    ``sum_{j != k} Cov_w(z_j, z_k)^2 / (its value at w = 1) + penalty * mean((w - 1)^2)``.
    Its gradient is taken here by finite differences (no gradient of the block's), and the
    KKT conditions of the scaled simplex are checked: equal on the support, not lower off
    it. A wrong factor in either part of the block's gradient moves its fixed point."""
    n = 300
    X = np.column_stack([confounded(n), confounded(n, seed=1)[:, :1]])
    Z = (X - X.mean(axis=0)) / X.std(axis=0)

    def off_diagonal(v):
        m = Z.T @ v / n
        C = (Z.T * v) @ Z / n - np.outer(m, m)
        return np.sum(C**2) - np.sum(np.diag(C) ** 2)

    start = off_diagonal(np.ones(n))

    def loss(v):
        return off_diagonal(v) / start + penalty * np.sum((v - 1.0) ** 2) / n

    w = DecorrelationWeightsBlock(penalty=penalty, max_iter=20000, tol=0.0).weights(X)
    assert w.min() >= 0 and w.sum() == pytest.approx(n)
    h = 1e-5
    gradient = np.array([(loss(w + h * e) - loss(w - h * e)) / (2 * h) for e in np.eye(n)])
    support = w > 1e-9
    level = np.median(gradient[support])
    violation = max(np.abs(gradient[support] - level).max(),
                    np.maximum(level - gradient[~support], 0.0).max(initial=0.0))
    assert violation <= 1e-4 * np.abs(gradient).max()
