"""Treatments of the balance term (:mod:`causefs.model.treatments`) against the rules
their docstrings state, written here sample by sample: the median split with its mean
fallback, the two codings of eq. 3.2 and u.2, the ``max_treatments`` cap and the top
treatments by ``||W_f||`` (by variance before W exists)."""

import numpy as np
import pytest
import scipy.sparse as sp

from causefs.core.validation import InvalidParameterError
from causefs.model.treatments import (
    MIN_TREATMENTS,
    TREATMENT_BUDGET,
    bounded_treatments,
    treatment_cap,
    treatment_coding,
    treatment_indicator,
)


def split(column, rule):
    """E for one column: ``x > median`` (or mean); the mean when a group is empty; no
    treatment when still empty."""
    threshold = np.median(column) if rule == "median" else np.mean(column)
    E = column > threshold
    if E.all() or not E.any():
        E = column > np.mean(column)
    if E.all() or not E.any():
        return np.zeros_like(E), False
    return E, True


def columns():
    rng = np.random.default_rng(0)
    X = rng.random((9, 8))
    X[:, 6] = [-14, 0, 2, 2, 2, 2, 2, 2, 2]  # median = max: the mean (0), one sample at it
    X[:, 7] = [0, 5, 5, 5, 5, 5, 5, 5, 5]  # median = max: by the mean, one control
    X[:, 1] = [0, 0, 1, 1, 1, 1, 1, 1, 1]  # the median (1) leaves nobody above: mean
    X[:, 2] = 3.0  # constant: no treatment
    X[:, 3] = [1, 1, 1, 1, 1, 1, 1, 1, 2]  # median 1: one sample above
    X[:, 4] = np.arange(9.0) ** 3  # skewed: the median and the mean differ
    return X


@pytest.mark.parametrize("rule", ["median", "mean"])
def test_the_indicator_splits_each_feature_by_its_rule(rule):
    X = columns()
    E, is_treatment = treatment_indicator(X, rule)
    for f in range(X.shape[1]):
        expected, treated = split(X[:, f], rule)
        assert np.array_equal(E[:, f], expected) and is_treatment[f] == treated, f
    assert E.dtype == bool and list(is_treatment) == [True] * 2 + [False] + [True] * 5
    if rule == "median":  # the default: x > median
        default = treatment_indicator(X)
        assert np.array_equal(default[0], E) and np.array_equal(default[1], is_treatment)


@pytest.mark.parametrize("rule", ["median", "mean"])
def test_the_codings_are_the_group_means_and_the_papers(rule):
    """``group``: ``E/|T| - (1 - E)/|C|``; ``paper``: ``(2E - 1)/n``; zero columns for
    non-treatments."""
    X = columns()
    n = X.shape[0]
    group = treatment_coding(X, rule, "group")
    paper = treatment_coding(X, rule, "paper")
    for f in range(X.shape[1]):
        E, treated_column = split(X[:, f], rule)
        if not treated_column:
            assert not group[:, f].any() and not paper[:, f].any()
            continue
        treated = E.sum()
        assert np.allclose(group[:, f], np.where(E, 1 / treated, -1 / (n - treated)))
        assert np.allclose(paper[:, f], np.where(E, 1.0, -1.0) / n)
        assert group[:, f].sum() == pytest.approx(0.0, abs=1e-15)
    assert np.array_equal(treatment_coding(X, rule), group)


def test_sparse_data_are_densified_a_chunk_at_a_time(monkeypatch):
    """The coding is dense (n, d); the sparse data are densified a few columns at a
    time, so the step allocates little beyond it (a whole densified copy and its
    indicator would double it)."""
    import gc
    import tracemalloc

    import causefs.model.treatments as module

    monkeypatch.setattr(module, "COLUMN_CHUNK", 8)
    rng = np.random.default_rng(3)
    X = sp.random(400, 256, density=0.3, random_state=rng, format="csc")
    gc.collect()
    tracemalloc.start()
    try:
        coding = treatment_coding(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 1.3 * coding.nbytes, (peak, coding.nbytes)


def test_sparse_data_are_coded_chunk_by_chunk_as_dense(monkeypatch):
    import causefs.model.treatments as module

    monkeypatch.setattr(module, "COLUMN_CHUNK", 4)  # several chunks, the last one short
    X = np.hstack([columns(), columns()[:, ::-1], columns()[:, :3]])
    X[X < 0.3] = 0.0
    for normalization in ("group", "paper"):
        coding = treatment_coding(sp.csc_array(X), "median", normalization)
        assert np.array_equal(coding, treatment_coding(X, "median", normalization))


def test_unknown_rules_are_named():
    with pytest.raises(InvalidParameterError, match="treatment='mode'"):
        treatment_indicator(columns(), "mode")
    with pytest.raises(InvalidParameterError, match="mmd_normalization='half'"):
        treatment_coding(columns(), "median", "half")


def test_the_cap_keeps_all_within_the_budget_and_at_least_the_minimum():
    assert treatment_cap(None, 10**6, 10**4, 500) == 500
    assert treatment_cap(7, 100, 50, 40) == 7 and treatment_cap(70, 100, 50, 40) == 40
    n, d = 1000, 100  # n d |T| <= 1e8 up to |T| = 1000
    assert treatment_cap("auto", n, d, 1000) == 1000
    assert treatment_cap("auto", n, d, 1001) == int(TREATMENT_BUDGET // (n * d))
    n, d = 100_000, 1000  # the budget affords 1: the minimum is kept
    assert treatment_cap("auto", n, d, 5000) == MIN_TREATMENTS
    assert treatment_cap("auto", n, d, 20) == 20  # all, under the minimum
    assert treatment_cap("auto", 60_000, 50, 10_000) == 33  # 1e8 / 3e6 = 33.3


def test_the_kept_treatments_are_the_top_ones_by_w_or_by_variance():
    rng = np.random.default_rng(1)
    X = rng.random((20, 8))
    coding = treatment_coding(X)
    coding[:, 5] = 0.0  # no treatment, whatever its W
    W = np.zeros((8, 2))
    W[[5, 1, 6, 3], 0] = [10.0, 4.0, 4.0, 3.0]  # 1 and 6 tie: the smaller index first
    kept = bounded_treatments(X, coding, W, 2)
    assert np.flatnonzero(kept).tolist() == [1, 6]
    assert np.flatnonzero(bounded_treatments(X, coding, W, 1)).tolist() == [1]
    X[:, 2] *= 10.0  # the largest variance
    X[:, 7] *= 5.0
    kept = bounded_treatments(X, treatment_coding(X), None, 2)
    assert np.flatnonzero(kept).tolist() == [2, 7]
    assert kept.dtype == bool
    everything = bounded_treatments(X, coding, W, None)
    assert np.array_equal(everything, np.any(coding != 0, axis=0))
    assert np.array_equal(bounded_treatments(X, coding, W, 50), everything)


def test_many_tied_treatments_keep_the_smaller_indices():
    """Ties broken by the smaller feature index however many tie (a sort that is not
    stable orders equal scores arbitrarily beyond 16 elements)."""
    rng = np.random.default_rng(4)
    X = rng.random((30, 60))
    W = np.ones((60, 1))
    W[::7] = 2.0  # 9 larger ones, then 51 ties
    kept = np.flatnonzero(bounded_treatments(X, treatment_coding(X), W, 20))
    assert kept.tolist() == sorted([*range(0, 60, 7), *[f for f in range(60) if f % 7][:11]])


def test_auto_caps_the_treatments_of_large_data():
    """``"auto"`` with n d |T| over the budget: 2000 x 300 data keep 1e8 // 6e5 = 166."""
    rng = np.random.default_rng(5)
    X = rng.random((2000, 300))
    kept = bounded_treatments(X, treatment_coding(X), rng.random((300, 2)), "auto")
    assert kept.sum() == 166
