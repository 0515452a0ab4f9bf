"""The size of a fit as the parts' cost declarations see it
(:class:`causefs.model.fit_size.FitSize`), and the cap on treatments it uses
(:func:`causefs.model.treatments.treatment_cap`), against the rules their docstrings
state: 1e8 multiply-adds of n x d per treatment at most, at least 32 treatments."""

import pytest

from causefs.model.fit_size import FitSize
from causefs.model.settings import Settings
from causefs.model.treatments import treatment_cap


def test_the_size_reads_the_settings_and_caps_granularities_at_one_per_feature():
    settings = Settings(n_clusters=4, n_neighbors=7, max_granularity=10)
    wide, narrow = FitSize(50, 30, settings), FitSize(50, 6, settings)
    assert (wide.n_clusters, wide.n_neighbors) == (4, 7)
    assert wide.n_granularities == 10 and narrow.n_granularities == 6
    assert FitSize(50, 10, settings).n_granularities == 10
    assert wide.balance and not FitSize(50, 30, settings, balance=False).balance


@pytest.mark.parametrize("n, d, cap, expected", [
    (100, 50, None, 50),        # no cap: one treatment per feature
    (100, 50, 20, 20),          # a number: at most that many
    (100, 50, 80, 50),          # ... and never more than there are
    (100, 100, "auto", 100),    # 100 * 100 * 100 = 1e6 <= 1e8: all
    (10_000, 1_000, "auto", 32),  # 1e7 per treatment: 10 affordable, at least 32
    (1_000, 1_000, "auto", 100),  # 1e6 per treatment: 100 affordable of 1000
    (1_000, 100_000, "auto", 32),  # 1e8 per treatment: 1 affordable, at least 32
])
def test_treatments_are_capped_by_the_budget(n, d, cap, expected):
    size = FitSize(n, d, Settings(n_clusters=3, max_treatments=cap))
    assert size.n_treatments == expected
    assert treatment_cap(cap, n, d, d) == expected


def test_the_budget_is_met_exactly_at_its_bound():
    # n * d * t = 1e8 exactly: every treatment kept; one more sample: over the budget
    assert treatment_cap("auto", 1_000, 1_000, 100) == 100
    assert treatment_cap("auto", 1_001, 1_000, 100) == int(1e8 // (1_001 * 1_000))
    assert treatment_cap("auto", 100, 100, 10) == 10
    assert treatment_cap("auto", 10_000, 10_000, 20) == 20  # at least 32, at most all
