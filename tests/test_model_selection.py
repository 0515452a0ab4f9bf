"""LabelFreeSearch and its criteria, against computations written from their definitions."""

import warnings

import numpy as np
import pytest
import scipy.linalg
from sklearn.base import BaseEstimator, clone
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.estimator_checks import parametrize_with_checks

from causefs import CauseFS, CollapseWarning, InvalidParameterError
from causefs.model_selection import (
    LabelFreeCriterion,
    LabelFreeSearch,
    cluster_embedding,
    embedding_fit,
    silhouette,
)


def clustered(n_per=25, signal=4, noise=6, seed=0):
    """3 clusters on the first ``signal`` features, uniform noise on the rest; in [0, 1]."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(3), n_per)
    centers = rng.uniform(0.1, 0.9, size=(3, signal))
    X = np.hstack([centers[labels] + rng.normal(scale=0.05, size=(labels.size, signal)),
                   rng.uniform(size=(labels.size, noise))])
    return np.clip(X, 0.0, 1.0), labels


def eigenmap_by_hand(X, n_components, k=5):
    """The Laplacian eigenmap from its definition: the symmetric kNN heat graph
    (``max`` of both directions, t = mean squared kNN distance), then the generalized
    problem ``(D - A) y = lambda D y``, the trivial solution dropped, ``y' D y = 1``
    (any such basis: ``R^2`` does not depend on it)."""
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(sq, np.inf)
    nearest = np.argsort(sq, axis=1, kind="stable")[:, :k]
    rows = np.repeat(np.arange(X.shape[0]), k)
    t = sq[rows, nearest.ravel()].mean()
    A = np.zeros_like(sq)
    A[rows, nearest.ravel()] = np.exp(-sq[rows, nearest.ravel()] / t)
    A = np.maximum(A, A.T)
    D = np.diag(A.sum(axis=1))
    _, Y = scipy.linalg.eigh(D - A, D)
    # the constant solves it too: a D-orthonormal basis of the span of the smallest
    # n_components + 1 solutions, D-orthogonal to it (on a disconnected graph eigh's
    # basis of the null space need not contain the constant)
    Y = Y[:, :n_components + 1]
    ones = np.ones(X.shape[0])
    Y = Y - np.outer(ones, ones @ D @ Y / (ones @ D @ ones))
    w, V = np.linalg.eigh(Y.T @ D @ Y)
    return Y @ V[:, 1:] / np.sqrt(w[1:])


def silhouette_by_hand(X, labels):
    """Rousseeuw's silhouette, mean over samples: (b - a) / max(a, b), a the mean distance
    to the sample's own cluster (itself excluded), b the least mean distance to another."""
    distance = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    values = []
    for i, label in enumerate(labels):
        own = labels == label
        a = distance[i, own].sum() / (own.sum() - 1)
        b = min(distance[i, labels == other].mean() for other in set(labels) - {label})
        values.append((b - a) / max(a, b))
    return float(np.mean(values))


def r2_by_hand(X, Y):
    """``R^2`` of Y on [1, X] by the normal equations."""
    design = np.column_stack([np.ones(X.shape[0]), X])
    B = np.linalg.solve(design.T @ design, design.T @ Y)
    residual = Y - design @ B
    return 1.0 - (residual**2).sum() / ((Y - Y.mean(axis=0)) ** 2).sum()


class PickBlock(SelectorMixin, BaseEstimator):
    """A test selector: ranks the features of one block first (``block`` 0 = the
    first ``width`` features, 1 = the next ``width``); ``collapse=True`` warns as a
    collapsed CauseFS fit does."""

    def __init__(self, block=0, width=4, collapse=False, n_clusters=3):
        self.block, self.width, self.collapse, self.n_clusters = block, width, collapse, n_clusters

    def fit(self, X, y=None):
        d = np.asarray(X).shape[1]
        self.n_features_in_ = d
        self.scores_ = np.zeros(d)
        self.scores_[self.block * self.width:(self.block + 1) * self.width] = 1.0
        if self.collapse:
            warnings.warn("collapsed", CollapseWarning)
        return self

    def _get_support_mask(self):
        return self.scores_ > 0


def test_embedding_fit_matches_the_definition():
    X, _ = clustered(n_per=20)
    Y = eigenmap_by_hand(X, 2)
    embedding = cluster_embedding(X, 3)
    assert embedding.shape == (60, 2)
    for features in ([0, 1, 2, 3], [4, 5, 6, 7, 8], [0, 9]):
        assert embedding_fit(X, features, embedding) == pytest.approx(
            r2_by_hand(X[:, features], Y), abs=1e-8)


def test_the_cluster_features_fit_the_embedding_and_the_noise_does_not():
    X, _ = clustered()
    embedding = cluster_embedding(X, 3)
    assert embedding_fit(X, [0, 1, 2, 3], embedding) > 0.9
    assert embedding_fit(X, [4, 5, 6, 7], embedding) < 0.3
    assert silhouette(X, [0, 1, 2, 3], 3) > silhouette(X, [4, 5, 6, 7], 3) + 0.3


@pytest.mark.parametrize("criterion", ["silhouette", "embedding_fit"])
def test_the_search_keeps_the_setting_that_selects_the_clusters(criterion):
    X, labels = clustered()
    search = LabelFreeSearch(PickBlock(), {"block": [1, 0]}, n_features_to_select=4,
                             criterion=criterion).fit(X)
    assert search.best_params_ == {"block": 0}
    assert search.best_index_ == 1
    assert [p["block"] for p in search.results_["params"]] == [1, 0]
    assert list(search.get_support(indices=True)) == [0, 1, 2, 3]
    assert search.transform(X).shape == (X.shape[0], 4)
    # the criteria read the data min-max scaled, as CauseFS reads it
    scaled = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    if criterion == "silhouette":  # every k-means start finds the 3 clusters of block 0
        assert search.best_score_ == pytest.approx(
            silhouette_by_hand(scaled[:, :4], labels), abs=1e-10)
    if criterion == "embedding_fit":
        Y = eigenmap_by_hand(scaled, 2)
        for block, score in zip([1, 0], search.results_["score"]):
            features = np.arange(4 * block, 4 * block + 4)
            assert score == pytest.approx(r2_by_hand(scaled[:, features], Y), abs=1e-8)
        assert search.best_score_ == max(search.results_["score"])


def ranks_by_hand(values):
    """Average ranks, 1 = lowest: one plus the values below, plus half the other ties."""
    values = list(values)
    return [1 + sum(w < v for w in values) + 0.5 * (sum(w == v for w in values) - 1)
            for v in values]


def test_mean_rank_is_the_mean_of_each_measure_s_ranks_among_the_settings():
    """The default criterion from its definition: per setting, its rank among the
    settings not collapsed under the silhouette and under the embedding fit, averaged;
    a collapsed setting is not ranked and does not shift the others' ranks."""
    X, labels = clustered(signal=4, noise=6)
    grid = [{"block": [0, 1, 2, 3, 4], "width": [2]},
            {"block": [0], "width": [2], "collapse": [True]}]
    search = LabelFreeSearch(PickBlock(), grid, n_features_to_select=2).fit(X)
    assert search.criterion == "mean_rank"  # the default
    scaled = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    Y = eigenmap_by_hand(scaled, 2)
    blocks = [p["block"] for p in search.results_["params"]]
    collapsed = search.results_["collapsed"]
    assert collapsed.count(True) == 1
    kept = [i for i, c in enumerate(collapsed) if not c]
    fits = [r2_by_hand(scaled[:, 2 * blocks[i]:2 * blocks[i] + 2], Y) for i in kept]
    sils = [search.results_["silhouette"][i] for i in kept]
    assert [search.results_["embedding_fit"][i] for i in kept] == pytest.approx(fits,
                                                                                abs=1e-8)
    expected = [(a + b) / 2 for a, b in zip(ranks_by_hand(sils), ranks_by_hand(fits))]
    assert [search.results_["score"][i] for i in kept] == pytest.approx(expected)
    assert search.results_["score"][collapsed.index(True)] == -np.inf
    assert blocks[search.best_index_] in (0, 1)  # a pair of the cluster features
    assert search.best_score_ == max(expected)


def test_a_collapsed_fit_is_not_a_candidate():
    X, _ = clustered()
    search = LabelFreeSearch(PickBlock(), [{"block": [0], "collapse": [True]},
                                           {"block": [1], "collapse": [False]}],
                             n_features_to_select=4).fit(X)
    assert search.results_["collapsed"] == [True, False]
    assert search.results_["score"][0] == -np.inf
    assert search.best_params_ == {"block": 1, "collapse": False}
    with pytest.raises(ValueError, match="every one of the 2 settings collapsed"):
        LabelFreeSearch(PickBlock(collapse=True), {"block": [0, 1]},
                        n_features_to_select=4).fit(X)


def test_other_warnings_of_a_fit_reach_the_caller():
    class Noisy(PickBlock):
        def fit(self, X, y=None):
            warnings.warn("a user warning of the fit", UserWarning)
            return super().fit(X, y)

    X, _ = clustered()
    with pytest.warns(UserWarning, match="a user warning of the fit"):
        LabelFreeSearch(Noisy(), {"block": [0]}, n_features_to_select=4).fit(X)


def test_bad_input_is_refused_with_its_name():
    X, _ = clustered()
    with pytest.raises(ValueError, match="NaN"):
        Xn = X.copy()
        Xn[0, 0] = np.nan
        LabelFreeSearch(PickBlock(), {"block": [0]}, n_features_to_select=4).fit(Xn)
    with pytest.raises(InvalidParameterError, match="n_features_to_select=17"):
        LabelFreeSearch(PickBlock(), {"block": [0]}, n_features_to_select=17).fit(X)
    with pytest.raises(InvalidParameterError, match="criterion"):
        LabelFreeSearch(PickBlock(), {"block": [0]}, criterion="accuracy").fit(X)
    with pytest.raises(InvalidParameterError, match="param_grid"):
        LabelFreeSearch(PickBlock(), [], n_features_to_select=4).fit(X)
    with pytest.raises(InvalidParameterError, match="n_neighbors=5"):
        LabelFreeSearch(PickBlock(), {"block": [0]}, n_features_to_select=4,
                        criterion="embedding_fit").fit(X[:5])
    with pytest.raises(InvalidParameterError, match="n_clusters=3: needs more samples"):
        LabelFreeSearch(PickBlock(), {"block": [0]}, n_features_to_select=4).fit(X[:3])

    class NoClusters(PickBlock):
        def __init__(self, block=0, width=4, collapse=False):
            super().__init__(block, width, collapse)

    with pytest.raises(InvalidParameterError, match="n_clusters"):
        LabelFreeSearch(NoClusters(), {"block": [0]}, n_features_to_select=4).fit(X)


def test_a_subsample_above_max_samples_is_seeded():
    X, _ = clustered(n_per=40)
    runs = [LabelFreeSearch(PickBlock(), {"block": [0, 1]}, n_features_to_select=4,
                            max_samples=60, random_state=seed,
                            criterion="silhouette").fit(X).results_["score"]
            for seed in (3, 3, 4)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
    assert runs[0][0] > runs[0][1]


@pytest.mark.short_fit
def test_a_search_over_causefs_is_reproducible_and_clonable(blobs):
    X, _ = blobs
    search = LabelFreeSearch(CauseFS(n_clusters=3, n_features_to_select=4, max_iter=3),
                             {"alpha": [1.0, 10.0]})
    first = search.fit(X)
    again = clone(search).fit(X)
    assert first.best_params_ == again.best_params_
    assert first.results_["score"] == again.results_["score"]
    assert first.get_support().sum() == 4
    assert np.array_equal(first.get_support(), first.best_estimator_.get_support())


#: scikit-learn's checks that set n_clusters=1: the criteria need 2 clusters or more
N_CLUSTERS_ONE = {check: "sets n_clusters=1; the criteria (and CauseFS) need >= 2"
                  for check in ("check_dont_overwrite_parameters", "check_fit2d_predict1d",
                                "check_methods_subset_invariance", "check_fit2d_1feature")}


@pytest.mark.short_fit
@parametrize_with_checks(
    [LabelFreeSearch(CauseFS(n_clusters=2, n_neighbors=2, max_iter=2, random_state=0),
                     {"alpha": [1.0, 10.0]}, n_features_to_select=1)],
    expected_failed_checks=lambda est: N_CLUSTERS_ONE)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _batch_data():
    """90 samples: 3 clusters in features 0-2, a batch of two levels in features 3-5,
    noise in 6-11."""
    rng = np.random.default_rng(0)
    labels, batch = np.repeat([0, 1, 2], 30), np.tile([0, 1], 45)
    X = np.hstack([2.0 * labels[:, None] + rng.normal(size=(90, 3)),
                   3.0 * batch[:, None] + 0.3 * rng.normal(size=(90, 3)),
                   rng.normal(size=(90, 6))])
    return X, labels, batch


def test_the_criterion_reads_the_data_without_z_s_linear_effect():
    from causefs.model.nuisance_coding import code_nuisance
    from causefs.numerics.scaling import scale_features

    X, _, batch = _batch_data()
    Z = np.column_stack([batch == 1, np.arange(90) % 3 == 2]).astype(float)
    criterion = LabelFreeCriterion(X, 3, "silhouette", nuisance=code_nuisance(Z, 90))
    # by hand: each scaled feature's residual on [1, Z], plus its mean
    scaled = scale_features(X, "minmax")
    design = np.column_stack([np.ones(90), Z])
    coefficients, *_ = np.linalg.lstsq(design, scaled, rcond=None)
    expected = scaled - design @ coefficients + scaled.mean(axis=0)
    np.testing.assert_allclose(criterion.X, expected, atol=1e-12)
    # the batch's features no longer make clusters of their own; the clusters' do
    plain = LabelFreeCriterion(X, 3, "silhouette")
    assert criterion.measure([3, 4, 5])["silhouette"] < 0.5 * plain.measure(
        [3, 4, 5])["silhouette"]
    assert criterion.measure([0, 1, 2])["silhouette"] == pytest.approx(
        plain.measure([0, 1, 2])["silhouette"], abs=0.02)


@pytest.mark.short_fit
def test_the_search_fits_every_setting_with_the_nuisance_variables():
    X, _, batch = _batch_data()
    base = CauseFS(n_clusters=3, n_features_to_select=3, max_iter=3, random_state=0)
    search = LabelFreeSearch(base, {"alpha": [0.1, 1.0]}).fit(X, nuisance=batch)
    for params, features in zip(search.results_["params"], search.results_["features"]):
        alone = clone(base).set_params(**params).fit(X, nuisance=batch)
        np.testing.assert_array_equal(features, alone.ranking_.argsort()[:3])
    assert search.best_estimator_.nuisance_share_ is not None


def test_nuisance_for_a_selector_without_it_is_refused():
    from sklearn.feature_selection import SelectKBest

    X, _, batch = _batch_data()
    search = LabelFreeSearch(SelectKBest(), {"k": [1]}, n_clusters=3, n_features_to_select=1)
    with pytest.raises(InvalidParameterError, match=r"^nuisance: SelectKBest\.fit takes no "
                                                    r"nuisance variables"):
        search.fit(X, nuisance=batch)


def test_nuisance_with_another_pandas_index_than_x_is_refused_before_x_loses_it():
    pd = pytest.importorskip("pandas")
    X, _, batch = _batch_data()
    frame = pd.DataFrame(X, index=[f"s{i}" for i in range(90)])
    Z = pd.Series(batch, index=frame.index).sample(frac=1, random_state=0)
    search = LabelFreeSearch(CauseFS(n_clusters=3, n_features_to_select=3), {"alpha": [1.0]})
    with pytest.raises(ValueError, match=r"^nuisance has a pandas index other than X's"):
        search.fit(frame, nuisance=Z)
