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
    X = rng.random((9, 6))
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
    assert E.dtype == bool and list(is_treatment) == [True, True, False, True, True, True]


def test_the_codings_are_the_group_means_and_the_papers():
    """``group``: ``E/|T| - (1 - E)/|C|``; ``paper``: ``(2E - 1)/n``; zero columns for
    non-treatments."""
    X = columns()
    n = X.shape[0]
    E, is_treatment = treatment_indicator(X)
    group = treatment_coding(X, "median", "group")
    paper = treatment_coding(X, "median", "paper")
    for f in range(X.shape[1]):
        if not is_treatment[f]:
            assert not group[:, f].any() and not paper[:, f].any()
            continue
        treated = E[:, f].sum()
        assert np.allclose(group[:, f], np.where(E[:, f], 1 / treated, -1 / (n - treated)))
        assert np.allclose(paper[:, f], np.where(E[:, f], 1.0, -1.0) / n)
        assert group[:, f].sum() == pytest.approx(0.0, abs=1e-15)
    assert np.array_equal(treatment_coding(X, "mean"), treatment_coding(X, "mean", "group"))


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
    everything = bounded_treatments(X, coding, W, None)
    assert np.array_equal(everything, np.any(coding != 0, axis=0))
    assert np.array_equal(bounded_treatments(X, coding, W, 50), everything)
