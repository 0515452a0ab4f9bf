"""The simple recipes for known nuisance variables (registered selectors that take Z),
each against an independent computation from its definition."""

from __future__ import annotations

import numpy as np
import pytest

from causefs.core.validation import InvalidParameterError
from causefs.selectors import MCFS, location_scale_corrected, make_selector

SUPPLIED = dict(n_clusters=2, n_features_to_select=3, random_state=0)


@pytest.fixture(scope="module")
def batched():
    """Two clusters on features 3-5, an additive batch effect on 0-2 (and a scale effect
    on 1), noise on 6-11; the batch has three levels."""
    rng = np.random.default_rng(7)
    n = 180
    batch = rng.integers(0, 3, n)
    X = rng.random((n, 12))
    X[:, :3] += 1.2 * batch[:, None]
    X[:, 1] *= 1 + batch
    X[:, 3:6] += 1.5 * (rng.random(n) < 0.5)[:, None]
    return X, batch


def eta_squared(X, labels):
    grand = X.mean(axis=0)
    between = np.zeros(X.shape[1])
    for level in np.unique(labels):
        rows = X[labels == level]
        between += len(rows) * (rows.mean(axis=0) - grand) ** 2
    return between / ((X - grand) ** 2).sum(axis=0)


def test_screening_drops_what_z_explains_and_runs_the_base_on_the_rest(batched):
    X, batch = batched
    share = eta_squared(X, batch)
    kept = share < 0.3
    assert not kept[:3].any() and kept[3:].all()
    scores = make_selector("screening").score(X, nuisance=batch, **SUPPLIED)
    assert np.allclose(scores[kept], MCFS().score(X[:, kept], **SUPPLIED))
    assert scores[~kept].max() < scores[kept].min()
    screened = np.flatnonzero(~kept)
    assert np.array_equal(screened[np.argsort(-scores[~kept])], screened[np.argsort(share[~kept])])
    without = make_selector("screening").score(X, **SUPPLIED)
    assert np.allclose(without, MCFS().score(X, **SUPPLIED))


def test_per_level_ranks_by_levels_selecting_then_mean_rank(batched):
    X, batch = batched
    d = X.shape[1]
    counts, rank_sums = np.zeros(d), np.zeros(d)
    for level in (0, 1, 2):
        best_first = list(np.argsort(-MCFS().score(X[batch == level], **SUPPLIED),
                                     kind="stable"))
        for f in range(d):
            position = best_first.index(f) + 1
            rank_sums[f] += position
            counts[f] += position <= SUPPLIED["n_features_to_select"]
    expected = sorted(range(d), key=lambda f: (-counts[f], rank_sums[f] / 3, f))
    scores = make_selector("per_level").score(X, nuisance=batch, **SUPPLIED)
    assert list(np.argsort(-scores, kind="stable")) == expected


def test_per_level_leaves_out_a_level_too_small_to_select_within(batched):
    X, batch = batched
    batch = batch.copy()
    batch[:3] = 9  # a level of three samples
    with pytest.warns(UserWarning, match="level '9' has 3 samples"):
        selector = make_selector("per_level")
        selector.score(X, nuisance=batch, **SUPPLIED)
    assert selector.details() == {"levels_used": ["0", "1", "2"]}


def combat_by_hand(X, labels):
    """ComBat without covariates and without empirical Bayes, feature by feature."""
    out = np.empty_like(X)
    for g in range(X.shape[1]):
        x = X[:, g]
        level_means = {lv: x[labels == lv].mean() for lv in np.unique(labels)}
        residual = x - np.array([level_means[lv] for lv in labels])
        sigma = np.sqrt(np.sum(residual**2) / len(x))
        z = (x - x.mean()) / sigma
        for lv in np.unique(labels):
            rows = labels == lv
            gamma, delta = z[rows].mean(), np.std(z[rows], ddof=1)
            out[rows, g] = sigma * (z[rows] - gamma) / delta + x.mean()
    return out


def test_location_scale_is_combat_without_shrinkage(batched):
    X, batch = batched
    corrected = location_scale_corrected(X, batch)
    assert np.allclose(corrected, combat_by_hand(X, batch))
    for level in (0, 1, 2):  # every level now has the pooled mean and within-level scale
        assert np.allclose(corrected[batch == level].mean(axis=0), X.mean(axis=0))
    scores = make_selector("location_scale").score(X, nuisance=batch, **SUPPLIED)
    assert np.allclose(scores, MCFS().score(combat_by_hand(X, batch), **SUPPLIED))
    assert np.argsort(-scores)[:3].tolist() != [0, 1, 2]


def test_location_scale_fallbacks_keep_values_finite():
    X = np.array([[1.0, 2.0], [1.0, 3.0], [1.0, 5.0], [1.0, 5.0], [1.0, 9.0]])
    labels = np.array([0, 0, 1, 1, 2])  # level 2 has one sample; level 1 is constant
    corrected = location_scale_corrected(X, labels)
    assert np.all(np.isfinite(corrected))
    assert np.array_equal(corrected[:, 0], X[:, 0])  # a constant feature as it was
    assert np.allclose(corrected[2:4, 1], X[:, 1].mean())  # only the location corrected


@pytest.mark.parametrize("name", ["per_level", "location_scale"])
def test_recipes_within_levels_need_labels(batched, name):
    X, _ = batched
    with pytest.raises(ValueError, match="needs labels"):
        make_selector(name).score(X, nuisance=np.linspace(0, 1, X.shape[0]), **SUPPLIED)
    with pytest.raises(ValueError, match="one level"):
        make_selector(name).score(X, nuisance=np.zeros(X.shape[0], dtype=int), **SUPPLIED)


def test_a_recipe_refuses_a_base_that_is_not_a_plain_selector():
    with pytest.raises(InvalidParameterError, match="base='causefs': must be one of"):
        make_selector("screening", base="causefs")
    with pytest.raises(InvalidParameterError, match="threshold"):
        make_selector("screening", threshold=0)
    assert make_selector("per_level", base="ndfs").uses_nuisance()
    assert not make_selector("mcfs").uses_nuisance()


def test_a_recipe_is_reported_with_its_base():
    assert make_selector("screening").label({"base": "ndfs"}) == "Screening + NDFS"
    assert make_selector("per_level").label({}) == "PerLevel + MCFS"
