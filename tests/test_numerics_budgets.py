"""Scaling that cannot overflow near the float64 limit, and a validated memory budget."""

import warnings

import numpy as np
import pytest

from causefs import CauseFS
from causefs.budget.memory import parse_bytes, parse_memory_limit
from causefs.numerics.scaling import constant_features, scale_features

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)

HUGE = np.array([[-1e308, 1.0, 7.0], [1e308, 2.0, 7.0], [0.0, 4.0, 7.0], [5e307, 3.0, 7.0]])


def test_minmax_scaling_near_the_float_limit():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        scaled = scale_features(HUGE, "minmax")
    # by hand: (x - min) / (max - min) with max - min = 2e308
    expected = np.array([[0.0, 0.0, 0.0], [1.0, 1 / 3, 0.0], [0.5, 1.0, 0.0], [0.75, 2 / 3, 0.0]])
    np.testing.assert_allclose(scaled, expected, rtol=1e-15, atol=1e-15)


def test_standard_scaling_near_the_float_limit():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaled = scale_features(HUGE, "standard")
    column = np.array([-1.0, 1.0, 0.0, 0.5])  # the first column / 1e308
    expected = (column - column.mean()) / column.std()
    np.testing.assert_allclose(scaled[:, 0], expected, rtol=1e-12)
    assert np.all(scaled[:, 2] == 0)


def test_constant_features_are_found_without_subtracting():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert constant_features(HUGE).tolist() == [False, False, True]


# scikit-learn's finiteness check sums X, which overflows (inf - inf) before it looks
# at the values one by one: its warning, not ours
@pytest.mark.filterwarnings("ignore:invalid value encountered in reduce:RuntimeWarning")
def test_a_fit_with_values_near_the_float_limit_runs():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    # finite, but max - min (up to 2e308) overflows to inf in a plain subtraction
    X[:, 0] = np.sign(X[:, 0]) * rng.uniform(0.5, 1.0, 40) * 1e308
    estimator = CauseFS(n_clusters=3, max_iter=1, verbose=False).fit(X)
    assert np.all(np.isfinite(estimator.scores_))


@pytest.mark.parametrize("limit", ["lots", -5, 0, 0.5, True, float("nan"), float("inf"), "-1GB",
                                   "GB", "8 XB", [8]])
def test_bad_memory_limits_are_rejected_by_name(limit):
    with pytest.raises(ValueError, match=r"memory_limit=.*must be None or 'auto'"):
        parse_memory_limit(limit)
    X = np.random.default_rng(0).random((20, 4))
    with pytest.raises(ValueError, match="memory_limit="):
        CauseFS(n_clusters=2, memory_limit=limit, verbose=False).fit(X)


@pytest.mark.parametrize("limit, value", [("auto", "auto"), (None, None), ("8GB", 8 << 30),
                                          ("512 mb", 512 << 20), (2e9, 2_000_000_000),
                                          (1, 1), ("1.5KB", 1536)])
def test_good_memory_limits(limit, value):
    assert parse_memory_limit(limit) == value
    if limit not in ("auto", None):
        assert parse_bytes(limit) == value


@pytest.mark.parametrize("selector", ["laplacian_score", "spec", "mcfs", "udfs", "ndfs"])
def test_baselines_on_unscaled_huge_values_say_so(selector):
    from causefs.selectors import make_selector

    X = np.random.default_rng(0).random((40, 5))
    with pytest.raises(ValueError, match="overflow squared distances: scale the features"):
        make_selector(selector).score(np.vstack([X * 1e308, -X * 1e308]), n_clusters=2,
                                      n_features_to_select=2)
