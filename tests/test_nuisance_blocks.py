"""The nuisance blocks (centring, effect, balance weights) and the nuisance effects,
against computations written here: R^2 of every column on [1, Z] by least squares, the
effect's regression on the clusters by least squares with the shrinkage its docstring
states, the balance weights' documented rules (nothing to balance, the scale of mu), and
what each block declares against what it runs."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

from causefs.blocks.nuisance.nuisance_adjustment import (NuisanceCenteringBlock,
                                                         NuisanceEffectBlock)
from causefs.blocks.nuisance.nuisance_balance_weights import NuisanceBalanceWeightsBlock
from causefs.core.state import State
from causefs.core.validation import InvalidParameterError
from causefs.engine import balance_of
from causefs.kernels import LinearKernel
from causefs.model.fit_size import FitSize
from causefs.model.nuisance_coding import code_nuisance
from causefs.model.problem import Problem
from causefs.model.settings import Settings
from causefs.model.treatments import treatment_coding
from causefs.numerics.nuisance_effects import (cluster_evidence, conditional_kmeans,
                                               variance_share)
from causefs.qp.gradient_projection_cg import GradientProjectionCGBackend


def reference_share(X, Z):
    """R^2 of each column on [1, Z] (least squares); 0 for a column that does not vary
    beyond rounding (centred sum of squares below 1e-8 of its sum of squares)."""
    n, d = X.shape
    design = np.column_stack([np.ones(n), Z])
    shares = []
    for f in range(d):
        x = X[:, f]
        centred = np.sum((x - x.mean()) ** 2)
        if centred <= 1e-8 * np.sum(x * x):
            shares.append(0.0)
            continue
        fitted = design @ np.linalg.lstsq(design, x, rcond=None)[0]
        shares.append(np.sum((fitted - x.mean()) ** 2) / centred)
    return np.array(shares)


@pytest.fixture
def nuisance_data():
    rng = np.random.default_rng(0)
    n = 60
    labels = rng.integers(0, 3, n)
    X = rng.random((n, 5)) + 10.0 * np.arange(5)  # columns of different means
    X[:, 0] += 2.0 * labels                       # mostly Z
    X[:, 3] = 7.0                                  # constant
    X[:, 4] = 1e3 + 1e-9 * rng.random(n)           # constant up to rounding
    return X, labels


@pytest.mark.parametrize("form", ["dense", "sparse"])
def test_variance_share_is_the_r2_on_z(nuisance_data, form):
    X, labels = nuisance_data
    Z = code_nuisance(labels, len(labels))
    data = sp.csr_array(X) if form == "sparse" else X
    share = variance_share(data, Z)
    np.testing.assert_allclose(share, reference_share(X, Z), atol=1e-12)
    assert share[0] > 0.8 and share[3] == 0.0 and share[4] == 0.0


def test_variance_share_ignores_directions_z_does_not_have():
    """Z with a repeated column (rank 1 of 2), at a large scale, and no Z at all."""
    rng = np.random.default_rng(1)
    X = rng.random((40, 4))
    z = code_nuisance(rng.integers(0, 2, 40), 40)
    Z = 1e6 * np.column_stack([z, z])
    np.testing.assert_allclose(variance_share(X, Z), reference_share(X, z), atol=1e-10)
    np.testing.assert_array_equal(variance_share(X, np.zeros((40, 0))), np.zeros(4))


def test_variance_share_is_one_at_most():
    """Columns that are combinations of Z's: share 1, never above."""
    rng = np.random.default_rng(2)
    Z = code_nuisance(rng.integers(0, 4, 50), 50)
    X = 3.0 + Z @ rng.standard_normal((Z.shape[1], 30))
    share = variance_share(X, Z)
    assert np.all(share <= 1.0)
    np.testing.assert_allclose(share, 1.0, rtol=1e-12)


def test_cluster_evidence_defaults_are_those_documented():
    """``top=4, n_init=8, seed=0``: the same p-values as given explicitly."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 12))
    Z = code_nuisance(rng.integers(0, 2, 40), 40)
    scores = rng.random(12)
    np.testing.assert_array_equal(cluster_evidence(X, Z, scores, 2),
                                  cluster_evidence(X, Z, scores, 2, top=4, n_init=8, seed=0))
    assert not np.array_equal(cluster_evidence(X, Z, scores, 2),
                              cluster_evidence(X, Z, scores, 2, top=5, n_init=8, seed=0))


def problem_of(X, labels, h, sample_weights="mean_one"):
    n = X.shape[0]
    return Problem(X=X, coding=treatment_coding(X, "median", "group"),
                   Z=code_nuisance(labels, n), n_clusters=h,
                   sample_weights=sample_weights, balance=balance_of(LinearKernel()))


def reference_effect(X, Z, clusters, h):
    """Z's coefficients beside the intercept and the indicators of clusters 1..h-1 (least
    squares), each feature's shrunk by max(0, 1 - 1/F), F the F statistic of Z given the
    clusters."""
    n = X.shape[0]
    base = np.column_stack([np.ones(n)] + [clusters == c for c in range(1, h)]).astype(float)
    full = np.column_stack([base, Z])
    q = Z.shape[1]
    theta = np.linalg.lstsq(full, X, rcond=None)[0][-q:]
    for f in range(X.shape[1]):
        rss0 = np.sum((X[:, f] - base @ np.linalg.lstsq(base, X[:, f], rcond=None)[0]) ** 2)
        rss1 = np.sum((X[:, f] - full @ np.linalg.lstsq(full, X[:, f], rcond=None)[0]) ** 2)
        F = ((rss0 - rss1) / q) / (rss1 / (n - full.shape[1]))
        theta[:, f] *= max(0.0, 1.0 - 1.0 / F)
    return theta


def test_the_effect_block_passes_its_options_and_regresses_on_every_cluster():
    """top, n_init and seed reach the clustering (on the top * h features of largest
    ||W_f||); the regression has an indicator for each cluster but the first (h = 3)."""
    rng = np.random.default_rng(4)
    n, d, h = 90, 9, 3
    labels = rng.integers(0, 2, n)
    X = rng.standard_normal((n, d)) + 0.7 * labels[:, None]
    W = rng.standard_normal((d, 2))
    state = State(problem_of(X, labels, h)).replace(W=W)
    Z = state.problem.Z
    block = NuisanceEffectBlock(top=1, n_init=1, seed=7)
    chosen = np.argsort(-np.einsum("ij,ij->i", W, W), kind="stable")[:3]
    clusters = conditional_kmeans(X[:, chosen], Z, h, n_init=1, seed=7)
    assert len(np.unique(clusters)) == 3
    np.testing.assert_allclose(block.step(state).Theta, reference_effect(X, Z, clusters, h),
                               atol=1e-10)
    # the options matter on these data: other seeds, starts or features, other clusters
    for other in (dict(top=1, n_init=1, seed=0), dict(top=3, n_init=1, seed=7),
                  dict(top=1, n_init=4, seed=7)):
        assert not np.allclose(NuisanceEffectBlock(**other).step(state).Theta,
                               block.step(state).Theta), other
    defaults = NuisanceEffectBlock()
    assert (defaults.top, defaults.n_init, defaults.seed) == (4, 4, 0)


def test_the_centring_block_is_the_shrunk_regression_on_z_alone(nuisance_data):
    X, labels = nuisance_data
    X = X[:, :3]
    state = State(problem_of(X, labels, 2))
    Z = state.problem.Z
    expected = reference_effect(X, Z, np.zeros(len(X), dtype=int), 1)
    np.testing.assert_allclose(NuisanceCenteringBlock().step(state).Theta, expected,
                               atol=1e-10)


def balance_block(**options):
    return NuisanceBalanceWeightsBlock(GradientProjectionCGBackend(), **options)


def test_the_balance_weights_sum_to_the_problems_total():
    rng = np.random.default_rng(5)
    labels = np.arange(30) % 2
    X = rng.random((30, 4)) + 0.5 * labels[:, None]
    for sample_weights, total in (("mean_one", 30.0), ("simplex", 1.0)):
        mu = balance_block().step(State(problem_of(X, labels, 2, sample_weights))).mu
        assert mu.sum() == pytest.approx(total) and (mu >= 0).all()
        assert not np.allclose(mu, mu.mean())  # something was balanced


def test_nothing_to_balance_leaves_uniform_weights():
    """Z that does not vary (a zero column) or no Z column: every weight 1."""
    rng = np.random.default_rng(6)
    X = rng.random((20, 3))
    for Z in (np.zeros((20, 1)), np.zeros((20, 0))):
        problem = Problem(X=X, coding=treatment_coding(X, "median", "group"), Z=Z,
                          n_clusters=2, balance=balance_of(LinearKernel()))
        np.testing.assert_array_equal(balance_block().weights(State(problem)), np.ones(20))


def test_the_balance_weights_need_the_balance_operator_and_a_penalty_of_at_least_zero():
    X = np.random.default_rng(7).random((10, 3))
    problem = Problem(X=X, coding=treatment_coding(X, "median", "group"),
                      Z=code_nuisance(np.arange(10) % 2, 10), n_clusters=2)
    with pytest.raises(ValueError, match="^" + re.escape(
            "nuisance_balance_weights needs the problem's balance operator "
            "(Problem(balance=...), made by causefs.engine.balance_of)") + "$"):
        balance_block().weights(State(problem))
    for penalty in (-0.1, -1):
        with pytest.raises(InvalidParameterError, match=r"^penalty=-0?\.?1?"):
            balance_block(penalty=penalty)
    assert balance_block(penalty=0).penalty == 0


def size_of(n, d, h=3, q=0):
    return FitSize(n, d, Settings(n_clusters=h), n_nuisance=q)


@pytest.mark.parametrize("block", [NuisanceCenteringBlock(), NuisanceEffectBlock(),
                                   balance_block()], ids=lambda b: b.name)
def test_the_nuisance_blocks_price_work_linear_in_the_data(block):
    """Each block's work grows as n d (the regression's products and copies of X; the
    balance operator's products), the effect's clustering as n and the features it
    clusters, at most top * h; memory is named after the block and grows with n, d and
    the coded columns q of Z."""
    base = block.cost(size_of(1000, 40))
    phase = block.name.replace("_weights", "")
    assert base.flops > 0 and list(base.memory) == [phase]
    for n, d in ((2000, 40), (1000, 80)):
        cost = block.cost(size_of(n, d))
        assert cost.memory[phase] > base.memory[phase]
        if not isinstance(block, NuisanceEffectBlock) or d == 40:
            assert cost.flops == pytest.approx(2 * base.flops)
    assert block.cost(size_of(1000, 40, q=5)).memory[phase] > base.memory[phase]


# one start of the effect's clustering: the starts run in turn, so its peak is the same
@pytest.mark.parametrize("block", [NuisanceCenteringBlock(), NuisanceEffectBlock(n_init=1),
                                   balance_block()], ids=lambda b: b.name)
@pytest.mark.parametrize(("n", "d", "levels", "h"), [
    (1500, 40, 2, 3), (1500, 40, 21, 3), (1000, 60, 2, 10), (800, 400, 21, 10),
    (200, 4000, 2, 3), (200, 4000, 21, 3), (100, 8000, 11, 5)])
def test_the_nuisance_blocks_memory_bounds_the_measured_peak(block, n, d, levels, h):
    """The declared phase is at least the peak a step allocates (the memory guard must
    not let through a fit that does not fit) and at most a quarter above it (the balance
    weights: 1.6 times, their operator's moments at n = 100-200, where the peak is not
    3 n d), whether the data's copies, Z's q = levels - 1 columns, the (q, d)
    coefficients or, for the effect, the clustering of its top * h features (d = 60,
    h = 10) dominate. Declared as 2 n d and 3 n d alone, centring and balancing fell
    below the peak (0.87-1.00 of it) and the effect at d = 60, h = 10 to half of it."""
    rng = np.random.default_rng(0)
    labels = np.arange(n) % levels
    X = rng.random((n, d)) + 0.5 * labels[:, None] * (np.arange(d) < d // 4)
    state = State(problem_of(X, labels, h)).replace(W=rng.standard_normal((d, h)))
    assert state.problem.Z.shape[1] == levels - 1
    from test_descent_block_costs import step_peak

    phase = block.name.replace("_weights", "")
    declared = block.cost(size_of(n, d, h, q=levels - 1)).memory[phase]
    peak = step_peak(block, state)
    slack = 1.6 if block.name == "nuisance_balance_weights" else 1.25
    assert peak <= declared <= slack * peak, (peak, declared)


def test_the_effect_block_prices_its_clustering_on_the_top_features_only():
    """Its work: the regression, linear in d, and n_init starts of the clustering on
    min(d, top * h) features: linear in d beyond top * h features, affine in n_init, and
    the same for every top once all features are clustered."""
    def flops(d, top=2, n_init=4):
        return NuisanceEffectBlock(top=top, n_init=n_init).cost(size_of(1000, d)).flops

    assert flops(80) - flops(40) == pytest.approx(flops(120) - flops(80))
    assert flops(40, n_init=6) - flops(40, n_init=4) \
        == pytest.approx(flops(40, n_init=4) - flops(40, n_init=2))
    assert flops(40, n_init=4) > flops(40, n_init=2)
    assert flops(40, top=2) < flops(40, top=3)  # 6 and 9 of 40 features
    assert flops(40, top=20) == pytest.approx(flops(40, top=30))  # all 40


# --------------------------------------------- the partial F test, k-means ----------

def partial_f(x, B, labels):
    """The partial F test of the cluster indicators beside [1, indicators of B], by two
    least-squares fits (tests/test_nuisance.py)."""
    from test_nuisance import _partial_f_pvalue

    return _partial_f_pvalue(x, B, labels)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("scale", [1.0, 1e-8])
def test_cluster_pvalues_of_two_clusters_at_any_scale(scale):
    """Two clusters (one indicator: df1 = 1), data of any scale, a feature the clusters
    explain exactly (p = 0, no division by zero) and a constant one (p = 1)."""
    from causefs.numerics.nuisance_effects import cluster_pvalues

    rng = np.random.default_rng(11)
    n = 40
    labels, B = rng.integers(0, 2, n), rng.integers(0, 2, n)
    X = scale * rng.standard_normal((n, 4))
    X[:, 0] += scale * 0.9 * labels
    X[:, 2] = scale * labels      # the clusters themselves
    X[:, 3] = 5.0 * scale          # constant
    Z = code_nuisance(B, n)
    got = cluster_pvalues(X, Z, labels)
    np.testing.assert_allclose(got[:2], [partial_f(X[:, j], B, labels) for j in range(2)],
                               rtol=1e-8)
    assert got[2] == 0.0 and got[3] == 1.0


def test_cluster_pvalues_without_residual_degrees_of_freedom_are_one():
    """[1, Z, indicators] of rank n (df2 = 0): no evidence; df2 = 1: the F test."""
    from causefs.numerics.nuisance_effects import cluster_pvalues

    rng = np.random.default_rng(12)
    X = rng.standard_normal((4, 2))
    labels, B = np.array([0, 1, 2, 2]), np.array([1, 0, 1, 0])
    assert cluster_pvalues(X, code_nuisance(B, 4), labels).tolist() == [1.0, 1.0]
    X = rng.standard_normal((5, 2))
    labels, B = np.array([0, 1, 2, 2, 0]), np.array([1, 0, 1, 0, 1])
    np.testing.assert_allclose(cluster_pvalues(X, code_nuisance(B, 5), labels),
                               [partial_f(X[:, j], B, labels) for j in range(2)], rtol=1e-8)


def test_a_feature_constant_up_to_rounding_carries_no_evidence():
    """A column 1e3 + 1e-7 * (its cluster): it varies by 1e-20 of its square; p = 1."""
    from causefs.numerics.nuisance_effects import cluster_pvalues

    labels = np.arange(30) % 3
    X = (1e3 + 1e-7 * labels)[:, None]
    assert cluster_pvalues(X, np.zeros((30, 0)), labels).tolist() == [1.0]


def test_an_emptied_cluster_stays_empty_and_a_single_sample_is_its_centre():
    """Lloyd's steps from labels that leave cluster 2 of 3 empty never assign it; the
    centre of a cluster of one sample is that sample (shifted)."""
    from causefs.numerics import nuisance_effects

    rng = np.random.default_rng(13)
    X = rng.standard_normal((30, 3))
    Z = np.zeros((30, 0))
    inertia, labels = nuisance_effects._lloyd(X, Z, np.arange(30) % 2, 3, 30)
    assert set(labels) == {0, 1}
    assert inertia == pytest.approx(sum(np.sum((X[labels == c] - X[labels == c].mean(axis=0))
                                               ** 2) for c in (0, 1)), rel=1e-10)
    single = np.r_[0, np.ones(29, dtype=int)]
    shifted, centres, counts = nuisance_effects._shifted_centres(X, Z, single, 2)
    np.testing.assert_allclose(centres, [X[0], X[1:].mean(axis=0)], rtol=1e-12)
    np.testing.assert_array_equal(counts, [1, 29])


def test_the_clustering_options_reach_k_means_and_the_defaults_are_those_documented(
        monkeypatch):
    """conditional_kmeans: n_init starts of one k-means++ run each, the even ones on X
    less Z's least-squares fit (unshrunk), the odd ones on X; defaults n_init=4, seed=0,
    and the same for clusters_of_top_features (top=4); ties among the scores go to the
    first features."""
    import sklearn.cluster

    from causefs.numerics import nuisance_effects

    rng = np.random.default_rng(14)
    n = 60
    B = rng.integers(0, 2, n)
    Z = code_nuisance(B, n)
    X = rng.standard_normal((n, 30)) + 0.3 * B[:, None]
    seen = []
    real = sklearn.cluster.KMeans

    class Spy(real):
        def fit_predict(self, data, *args, **kwargs):
            seen.append((data.copy(), self.n_init))
            return super().fit_predict(data, *args, **kwargs)

    monkeypatch.setattr(sklearn.cluster, "KMeans", Spy)
    nuisance_effects.conditional_kmeans(X, Z, 3, n_init=3, seed=2)
    design = np.column_stack([np.ones(n), Z])
    conditioned = X - Z @ np.linalg.lstsq(design, X, rcond=None)[0][1:]
    assert len(seen) == 3 and all(n_init == 1 for _, n_init in seen)
    np.testing.assert_allclose(seen[0][0], conditioned, atol=1e-12)
    np.testing.assert_array_equal(seen[1][0], X)
    np.testing.assert_allclose(seen[2][0], conditioned, atol=1e-12)
    monkeypatch.setattr(sklearn.cluster, "KMeans", real)

    scores = np.random.default_rng(0).integers(0, 3, 30).astype(float)  # many ties
    labels, chosen = nuisance_effects.clusters_of_top_features(X, Z, scores, 3)
    first = sorted(range(30), key=lambda f: (-scores[f], f))[:12]
    np.testing.assert_array_equal(chosen, first)
    np.testing.assert_array_equal(labels, nuisance_effects.conditional_kmeans(
        X[:, first], Z, 3, n_init=4, seed=0))
    np.testing.assert_array_equal(nuisance_effects.conditional_kmeans(X, Z, 3),
                                  nuisance_effects.conditional_kmeans(X, Z, 3, n_init=4,
                                                                      seed=0))
    one, _ = nuisance_effects.clusters_of_top_features(X, Z, scores, 3, n_init=1, seed=3)
    np.testing.assert_array_equal(one, nuisance_effects.conditional_kmeans(
        X[:, first], Z, 3, n_init=1, seed=3))


def test_the_clusterings_default_starts_and_steps_are_the_documented_ones(monkeypatch):
    """The defaults counted where they act (equal labels cannot show them: one start more
    finds the same clusters on easy data): conditional_kmeans makes n_init = 4 starts of
    at most max_iter = 30 alternations, clusters_of_top_features 4 starts and
    cluster_evidence 8."""
    from causefs.numerics import nuisance_effects

    rng = np.random.default_rng(5)
    B = rng.integers(0, 2, 40)
    Z, X = code_nuisance(B, 40), rng.standard_normal((40, 6))
    steps = []
    lloyd = nuisance_effects._lloyd

    def counted(X, Z, labels, k, max_iter):
        steps.append(max_iter)
        return lloyd(X, Z, labels, k, max_iter)

    monkeypatch.setattr(nuisance_effects, "_lloyd", counted)
    nuisance_effects.conditional_kmeans(X, Z, 2)
    assert steps == [30] * 4
    steps.clear()
    nuisance_effects.clusters_of_top_features(X, Z, np.arange(6.0), 2)
    assert steps == [30] * 4
    steps.clear()
    nuisance_effects.cluster_evidence(X, Z, np.arange(6.0), 2)
    assert steps == [30] * 8


def test_cluster_evidence_passes_its_starts_and_seed():
    from causefs.numerics.nuisance_effects import clusters_of_top_features

    rng = np.random.default_rng(15)
    X = rng.standard_normal((50, 10))
    Z = code_nuisance(rng.integers(0, 2, 50), 50)
    scores = rng.random(10)
    runs = {(n_init, seed): cluster_evidence(X, Z, scores, 3, top=2, n_init=n_init, seed=seed)
            for n_init, seed in ((1, 5), (8, 5), (1, 6))}
    labels = {key: clusters_of_top_features(X, Z, scores, 3, top=2, n_init=key[0],
                                            seed=key[1])[0] for key in runs}
    for a in runs:
        for b in runs:
            if not np.array_equal(labels[a], labels[b]):
                assert not np.allclose(runs[a], runs[b]), (a, b)
    assert len({labels[key].tobytes() for key in runs}) == 3


def test_no_nuisance_column_has_no_effect():
    from causefs.numerics.nuisance_effects import nuisance_regression

    X = np.random.default_rng(16).random((10, 3))
    assert nuisance_regression(X, np.zeros((10, 0))).shape == (0, 3)


def test_cluster_evidence_never_reassigns_a_sample_to_an_empty_cluster(monkeypatch):
    """Clusters of the top features that left cluster 2 of 3 empty: each feature's
    samples are reassigned among clusters 0 and 1 only (by hand: Z's shift beside the
    indicator by least squares, the centres of the shifted data, the nearest centre
    without the feature's column), and its p-value is the partial F test of those."""
    from causefs.numerics import nuisance_effects

    rng = np.random.default_rng(17)
    n = 60
    B = rng.integers(0, 2, n)
    Z = code_nuisance(B, n)
    labels = (np.arange(n) < 30).astype(int)
    X = rng.standard_normal((n, 4)) + 1.2 * labels[:, None]
    chosen = np.array([0, 1, 2])
    monkeypatch.setattr(nuisance_effects, "clusters_of_top_features",
                        lambda *args, **kwargs: (labels, chosen))
    got = nuisance_effects.cluster_evidence(X, Z, np.ones(4), 3)
    design = np.column_stack([np.ones(n), labels == 1, Z])
    shifted = X[:, chosen] - Z @ np.linalg.lstsq(design, X[:, chosen], rcond=None)[0][2:]
    centres = [shifted[labels == c].mean(axis=0) for c in (0, 1)]
    for j, feature in enumerate(chosen):
        others = [i for i in range(3) if i != j]
        without = np.array([np.argmin([np.sum((shifted[i, others] - centres[c][others]) ** 2)
                                       for c in (0, 1)]) for i in range(n)])
        assert got[feature] == pytest.approx(partial_f(X[:, feature], B, without), rel=1e-8)
    assert got[3] == pytest.approx(partial_f(X[:, 3], B, labels), rel=1e-8)


def centred_indicators(B):
    """Indicators of every level but the first, centred (levels of one sample allowed)."""
    E = (B[:, None] == np.unique(B)[1:]).astype(float)
    return E - E.mean(axis=0)


@pytest.mark.filterwarnings("error")
def test_the_effect_of_z_at_its_edges():
    """Against least squares written here: a repeated Z or design column at a large
    scale (the minimum-norm coefficients: the repeat adds nothing), data of scale 1e-4
    (shrunk as at scale 1), a constant feature (no effect, no 0/0), and no residual
    degree of freedom (unshrunk) or one (shrunk)."""
    from causefs.numerics.nuisance_effects import nuisance_regression

    rng = np.random.default_rng(18)
    n = 40
    B = rng.integers(0, 3, n)
    Z = code_nuisance(B, n)
    X = rng.standard_normal((n, 4)) + B[:, None]
    design = np.column_stack([np.ones(n), Z])
    alone = np.linalg.lstsq(design, X, rcond=None)[0][1:]
    twice = nuisance_regression(X, 1e6 * np.column_stack([Z, Z]), shrink=False)
    np.testing.assert_allclose(1e6 * (twice[:2] + twice[2:]), alone, rtol=1e-8)
    clusters = (rng.random(n) < 0.5).astype(float)[:, None]
    np.testing.assert_allclose(
        nuisance_regression(X, Z, 1e6 * np.column_stack([clusters, clusters])),
        nuisance_regression(X, Z, clusters), rtol=1e-8)
    small = nuisance_regression(1e-4 * X, Z)
    np.testing.assert_allclose(small, 1e-4 * reference_effect(X, Z, np.zeros(n, int), 1),
                               rtol=1e-8)
    X[:, 3] = 2.5
    np.testing.assert_allclose(nuisance_regression(X, Z)[:, 3], 0.0, atol=1e-12)
    X[:, 3] = 0.0  # nothing explained at all: no 0/0
    np.testing.assert_array_equal(nuisance_regression(X, Z)[:, 3], 0.0)
    # n = 1 + q: no degree of freedom left; n = 2 + q: one
    B3, X3 = np.array([0, 1, 2]), rng.standard_normal((3, 2))
    Z3 = centred_indicators(B3)
    np.testing.assert_allclose(nuisance_regression(X3, Z3), np.linalg.lstsq(
        np.column_stack([np.ones(3), Z3]), X3, rcond=None)[0][1:], atol=1e-12)
    B4, X4 = np.array([0, 1, 2, 2]), rng.standard_normal((4, 2))
    Z4 = centred_indicators(B4)
    np.testing.assert_allclose(nuisance_regression(X4, Z4),
                               reference_effect(X4, Z4, np.zeros(4, int), 1), atol=1e-12)


def test_the_effect_block_prices_both_parts_by_n_and_h_plus_4():
    """With every feature clustered (top * h >= d), the work is n d (h + 4) times a
    constant: twice the samples, twice the work; h from 3 to 6, 10/7 of it."""
    def flops(n, h):
        return NuisanceEffectBlock(top=20).cost(size_of(n, 40, h)).flops

    assert flops(2000, 3) == pytest.approx(2 * flops(1000, 3), rel=1e-12)
    assert flops(1000, 6) == pytest.approx(flops(1000, 3) * 10 / 7, rel=1e-12)


def test_a_penalty_that_is_no_number_is_refused():
    with pytest.raises(InvalidParameterError, match="^penalty='a'"):
        balance_block(penalty="a")


def test_nuisance_variables_of_zeros_explain_nothing():
    """A Z of zero columns (no direction to regress on: every singular value is 0, as is
    the bound they are compared with) has no effect and no share of any variance: zeros,
    not the 0 / 0 of dividing by its singular values."""
    from causefs.numerics.nuisance_effects import nuisance_regression

    X = np.random.default_rng(8).standard_normal((20, 3))
    Z = np.zeros((20, 2))
    with np.errstate(all="raise"):
        np.testing.assert_array_equal(nuisance_regression(X, Z), np.zeros((2, 3)))
        np.testing.assert_array_equal(nuisance_regression(X, Z, shrink=False),
                                      np.zeros((2, 3)))
        np.testing.assert_array_equal(variance_share(X, Z), np.zeros(3))
