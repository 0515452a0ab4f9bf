"""Checks for the one-line bugs the last round of planted mutations slipped past
(issue 25), each against a computation written here from the definition, never
against the function under test."""

import numpy as np
import pytest
import scipy.sparse as sp

from causefs import CauseFS
from causefs.app.provenance import source_sha256 as cached_source_sha256
from causefs.core.convergence import ObjectiveChange
from causefs.core.validation import Interval
from causefs.numerics.scaling import scale_features


@pytest.mark.parametrize("previous, current, met", [
    (8.0, 7.0, True),     # |8 - 7| = 1 = 0.125 * |8|: the bound itself counts (<=)
    (8.0, 6.9, False),    # 1.1 > 1
    (7.0, 8.0, False),    # 1 > 0.125 * 7 = 0.875: relative to the previous value, not 8
    (-8.0, -7.0, True),   # a negative objective: its magnitude
    (-8.0, -9.5, False),
])
def test_objective_change_is_relative_to_the_previous_objective(previous, current, met):
    rule = ObjectiveChange(tol=0.125)  # binary fractions: the comparisons are exact
    rule.met([previous], None)  # the first value sets the start
    assert rule.met([previous, current], None) is met


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_structure_frozen_at_is_the_last_iteration_that_ran_structural_blocks():
    X = np.random.default_rng(0).normal(size=(40, 6))
    fit = CauseFS(n_clusters=2, max_iter=6, structure_iter=2, tol=0.0, patience=100,
                  random_state=0).fit(X)
    structural = [r["iteration"] for r in fit.trace_ if r["kind"] == "structural"]
    assert fit.n_iter_ > max(structural)  # the loop went on after the freeze
    assert fit.structure_frozen_at_ == max(structural) == 2


@pytest.mark.parametrize("closed, low_in, high_in", [
    ("both", True, True), ("left", True, False), ("right", False, True),
    ("neither", False, False)])
def test_interval_bounds_belong_to_it_as_closed_says(closed, low_in, high_in):
    interval = Interval(float, 0.0, 1.0, closed=closed)
    assert interval.is_satisfied_by(0.0) is low_in
    assert interval.is_satisfied_by(1.0) is high_in
    assert interval.is_satisfied_by(0.5)
    assert not interval.is_satisfied_by(-1e-12) and not interval.is_satisfied_by(1 + 1e-12)
    assert not interval.is_satisfied_by(float("nan"))


#: the hash without its per-process cache (the package does not change while it runs)
source_sha256 = cached_source_sha256.__wrapped__


def test_the_source_hash_covers_files_in_subfolders(tmp_path):
    (tmp_path / "rooms" / "deep").mkdir(parents=True)
    (tmp_path / "top.py").write_text("a = 1\n")
    nested = tmp_path / "rooms" / "deep" / "part.py"
    nested.write_text("b = 2\n")
    config = tmp_path / "rooms" / "schedule.yaml"
    config.write_text("name: x\n")
    before = source_sha256(tmp_path)
    for path, text in ((nested, "b = 3\n"), (config, "name: y\n")):
        path.write_text(text)
        changed = source_sha256(tmp_path)
        assert changed != before, f"{path.relative_to(tmp_path)} is not hashed"
        before = changed
    (tmp_path / "rooms" / "deep" / "__pycache__").mkdir()
    (tmp_path / "rooms" / "deep" / "__pycache__" / "part.py").write_text("cache\n")
    assert source_sha256(tmp_path) == before  # caches are not source


def test_sparse_minmax_of_non_negative_data_stays_sparse_and_is_x_over_max():
    X = sp.random(30, 8, density=0.2, random_state=0, format="csc") * 5.0
    scaled = scale_features(X, "minmax")
    assert sp.issparse(scaled) and scaled.nnz == X.nnz  # no densified copy
    dense = X.toarray()
    spread = dense.max(axis=0) - dense.min(axis=0)  # min 0: (x - 0) / max
    expected = np.divide(dense - dense.min(axis=0), spread, out=np.zeros_like(dense),
                         where=spread > 0)
    np.testing.assert_allclose(scaled.toarray(), expected, rtol=1e-14, atol=0)


def test_objective_change_needs_two_values_since_its_start():
    from causefs.core.validation import InvalidParameterError

    rule = ObjectiveChange(tol=1.0)  # any change is small enough: only the count matters
    assert not rule.met([5.0], None)  # one value: nothing to compare
    assert rule.met([5.0, 5.0], None)
    rule.reset()
    history = [5.0, 5.0, 5.0]
    assert not rule.met(history, None)  # the first value since the reset
    assert not rule.met(history, None)  # asked again: still one value since the reset
    assert rule.met(history + [5.0], None)
    with pytest.raises(InvalidParameterError, match=r"^tol=-0.5: must be a real number >= 0"):
        ObjectiveChange(tol=-0.5)
    assert ObjectiveChange(tol=0.0).met([1.0, 1.0], None)  # the bound 0 is allowed
    assert ObjectiveChange(tol=2e-3).reason == "objective change below tol=0.002"


def test_a_stopping_rule_used_alone_defaults_to_the_estimators_tol():
    from causefs.model.settings import DEFAULTS

    assert ObjectiveChange().tol == DEFAULTS.tol


def _state(scores):
    from causefs.core.state import Field, State

    class _Toy:
        fields = {"W": Field("W", doc="a matrix")}

    W = np.zeros((len(scores), 2))
    W[:, 1] = scores
    return State(_Toy(), W=W)


def test_selection_stable_follows_the_top_features_not_the_bottom_ones():
    from causefs.model.stopping import SelectionStable

    rule = SelectionStable(n_selected=2, patience=2)
    assert not rule.met([], _state([9.0, 8.0, 1.0, 0.5, 0.2]))
    # the bottom features change places, the top two stay: met at patience 2
    assert rule.met([], _state([9.0, 8.0, 0.2, 0.5, 1.0]))
    rule = SelectionStable(n_selected=2, patience=2)
    rule.met([], _state([9.0, 8.0, 1.0, 0.5]))
    assert not rule.met([], _state([9.0, 0.5, 8.0, 1.0]))  # a top feature changed


def test_selection_stable_breaks_ties_by_the_smaller_index_at_any_size():
    from causefs.model.stopping import SelectionStable

    scores = np.random.default_rng(0).integers(0, 2, 1000).astype(float)  # many ties
    top = np.flatnonzero(scores == 1.0)[:20]  # ties by the smaller index, by hand
    nudged = scores.copy()
    nudged[top] += 1e-9  # the same top-20, no longer tied
    rule = SelectionStable(n_selected=20, patience=2)
    assert not rule.met([], _state(scores))
    assert rule.met([], _state(nudged))  # the tied selection was those 20


def test_selection_stable_checks_its_settings_by_name():
    from causefs.core.validation import InvalidParameterError
    from causefs.model.stopping import SelectionStable

    for key in ("n_selected", "patience"):
        with pytest.raises(InvalidParameterError,
                           match=rf"^{key}=0: must be None or an integer >= 1"):
            SelectionStable(**{key: 0})
    rule = SelectionStable(n_selected=4, patience=3)
    assert rule.reason == "top-4 features unchanged for 3 iterations"
    assert SelectionStable().patience == 3 and SelectionStable().n_selected is None

