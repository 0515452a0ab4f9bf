"""Known nuisance variables Z: coding, the effect estimates, the blocks and the estimator."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from scipy.stats import f as f_distribution
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

from causefs import CauseFS, causefs_scores
from causefs.blocks import NuisanceCenteringBlock
from causefs.core.state import State
from causefs.core.validation import InvalidParameterError
from causefs.datasets import make_shifted_clusters
from causefs.estimator import NuisanceUnusedWarning
from causefs.model.nuisance_coding import NuisanceWarning, code_nuisance
from causefs.model.problem import Problem
from causefs.model.treatments import treatment_coding
from causefs.numerics.nuisance_effects import (
    cluster_evidence,
    cluster_pvalues,
    conditional_kmeans,
    nuisance_regression,
)

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)


# --- coding -------------------------------------------------------------------------

def test_labels_are_indicators_of_every_level_but_the_first_centred():
    labels = np.array(["b", "a", "c", "a", "b", "c"])
    coded = code_nuisance(labels, 6)
    # levels sorted a < b < c; columns for b and c, centred
    indicators = np.array([[1, 0], [0, 0], [0, 1], [0, 0], [1, 0], [0, 1]], dtype=float)
    assert np.allclose(coded, indicators - indicators.mean(axis=0))
    assert np.allclose(code_nuisance(np.array([1, 0, 2, 0, 1, 2]), 6), coded)


def test_covariates_are_standardized_and_constant_columns_drop():
    rng = np.random.default_rng(0)
    Z = np.column_stack([rng.normal(5, 3, 40), np.full(40, 2.0)])
    with pytest.warns(NuisanceWarning, match=r"column\(s\) \[1\] do not vary"):
        coded = code_nuisance(Z, 40)
    assert coded.shape == (40, 1)
    assert np.allclose(coded[:, 0], (Z[:, 0] - Z[:, 0].mean()) / Z[:, 0].std())


def test_z_that_does_not_vary_is_refused_and_a_one_sample_level_warned():
    with pytest.raises(ValueError, match="does not vary .*pass nuisance=None"):
        code_nuisance(np.zeros(5, dtype=int), 5)
    with pytest.raises(ValueError, match="does not vary"):
        code_nuisance(np.array(["run1"] * 6), 6)
    with pytest.warns(NuisanceWarning, match=r"level\(s\) 'c' hold one sample"):
        coded = code_nuisance(np.array(["a", "a", "b", "b", "c", "a", "b"]), 7)
    assert coded.shape == (7, 2)


def test_pandas_series_and_frames_with_text_and_categories():
    pd = pytest.importorskip("pandas")
    levels = ["run1", "run2", "run1", "run3", "run2", "run3"]
    expected = code_nuisance(np.array(levels), 6)
    assert np.allclose(code_nuisance(pd.Series(levels), 6), expected)
    assert np.allclose(code_nuisance(pd.Series(levels, dtype="category"), 6), expected)
    age = [30.0, 41.0, 25.0, 33.0, 50.0, 45.0]
    frame = pd.DataFrame({"batch": levels, "age": age})
    assert np.allclose(code_nuisance(frame, 6),
                       np.hstack([expected, code_nuisance(np.array(age), 6)]))
    assert np.allclose(code_nuisance(frame[["batch"]], 6), expected)


class FakeFrame:
    """The part of a pandas DataFrame the coding reads (columns keep their dtypes)."""

    def __init__(self, *columns):
        self.columns = columns
        self.shape = (len(columns[0]), len(columns))
        self.dtypes = [c.dtype for c in columns]
        self.iloc = self

    def __getitem__(self, key):
        return self.columns[key[1]]


def test_a_frame_is_coded_column_by_column():
    site = np.array([0, 1, 1, 0, 2, 2])
    age = np.array([30.0, 41.0, 25.0, 33.0, 50.0, 45.0])
    coded = code_nuisance(FakeFrame(site, age), 6)
    assert np.allclose(coded, np.hstack([code_nuisance(site, 6), code_nuisance(age, 6)]))


@pytest.mark.parametrize("Z, match", [
    (np.zeros(4, dtype=int), "nuisance has 4 rows but X has 5 samples"),
    (np.array([0.0, 1.0, np.nan, 2.0, 1.0]), "NaN or infinite"),
    (np.array(["a", None, "b", "a", "b"], dtype=object), "missing values"),
    (np.zeros((5, 1, 1)), "1-D array of labels or a 2-D array"),
    (sp.csr_array(np.eye(5)), "sparse"),
    (np.ones(5, dtype=complex), "dtype complex"),
    (np.random.default_rng(0).normal(size=(5, 4)), "too many levels or variables"),
])
def test_bad_nuisance_is_refused_with_a_reason(Z, match):
    with pytest.raises(ValueError, match=match):
        code_nuisance(Z, 5)


# --- effect estimates ---------------------------------------------------------------

def _regression_coefficients(X, Z, design):
    """The coefficients of Z in the least-squares fit of X on [1, design, Z]: lstsq on
    the whole design, the independent computation."""
    full = np.column_stack([np.ones(len(X)), design, Z])
    coefficients = np.linalg.lstsq(full, X, rcond=None)[0]
    return coefficients[-Z.shape[1]:]


def test_effect_given_a_design_is_the_least_squares_coefficient():
    rng = np.random.default_rng(1)
    n, d = 80, 6
    design = rng.standard_normal((n, 3))
    Z = code_nuisance(rng.integers(0, 3, n), n)
    X = rng.standard_normal((n, d)) + design @ rng.standard_normal((3, d)) \
        + Z @ rng.standard_normal((2, d))
    assert np.allclose(nuisance_regression(X, Z, design, shrink=False),
                       _regression_coefficients(X, Z, design))
    alone = np.linalg.lstsq(np.column_stack([np.ones(n), Z]), X, rcond=None)[0][1:]
    assert np.allclose(nuisance_regression(X, Z, shrink=False), alone)


def test_shrinkage_is_one_minus_the_inverse_f_statistic():
    rng = np.random.default_rng(2)
    n, d = 60, 8
    design = rng.standard_normal((n, 2))
    Z = code_nuisance(rng.integers(0, 3, n), n)
    X = rng.standard_normal((n, d)) + Z @ (rng.standard_normal((2, d)) * np.r_[0, 0, 0, .2,
                                                                                .4, 1, 2, 4])
    Theta = nuisance_regression(X, Z, design)
    raw = _regression_coefficients(X, Z, design)
    for f in range(d):
        def rss(columns):
            A = np.column_stack([np.ones(n), *columns])
            residual = X[:, f] - A @ np.linalg.lstsq(A, X[:, f], rcond=None)[0]
            return residual @ residual
        small, large = rss([design]), rss([design, Z])
        F = ((small - large) / 2) / (large / (n - 1 - 2 - 2))
        assert np.allclose(Theta[:, f], max(0.0, 1.0 - 1.0 / F) * raw[:, f])


def test_directions_of_z_the_design_spans_get_no_effect():
    rng = np.random.default_rng(3)
    n = 50
    labels = rng.integers(0, 2, n)
    Z = code_nuisance(labels, n)
    X = rng.standard_normal((n, 4)) + 3.0 * labels[:, None]
    assert np.allclose(nuisance_regression(X, Z, labels[:, None].astype(float)), 0.0)


def test_conditional_kmeans_finds_clusters_a_strong_nuisance_hides():
    """Clusters C on 4 features, a nuisance Z independent of C shifting 20 features by
    far more: k-means on X finds Z; with a shift per value of Z it finds C."""
    rng = np.random.default_rng(4)
    n = 300
    C, B = rng.integers(0, 3, n), rng.integers(0, 2, n)
    X = rng.standard_normal((n, 24))
    X[:, :4] += 4.0 * np.eye(3)[C] @ rng.standard_normal((3, 4))
    X[:, 4:] += 6.0 * B[:, None]
    plain = KMeans(3, n_init=4, random_state=0).fit_predict(X)
    given = conditional_kmeans(X, code_nuisance(B, n), 3, seed=0)
    assert adjusted_rand_score(C, plain) < 0.5
    assert adjusted_rand_score(C, given) > 0.9


def _partial_f_pvalue(x, B, labels):
    """The textbook partial F test, from two explicit least-squares fits: x on
    [1, indicators of B] against x on [1, indicators of B, indicators of labels]."""
    n = x.size
    null = np.column_stack([np.ones(n)] + [B == b for b in np.unique(B)[1:]]).astype(float)
    full = np.column_stack([null] + [labels == c for c in np.unique(labels)[1:]]).astype(float)

    def rss(design):
        residual = x - design @ np.linalg.lstsq(design, x, rcond=None)[0]
        return residual @ residual

    df1 = np.linalg.matrix_rank(full) - np.linalg.matrix_rank(null)
    df2 = n - np.linalg.matrix_rank(full)
    F = ((rss(null) - rss(full)) / df1) / (rss(full) / df2)
    return f_distribution.sf(F, df1, df2)


def test_cluster_pvalues_are_the_partial_f_test_beside_z():
    rng = np.random.default_rng(6)
    n = 120
    labels, B = rng.integers(0, 3, n), rng.integers(0, 3, n)
    X = rng.standard_normal((n, 5))
    X[:, 0] += 0.8 * labels          # carries the clusters
    X[:, 1] += 2.0 * (B == 2)        # only Z explains it
    X[:, 2] += 0.4 * labels + B      # both
    expected = [_partial_f_pvalue(X[:, j], B, labels) for j in range(5)]
    assert np.allclose(cluster_pvalues(X, code_nuisance(B, n), labels), expected, rtol=1e-8)
    # without Z: the one-way ANOVA F test
    assert np.allclose(cluster_pvalues(X, np.zeros((n, 0)), labels),
                       [_partial_f_pvalue(X[:, j], np.zeros(n), labels) for j in range(5)])


def test_cluster_pvalues_without_evidence_are_one():
    rng = np.random.default_rng(7)
    n = 30
    X = np.column_stack([rng.standard_normal(n), np.full(n, 3.0)])
    B = rng.integers(0, 2, n)
    assert cluster_pvalues(X, code_nuisance(B, n), np.zeros(n, dtype=int)).tolist() == [1, 1]
    # clusters that are the levels of Z add nothing beside Z
    assert np.all(cluster_pvalues(X, code_nuisance(B, n), B) == 1.0)


def test_cluster_evidence_tests_the_clustered_features_against_clusters_without_them():
    rng = np.random.default_rng(8)
    n, h = 90, 3
    C, B = rng.integers(0, h, n), rng.integers(0, 2, n)
    X = rng.standard_normal((n, 8))
    X[:, :3] += 1.5 * np.eye(h)[C]
    X[:, 5] += 2.0 * B
    Z = code_nuisance(B, n)
    scores = np.array([8, 7, 6, 5, 0, 4, 0, 0.0])  # top * h = 6: columns 0, 1, 2, 3, 5, 4
    chosen = [0, 1, 2, 3, 5, 4]
    got = cluster_evidence(X, Z, scores, h, top=2, n_init=4, seed=0)
    labels = conditional_kmeans(X[:, chosen], Z, h, n_init=4, seed=0)
    # by hand: the shift of Z beside the cluster indicators by least squares, the centres
    # of the shifted data, every sample to the nearest centre without one column
    design = np.column_stack([np.ones(n), *(labels == c for c in range(1, h)), Z])
    coef = np.linalg.lstsq(design, X[:, chosen], rcond=None)[0]
    shifted = X[:, chosen] - Z @ coef[h:]
    centres = np.array([shifted[labels == c].mean(axis=0) for c in range(h)])
    expected = cluster_pvalues(X, Z, labels)
    for j, feature in enumerate(chosen):
        others = [i for i in range(len(chosen)) if i != j]
        distance = [[np.sum((shifted[i, others] - centres[c, others]) ** 2) for c in range(h)]
                    for i in range(n)]
        expected[feature] = _partial_f_pvalue(X[:, feature], B, np.argmin(distance, axis=1))
    assert np.allclose(got, expected, rtol=1e-8, atol=1e-300)


# --- blocks and the estimator -------------------------------------------------------

def test_centring_block_removes_the_environment_means():
    rng = np.random.default_rng(5)
    n = 40
    labels = rng.integers(0, 3, n)
    X = rng.random((n, 5)) + labels[:, None]
    problem = Problem(X=X, coding=treatment_coding(X, "median", "group"),
                      Z=code_nuisance(labels, n), n_clusters=2)
    new = NuisanceCenteringBlock().step(State(problem))
    # X - Z Theta: every environment's mean moved to the overall mean, up to the
    # shrinkage (1 - 1/F, F > 100 here) of a shift of 1 to 2
    before = np.stack([X[labels == level].mean(axis=0) for level in range(3)])
    after = np.stack([new.X_adjusted[labels == level].mean(axis=0) for level in range(3)])
    assert np.ptp(before, axis=0).min() > 1.5
    assert np.allclose(after, X.mean(axis=0), atol=0.03)


@pytest.fixture(scope="module")
def shifted():
    """Three training environments of different biases; a strong spurious block of 3
    groups: without Z the selectors pick it (docs/RESULTS.md)."""
    return make_shifted_clusters(n_train=300, n_test=200, n_groups=3, n_spurious=18,
                                 separation=2.0, spurious_separation=2.0,
                                 train_bias=[0.9, 0.6, 0.3], test_bias=[0.0, -0.9], seed=0)


def test_without_z_the_fit_is_cause_fs_i(shifted):
    auto = CauseFS(n_clusters=4, max_iter=3, random_state=0).fit(shifted.X)
    first = CauseFS(n_clusters=4, max_iter=3, random_state=0,
                    schedule="ablation_I").fit(shifted.X)
    assert np.array_equal(auto.scores_, first.scores_) and auto.schedule_ == "ablation_I"
    assert auto.nuisance_effect_ is None


def test_z_selects_the_nuisance_schedule_and_is_used_by_the_score_function(shifted):
    est = CauseFS(n_clusters=4, max_iter=3, random_state=0).fit(shifted.X,
                                                                nuisance=shifted.environment)
    assert est.nuisance_effect_.shape == (2, shifted.X.shape[1])
    explicit = CauseFS(n_clusters=4, max_iter=3, random_state=0,
                       schedule="nuisance_adjusted").fit(shifted.X, nuisance=shifted.environment)
    assert np.array_equal(est.scores_, explicit.scores_)
    scores = causefs_scores(shifted.X, nuisance=shifted.environment, n_clusters=4, max_iter=3,
                            random_state=0)
    assert np.array_equal(scores, est.scores_)


@pytest.mark.slow
def test_adjusting_for_z_recovers_the_causal_features(shifted):
    """The claim, on one instance of a regime that misleads the fit without Z."""
    top = {}
    for name, Z in (("without", None), ("with", shifted.environment)):
        est = CauseFS(n_clusters=4, n_features_to_select=8, random_state=0).fit(shifted.X,
                                                                                 nuisance=Z)
        top[name] = np.isin(np.flatnonzero(est.support_), shifted.causal).mean()
    assert top["without"] <= 0.75 and top["with"] == 1.0


def test_features_without_the_clusters_rank_after_those_with_them():
    """A strong nuisance block (separation 3): the adjusted fit alone ranks noise
    features among the 8 causal ones (recorded on this instance: 5 of 8 causal in its
    top 8 by score); the features that carry the clusters beside Z rank first."""
    data = make_shifted_clusters(n_train=600, n_test=10, n_groups=3, n_spurious=18,
                                 separation=2.0, spurious_separation=3.0,
                                 train_bias=[0.9, 0.6, 0.3], seed=3)
    est = CauseFS(n_clusters=4, n_features_to_select=8, random_state=3).fit(
        data.X, nuisance=data.environment)
    carries = est.carries_clusters_
    assert set(np.flatnonzero(carries)) == set(data.causal)
    assert est.ranking_[carries].max() < est.ranking_[~carries].min()
    assert set(np.flatnonzero(est.support_)) == set(data.causal)
    # within each part, by score; the scores are the fit's own
    for part in (carries, ~carries):
        order = np.flatnonzero(part)[np.argsort(est.ranking_[part])]
        assert np.all(np.diff(est.scores_[order]) <= 0)
    plain = CauseFS(n_clusters=4, n_features_to_select=8, random_state=3,
                    cluster_screen=None).fit(data.X, nuisance=data.environment)
    assert np.array_equal(plain.scores_, est.scores_) and plain.carries_clusters_ is None
    assert np.array_equal(np.argsort(plain.ranking_), np.argsort(-plain.scores_, kind="stable"))


def test_the_cluster_screen_needs_z_and_a_schedule_that_adjusts(shifted):
    assert CauseFS(n_clusters=4, max_iter=1).fit(shifted.X).carries_clusters_ is None
    with pytest.warns(NuisanceUnusedWarning):
        est = CauseFS(n_clusters=4, max_iter=1, schedule="full").fit(
            shifted.X, nuisance=shifted.environment)
    assert est.carries_clusters_ is None
    with pytest.raises(InvalidParameterError, match="cluster_screen"):
        CauseFS(n_clusters=4, cluster_screen=0.0).fit(shifted.X, nuisance=shifted.environment)


def test_unused_z_warns_and_missing_z_is_an_error(shifted):
    with pytest.warns(NuisanceUnusedWarning, match="schedule 'full' has no block"):
        CauseFS(n_clusters=4, max_iter=1, schedule="full").fit(shifted.X,
                                                               nuisance=shifted.environment)
    with pytest.raises(InvalidParameterError, match="none were given"):
        CauseFS(n_clusters=4, max_iter=1, schedule="nuisance_centered").fit(shifted.X)
    with pytest.raises(ValueError, match="rows but X has"):
        CauseFS(n_clusters=4, max_iter=1).fit(shifted.X, nuisance=shifted.environment[:-1])


def test_z_reaches_the_selector_in_a_pipeline_by_metadata_routing(shifted):
    with sklearn.config_context(enable_metadata_routing=True):
        selector = CauseFS(n_clusters=4, n_features_to_select=8, max_iter=2,
                           random_state=0).set_fit_request(nuisance=True)
        pipe = make_pipeline(MinMaxScaler(), selector, KMeans(4, n_init=2, random_state=0))
        with warnings.catch_warnings():
            warnings.simplefilter("error", NuisanceUnusedWarning)
            pipe.fit(shifted.X, nuisance=shifted.environment)
    direct = CauseFS(n_clusters=4, n_features_to_select=8, max_iter=2, random_state=0).fit(
        MinMaxScaler().fit_transform(shifted.X), nuisance=shifted.environment)
    assert np.array_equal(pipe[1].support_, direct.support_)


# --- how sure: nuisance shares and selection frequencies ------------------------------

def _eta_squared(X, labels):
    """Between-level share of every column's variance, from the level means."""
    centred = X - X.mean(axis=0)
    between = sum((labels == level).sum() * (X[labels == level].mean(axis=0)
                                             - X.mean(axis=0)) ** 2
                  for level in np.unique(labels))
    total = (centred**2).sum(axis=0)
    return np.divide(between, total, out=np.zeros(X.shape[1]), where=total > 1e-12)


def test_nuisance_shares_are_the_between_level_share_before_and_after_adjustment():
    rng = np.random.default_rng(3)
    n = 150
    labels = rng.integers(0, 3, n)
    X = rng.random((n, 6))
    X[:, 0] += 1.5 * labels  # a batch effect
    X[:, 1] += 2.0 * (rng.random(n) < 0.5)  # structure of its own
    X[:, 5] = 4.0  # constant
    est = CauseFS(n_clusters=2, n_features_to_select=2, max_iter=3, random_state=0).fit(
        X, nuisance=labels)
    scaled = (X - X.min(axis=0)) / np.where(np.ptp(X, axis=0) > 0, np.ptp(X, axis=0), 1)
    assert np.allclose(est.nuisance_share_, _eta_squared(scaled, labels))
    assert est.nuisance_share_[0] > 0.8 and est.nuisance_share_[5] == 0
    adjusted = scaled - code_nuisance(labels, n) @ est.nuisance_effect_
    assert np.allclose(est.nuisance_share_adjusted_, _eta_squared(adjusted, labels))
    assert est.nuisance_share_adjusted_[0] < 0.1
    without = CauseFS(n_clusters=2, n_features_to_select=2, max_iter=3).fit(X)
    assert without.nuisance_share_ is None and without.nuisance_share_adjusted_ is None


def test_selection_frequency_over_half_subsamples():
    rng = np.random.default_rng(4)
    n = 120
    X = rng.random((n, 8))
    groups = rng.random(n) < 0.5
    X[:, 2] += 3.0 * groups
    X[:, 6] += 3.0 * groups
    params = dict(n_clusters=2, n_features_to_select=2, max_iter=5, random_state=1)
    assert CauseFS(**params).fit(X).selection_frequency_ is None
    est = CauseFS(**params, stability_subsamples=6).fit(X)
    frequency = est.selection_frequency_
    assert frequency.shape == (8,) and np.allclose(frequency * 6, np.round(frequency * 6))
    assert np.isclose(frequency.sum(), 2)  # every subsample selects two features
    # the two informative features are the most frequent; both nearly collinear, so a
    # subsample's l2,1 fit may keep one of them and a noise feature (seen: 1 of 6)
    assert frequency[2] == 1.0 and frequency[6] >= 5 / 6
    assert set(np.argsort(-frequency, kind="stable")[:2]) == {2, 6}
    again = CauseFS(**params, stability_subsamples=6).fit(X).selection_frequency_
    assert np.array_equal(frequency, again)
    assert np.array_equal(est.scores_, CauseFS(**params).fit(X).scores_)


@pytest.mark.parametrize("Z, message", [
    # a level of two samples: a half without both leaves one level, which does not vary
    (np.r_[np.zeros(38, int), 1, 1], "nuisance does not vary"),
    # 30 covariates: the whole fit's 40 samples can estimate them, a half's 20 cannot
    (np.random.default_rng(2).random((40, 30)), "nuisance codes to 30 columns for 20 "
                                                "samples"),
])
def test_a_z_that_a_half_of_the_samples_cannot_use_is_named_as_the_subsamples(Z, message):
    """The refusal was the whole fit's message (``nuisance does not vary`` of a Z that
    does vary; ``for 20 samples`` of 40)."""
    X = np.random.default_rng(3).random((40, 6))
    est = CauseFS(n_clusters=2, n_features_to_select=2, max_iter=2, random_state=0,
                  stability_subsamples=8)
    with pytest.raises(ValueError, match=r"^stability_subsamples=8: on a random half of the "
                                         rf"samples \(20\), {message}.*; set "
                                         r"stability_subsamples=0, or merge rare levels"):
        est.fit(X, nuisance=Z)
