"""Deconfounding sample-weight blocks (DWR, SRDO): math against independent computations."""

import warnings

import numpy as np
import pytest

from causefs import CauseFS
from causefs.blocks import DecorrelationWeightsBlock, DensityRatioWeightsBlock
from causefs.blocks.initialization.decorrelation_weights import decorrelation_loss
from causefs.model.fit_size import FitSize
from causefs.model.settings import Settings
from causefs.numerics.correlation import standardized
from test_descent_block_costs import step_peak
from test_initial_blocks import raw_state

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


def reference_srdo(X, C, max_ratio, max_pairs, seed):
    """SRDO as the block's docstring states it: every standardized column permuted
    independently (seeded: the permutations, then the pairs drawn), a logistic regression
    (l2, inverse strength C) on the pairwise products telling the permuted sample from
    the data, ``P(target | x_i) / P(data | x_i)`` from its probabilities, scaled to mean
    one, and the weights above ``max_ratio`` capped: ``min(s r, max_ratio)`` with the s
    that gives mean one (found by root finding, not by the block's clip-and-rescale)."""
    from scipy.optimize import brentq
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    n, d = X.shape
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    target = np.empty_like(Z)
    for j in range(d):
        target[:, j] = Z[rng.permutation(n), j]
    pairs = [(j, k) for j in range(d) for k in range(j + 1, d)]
    if len(pairs) > max_pairs:
        pairs = [pairs[i] for i in sorted(rng.choice(len(pairs), max_pairs, replace=False))]
    products = lambda V: np.column_stack([V[:, j] * V[:, k] for j, k in pairs])  # noqa: E731
    stats = np.vstack([products(Z), products(target)])
    labels = np.r_[np.zeros(n), np.ones(n)]
    model = LogisticRegression(C=C, max_iter=1000).fit(stats, labels)
    p = model.predict_proba(products(Z))[:, 1]
    ratio = p / (1 - p)
    ratio /= ratio.mean()
    if ratio.max() <= max_ratio:
        return ratio
    s = brentq(lambda s: np.minimum(s * ratio, max_ratio).mean() - 1.0, 1.0, 1e9, xtol=1e-14)
    return np.minimum(s * ratio, max_ratio)


@pytest.mark.parametrize(("d", "C", "max_ratio", "max_pairs"), [
    (2, 0.1, 10.0, 5000),   # two features: one pair, still decorrelated
    (4, 3.0, 1.5, 5000),    # the cap binds
    (6, 0.5, 10.0, 4),      # 4 of the 15 pairs drawn
    (3, 1.0, 10.0, 1),      # one pair drawn: the fewest allowed
])
def test_srdo_weights_are_the_documented_density_ratio(d, C, max_ratio, max_pairs):
    rng = np.random.default_rng(d)
    X = np.column_stack([confounded(300, seed=d)[:, :2], rng.standard_normal((300, d - 2))])
    block = DensityRatioWeightsBlock(C=C, max_ratio=max_ratio, max_pairs=max_pairs, seed=5)
    expected = reference_srdo(X, C, max_ratio, max_pairs, seed=5)
    assert expected.max() > 1.1  # the weights are not uniform
    np.testing.assert_allclose(block.weights(X, seed=5), expected, rtol=1e-6)
    # the block's own seed reaches the permutations, and mu sums to the problem's total
    for form, total in (("mean_one", 300.0), ("simplex", 1.0)):
        state = raw_state(X)
        state.problem.sample_weights = form
        np.testing.assert_allclose(block.step(state).mu, expected * total / 300, rtol=1e-6)
    assert not np.allclose(block.weights(X, seed=6), expected, rtol=1e-3)


def test_one_feature_has_nothing_to_decorrelate():
    X = np.random.default_rng(0).random((50, 1))
    assert np.array_equal(DensityRatioWeightsBlock().weights(X, seed=0), np.ones(50))
    assert np.array_equal(DecorrelationWeightsBlock().weights(X), np.ones(50))


@pytest.mark.parametrize(("n", "d", "max_pairs"), [(300, 5, 5000), (2000, 8, 5000),
                                                   (300, 60, 5000), (200, 60, 500)])
def test_the_weight_blocks_memory_bounds_the_measured_peak(n, d, max_pairs):
    """The declared phase is at least what a step allocates at its peak (tracemalloc) and
    at most twice it, whether the (n, d) data, the (d, d) moments or the pairs' products
    dominate. Declared before: 0.44-0.73 of the peak (the loss's (n, d) temporaries and
    the regression's copies of the products were not counted)."""
    X = np.random.default_rng(0).random((n, d)) + np.random.default_rng(1).random((n, 1))
    size = FitSize(n, d, Settings(n_clusters=3))
    for block, phase in ((DecorrelationWeightsBlock(max_iter=3), "decorrelation_weights"),
                         (DensityRatioWeightsBlock(max_pairs=max_pairs), "density_ratio_weights")):
        declared = block.cost(size).memory[phase]
        peak = step_peak(block, raw_state(X))
        assert peak <= declared <= 2 * peak, (phase, peak, declared)


def test_the_weight_blocks_work_grows_with_the_products_they_make():
    """DWR: ``max_iter`` iterations of (n, d, d) products; SRDO: a regression on the n
    samples' products of min(d (d - 1) / 2, max_pairs) pairs."""
    def flops(block, n, d):
        return block.cost(FitSize(n, d, Settings(n_clusters=3))).flops

    dwr = DecorrelationWeightsBlock(max_iter=10)
    # at least the two (n, d, d) products of one evaluation of the loss an iteration
    assert flops(dwr, 100, 10) >= 10 * 2 * (2 * 100 * 10 * 10)
    assert flops(dwr, 200, 10) == pytest.approx(2 * flops(dwr, 100, 10))
    assert flops(dwr, 100, 20) == pytest.approx(4 * flops(dwr, 100, 10))
    assert flops(DecorrelationWeightsBlock(max_iter=30), 100, 10) == pytest.approx(
        3 * flops(dwr, 100, 10))
    srdo = DensityRatioWeightsBlock(max_pairs=100)
    # at least one pass of the regression's loss and gradient over the 2n x pairs products
    assert flops(srdo, 100, 10) >= 2 * (2 * 2 * 100 * 45)
    assert flops(srdo, 200, 10) == pytest.approx(2 * flops(srdo, 100, 10))
    assert flops(srdo, 100, 10) == pytest.approx(45 / 10 * flops(srdo, 100, 5))  # all pairs
    assert flops(srdo, 100, 40) == pytest.approx(100 / 45 * flops(srdo, 100, 10))  # capped


def test_dwr_without_iterations_keeps_the_uniform_weights():
    """``max_iter=0`` is allowed: the start, uniform weights."""
    assert np.array_equal(DecorrelationWeightsBlock(max_iter=0).weights(confounded(50)),
                          np.ones(50))


def test_dwr_returns_its_best_weights_where_no_step_lowers_the_loss():
    """With ``tol=0`` the projected gradient runs until even its smallest step raises the
    loss (here, on a problem that reaches that point, iteration 422 on this machine):
    it returns the weights before the rise, on the simplex, the loss (written here from
    its definition) far below its start."""
    X = np.random.default_rng(0).standard_normal((20, 3))
    X[:, 1] += X[:, 0]
    w = DecorrelationWeightsBlock(penalty=0.0, max_iter=20000, tol=0.0).weights(X)
    assert isinstance(w, np.ndarray) and w.min() >= 0 and w.sum() == pytest.approx(20)
    Z = standardized(X)
    assert weighted_offdiag_sq(Z, w) < 1e-6 * weighted_offdiag_sq(Z, np.ones(20))


def test_the_documented_defaults():
    """docs/RESULTS.md: the benchmarks' settings, fixed before the sweep, are the
    defaults (DWR's penalty 0.1; SRDO's C = 0.1 and cap 10 x the mean); SRDO's
    docstring: all pairs are used up to d = 100 features at the default max_pairs."""
    from causefs.blocks.initialization.density_ratio_weights import feature_pairs

    assert DecorrelationWeightsBlock().penalty == 0.1
    srdo = DensityRatioWeightsBlock()
    assert (srdo.C, srdo.max_ratio) == (0.1, 10.0)
    rng = np.random.default_rng(0)
    assert feature_pairs(100, srdo.max_pairs, rng)[0].size == 100 * 99 // 2
    assert feature_pairs(101, srdo.max_pairs, rng)[0].size < 101 * 100 // 2


def test_dwr_stops_at_the_first_relative_decrease_below_tol():
    """"Stop when the relative decrease of the loss in an iteration is below tol": the
    iterates are those of ``max_iter=k`` (``tol=0``), their losses written here from the
    definition; a run with tol stops at the first k whose decrease is at most tol times
    the loss before it (the loss is not negative, so ``tol=1`` stops after one)."""
    X = confounded(200)
    Z = standardized(X)
    start = weighted_offdiag_sq(Z, np.ones(200))

    def iterate(k):
        return DecorrelationWeightsBlock(max_iter=k, tol=0.0).weights(X)

    def loss(v):
        return weighted_offdiag_sq(Z, v) / start + 0.1 * np.mean((v - 1.0) ** 2)

    losses = [loss(iterate(k)) for k in range(40)]
    for tol in (1.0, 0.3, 0.05, 0.01):
        stop = next(k for k in range(1, 40) if losses[k - 1] - losses[k] <= tol * losses[k - 1])
        assert tol < 1.0 or stop == 1
        assert np.array_equal(DecorrelationWeightsBlock(tol=tol).weights(X), iterate(stop)), tol


def simplex_projection_exact(v, total):
    """Euclidean projection of the fractions v onto ``{x >= 0, sum(x) = total}``: the
    threshold theta of ``max(v - theta, 0)`` is ``(sum of the k largest - total) / k`` for
    the largest k whose k-th largest entry is above it (Held et al. 1974)."""
    from fractions import Fraction

    theta, partial = None, Fraction(0)
    for k, x in enumerate(sorted(v, reverse=True), start=1):
        partial += x
        if x > (partial - total) / k:
            theta = (partial - total) / k
    return [max(x - theta, Fraction(0)) for x in v]


def documented_descent(F, G, n, penalty, max_iter, tol):
    """DWR's iteration as its docstring states it, in exact rational arithmetic, for a
    decorrelation term F with gradient G (functions of the weights): the loss
    ``F(w) / F(1) + penalty mean((w - 1)^2)``, first step n, Armijo constant 1e-4,
    halving down to a step below 1e-12, a rise ends the descent, the next iteration
    starts at twice the step taken, stop at a decrease at most ``tol |f|``. Returns the
    weights and every point F was evaluated at (the start, then the trials)."""
    from fractions import Fraction

    points = [[Fraction(1)] * n]
    start = F(points[0])

    def f(v):
        return F(v) / start + penalty * sum((x - 1) ** 2 for x in v) / n

    def g(v):
        return [a / start + 2 * penalty * (x - 1) / n for a, x in zip(G(v), v)]

    w = points[0]
    value, grad, step = f(w), g(w), Fraction(n)
    points.append(w)
    for _ in range(max_iter):
        while True:
            trial = simplex_projection_exact([x - step * d for x, d in zip(w, grad)], n)
            points.append(trial)
            new = f(trial)
            slope = sum(d * (x - t) for d, x, t in zip(grad, w, trial))
            if new <= value - Fraction(1, 10**4) * slope or step < Fraction(1, 10**12):
                break
            step /= 2
        if new > value:
            break
        done = value - new <= tol * abs(value)
        w, value, grad, step = trial, new, g(trial), 2 * step
        if done:
            break
    return w, points


def fake_decorrelation_term(F, G, monkeypatch):
    """Put ``(F, G)`` in place of the block's decorrelation term, in floats; returns the
    list the points it is evaluated at are appended to."""
    from fractions import Fraction

    import causefs.blocks.initialization.decorrelation_weights as module

    points = []

    def term(Z, v):
        points.append(v.copy())
        exact = [Fraction(x) for x in v]
        return float(F(exact)), np.array([float(d) for d in G(exact)])

    monkeypatch.setattr(module, "decorrelation_loss", term)
    return points


@pytest.mark.parametrize(("target", "penalty", "tol"), [
    # the next search starts at 2 s (another start, another factor: other trials); the
    # relative decrease is measured against the loss itself (not one off by a constant)
    ((1, 3, 1, 1), 0.25, 0.5),
    # a trial of equal loss fails Armijo's test (1e-4 > 0); steps below 1 are taken
    ((2, 1, 1, 1), 0.0, 0.0),
    # a decrease of exactly tol |f| stops the descent
    ((1, 2, 2, 1), 1.0, 0.25),
])
def test_dwr_follows_the_documented_line_search_step_by_step(monkeypatch, target, penalty,
                                                              tol):
    """The block's descent is the iteration its docstring states, trial by trial: with a
    quadratic ``F(w) = |w - a|^2`` in place of the decorrelation term (n = 4, a of small
    integers, F(1) a power of two) every trial point and loss is a short binary fraction,
    so the block's floating-point run is exact and equals the rational reference
    :func:`documented_descent` point for point, ties included (a trial whose loss equals
    the current one, a decrease of exactly ``tol |f|``). A changed step factor, Armijo
    constant, smallest step, start of the next search or stopping rule gives other
    trials."""
    from fractions import Fraction

    a = [Fraction(x) for x in target]

    def F(v):
        return sum((x - y) ** 2 for x, y in zip(v, a))

    def G(v):
        return [2 * (x - y) for x, y in zip(v, a)]

    X = np.arange(8.0).reshape(4, 2) ** 2  # not used by the fake term
    for max_iter in range(7):
        points = fake_decorrelation_term(F, G, monkeypatch)
        w = DecorrelationWeightsBlock(penalty=penalty, max_iter=max_iter, tol=tol).weights(X)
        expected, expected_points = documented_descent(F, G, 4, Fraction(penalty), max_iter,
                                                       Fraction(tol))
        assert np.array_equal(w, np.array(expected, dtype=float)), max_iter
        assert len(points) == len(expected_points), max_iter
        for got, want in zip(points, expected_points):
            assert np.array_equal(got, np.array(want, dtype=float)), max_iter


@pytest.mark.parametrize(("slope", "moved"), [
    ((1, 1, 1, 1, 1, 1, 1, 1), False),      # stationary: the projection returns w
    ((1, -1, 1, -1, 1, -1, 1, -1), True),   # a slope the loss's value does not show
])
def test_dwr_line_search_where_the_loss_is_flat(monkeypatch, slope, moved):
    """A decorrelation term whose value is the same everywhere (a loss flat to rounding
    near its minimum), with a given slope. Where the slope is the same for every sample
    (stationary on the mean-one weights), the first trial is w itself: Armijo's test
    holds with equality, the descent stops after that one trial (equal to the rational
    reference, evaluations counted). Otherwise no trial lowers the loss: the step is
    halved from n = 8 down to the first below 1e-12, 2^-40, whose trial, of equal loss
    (not a rise), is taken, and the decrease 0 stops the descent there: the weights are
    ``1 - 2^-40 slope``, exact in floating point."""
    from fractions import Fraction

    def F(v):
        return Fraction(1)

    def G(v):
        return [Fraction(s) for s in slope]

    X = np.arange(16.0).reshape(8, 2) ** 2
    points = fake_decorrelation_term(F, G, monkeypatch)
    w = DecorrelationWeightsBlock(penalty=0.0).weights(X)
    expected, expected_points = documented_descent(F, G, 8, 0, 300, Fraction(1, 10**6))
    assert np.array_equal(w, np.array(expected, dtype=float))
    assert np.array_equal(w, 1.0 - 2.0**-40 * np.array(slope)) if moved else np.all(w == 1.0)
    assert len(points) == len(expected_points) == (3 if not moved else 2 + 44)
    for got, want in zip(points, expected_points):
        assert np.array_equal(got, np.array(want, dtype=float))


def test_srdo_classifier_is_the_documented_logistic_regression(monkeypatch):
    """The docstring's classifier: scikit-learn's ``LogisticRegression`` with inverse
    strength C and ``max_iter=1000``, read off the estimator the block fits (a spy
    subclass records its parameters)."""
    import sklearn.linear_model
    from sklearn.linear_model import LogisticRegression

    fitted = []

    class Spy(LogisticRegression):
        def fit(self, X, y, sample_weight=None):
            fitted.append(self.get_params())
            return super().fit(X, y, sample_weight)

    monkeypatch.setattr(sklearn.linear_model, "LogisticRegression", Spy)
    DensityRatioWeightsBlock(C=0.5).weights(confounded(100), seed=0)
    assert len(fitted) == 1
    defaults = LogisticRegression().get_params()
    assert {k: v for k, v in fitted[0].items() if v != defaults[k]} == {"C": 0.5,
                                                                        "max_iter": 1000}


def stub_classifier(decision, monkeypatch):
    """Put a classifier whose decision function on the data is ``decision`` (the log
    density ratios) in place of the block's logistic regression."""
    import sklearn.linear_model

    class Stub:
        def __init__(self, **params):
            pass

        def fit(self, X, y):
            return self

        def decision_function(self, S):
            assert S.shape[0] == decision.size  # the data's rows, not the permuted ones
            return decision

    monkeypatch.setattr(sklearn.linear_model, "LogisticRegression", Stub)


def capped_by_bisection(ratio, cap):
    """``min(s r, cap)`` with mean one, s found by bisection on the mean (increasing in
    s) to the last bit: an independent computation of the documented fixed point."""
    low, high = 0.0, ratio.size / ratio.max() * 1e18
    for _ in range(4000):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        low, high = (middle, high) if np.minimum(middle * ratio, cap).mean() < 1 else (low, middle)
    return np.minimum(high * ratio, cap)


def srdo_weights(decision, max_ratio, monkeypatch):
    """The block's weights of 2-feature data when the classifier's log ratios are
    ``decision``."""
    stub_classifier(np.asarray(decision, dtype=float), monkeypatch)
    X = np.arange(2.0 * len(decision)).reshape(-1, 2) ** 2
    return DensityRatioWeightsBlock(max_ratio=max_ratio).weights(X, seed=0)


def test_srdo_weights_where_the_cap_binds_on_nearly_all_of_them(monkeypatch):
    """Nine equal ratios and a tenth e^-30 of them, the cap 1.05: the weights of mean
    one below the cap are nine at 1.05 and the tenth 10 - 9.45 = 0.55. Rounds of
    clipping and rescaling (the block's code before 2026-11-29) move the tenth by only
    ~10 / 9.45 a round: after their 100 the largest weight was still above 1.1."""
    w = srdo_weights(np.r_[np.zeros(9), -30.0], 1.05, monkeypatch)
    np.testing.assert_allclose(w, np.r_[np.full(9, 1.05), 0.55], rtol=1e-12)
    assert w.max() <= 1.05


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("cap", [1.01, 1.1, 2.0, 10.0])
def test_srdo_weights_are_the_capped_ratios_of_mean_one(monkeypatch, seed, cap):
    """The docstring: ``min(s r, max_ratio)`` with mean one, against the same found by
    bisection on s; the cap holds exactly, and ratios that need no clipping come back
    scaled to mean one."""
    rng = np.random.default_rng(seed)
    decision = 2.0 * rng.standard_normal(int(rng.integers(5, 300)))
    w = srdo_weights(decision, cap, monkeypatch)
    ratio = np.exp(decision)
    np.testing.assert_allclose(w, capped_by_bisection(ratio, cap), rtol=1e-12, atol=0)
    assert w.max() <= cap and w.mean() == pytest.approx(1.0, rel=1e-13)
    if ratio.max() / ratio.mean() <= cap:
        np.testing.assert_allclose(w, ratio / ratio.mean(), rtol=1e-14)


def test_srdo_weights_of_exactly_n_over_the_cap_positive_ratios_are_capped(monkeypatch):
    """Four ratios, two positive, the cap 2: exactly ``n / cap`` positive ratios can carry
    the total at the cap, ``(2, 2, 0, 0)``: the boundary of the uniform fallback (fewer
    than ``n / cap``), where the second ratio's scaled value ties the cap exactly."""
    w = srdo_weights(np.log([5.0, 1.0]).tolist() + [-1000.0, -1000.0], 2.0, monkeypatch)
    assert np.array_equal(w, [2.0, 2.0, 0.0, 0.0])


def test_srdo_weights_where_rounding_refuses_every_scale_are_uniform(monkeypatch):
    """The cap ``fl(4/3)``, whose triple rounds to 4 = n (no room left after three
    clipped), and ratios ``e^30, e^30, 1, ~1e-304``: clipping two leaves a room that
    rounds one ulp above the cap, and the third ratio carries all of the rest to
    rounding, so no scale passes the test and the weights are the uniform fallback, of
    mean one (never a scale of 0 from a room of exactly 0)."""
    cap = 4.0 / 3.0
    assert 3 * cap == 4.0 and 4.0 - 2 * cap > cap
    w = srdo_weights([30.0, 30.0, 0.0, -700.0], cap, monkeypatch)
    assert np.array_equal(w, np.ones(4))


@pytest.mark.parametrize("cap", [2.0, 3.0])
def test_srdo_weights_of_too_few_positive_ratios_are_uniform(monkeypatch, cap):
    """Ten ratios of which four are positive (the others underflowed to 0): weights of
    mean one would put 10 on those four, more than the cap allows (at most 4 cap < 10
    for a cap of 2; for 3 the four can carry it: 2.5 each, below 3)."""
    decision = np.r_[np.full(6, -1000.0), np.zeros(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division by the zero rest on the way
        w = srdo_weights(decision, cap, monkeypatch)
    if cap == 2.0:
        assert np.array_equal(w, np.ones(10))
    else:
        np.testing.assert_allclose(w, np.r_[np.zeros(6), np.full(4, 2.5)], rtol=1e-15)


