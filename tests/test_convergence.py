"""The loop converges: stopping rules, the frozen structure, and what a fit reports."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from causefs import CauseFS
from causefs.blocks import Block
from causefs.core.convergence import ObjectiveChange
from causefs.core.loop import run_schedule
from causefs.core.state import Field, State
from causefs.model.objective import ObjectiveValue
from causefs.model.stopping import SelectionStable


def test_objective_change_compares_consecutive_iterations():
    rule = ObjectiveChange(1e-3)
    assert not rule.met([10.0, 9.0], None)
    assert rule.met([10.0, 9.0, 8.9995], None)  # |8.9995 - 9| = 5e-4 <= 1e-3 * 9
    rule.reset()  # after a reset, only iterations seen since count
    assert not rule.met([10.0, 9.0, 8.9995, 8.9994], None)
    assert rule.met([10.0, 9.0, 8.9995, 8.9994, 8.9993], None)


class _Toy:
    """A problem of one variable: the scheduler knows no model."""

    fields = {"W": Field("W", doc="a matrix")}


def _state_with_scores(scores):
    """A state whose W rows have the given norms."""
    W = np.zeros((len(scores), 2))
    W[:, 0] = scores
    return State(_Toy(), W=W)


def test_selection_stable_counts_iterations_with_the_same_top_k():
    rule = SelectionStable(n_selected=2, patience=3)
    # top-2 by |W_f|, ties by the smaller index, computed here by hand
    sequence = [[5, 4, 1, 0], [5, 4, 3, 0], [1, 4, 5, 0], [4, 0, 5, 0], [9, 8, 7, 0]]
    tops = [frozenset(sorted(range(4), key=lambda f: (-s[f], f))[:2]) for s in sequence]
    assert tops == [{0, 1}, {0, 1}, {1, 2}, {0, 2}, {0, 1}]
    met = [rule.met([], _state_with_scores(s)) for s in sequence]
    assert met == [False, False, False, False, False]
    steady = SelectionStable(n_selected=2, patience=3)
    off = SelectionStable(n_selected=2, patience=None)  # no patience: never met
    assert not any(off.met([], _state_with_scores([3, 2, 1, 0])) for _ in range(5))
    assert [steady.met([], _state_with_scores([3, 2, 1, 0])) for _ in range(4)] == \
        [False, False, True, True]


def _scores_selecting(selected, d):
    """Scores whose top-``len(selected)`` features are ``selected``."""
    scores = np.zeros(d)
    scores[list(selected)] = 1.0 + np.arange(len(selected))
    return scores


def test_selection_stable_lets_a_large_selection_change_by_its_share():
    # 100 features selected of 300, changed_share 0.01: one may differ from the run's
    # first selection; counted by hand below
    rule = SelectionStable(n_selected=100, patience=3)
    assert rule.allowed == 1
    first = set(range(100))
    one_swap = first - {0} | {200}          # 1 change from `first`
    other_swap = first - {1} | {201}        # 1 change from `first`, 2 from `one_swap`
    two_swaps = first - {0, 1} | {200, 201}  # 2 changes from `first`
    met = [rule.met([], _state_with_scores(_scores_selecting(s, 300)))
           for s in (first, one_swap, other_swap, two_swaps, two_swaps, two_swaps)]
    # other_swap is 1 change from the run's first selection (not from one_swap): the
    # run reaches 3; two_swaps starts a new run, which reaches 3 two iterations later
    assert met == [False, False, True, False, False, True]
    assert rule.reason == "at most 1 of the top-100 features changed over 3 iterations"


def test_selection_stable_is_exact_below_one_over_the_share():
    for n_selected, share in [(99, 0.01), (20, 0.01), (20, 0.0), (200, 0.0)]:
        rule = SelectionStable(n_selected=n_selected, patience=2, changed_share=share)
        assert rule.allowed == 0
        first = set(range(n_selected))
        swapped = first - {0} | {n_selected + 5}
        assert not rule.met([], _state_with_scores(_scores_selecting(first, 400)))
        assert not rule.met([], _state_with_scores(_scores_selecting(swapped, 400)))
        assert rule.met([], _state_with_scores(_scores_selecting(swapped, 400)))
    rule = SelectionStable(n_selected=250, patience=2, changed_share=0.02)
    assert rule.allowed == 5  # floor(0.02 * 250)
    first = set(range(250))
    assert not rule.met([], _state_with_scores(_scores_selecting(first, 400)))
    assert rule.met([], _state_with_scores(_scores_selecting(
        first - set(range(5)) | set(range(300, 305)), 400)))
    assert not rule.met([], _state_with_scores(_scores_selecting(
        first - set(range(6)) | set(range(300, 306)), 400)))


def test_selection_stable_checks_its_share():
    from causefs.core.validation import InvalidParameterError

    for share in (-0.1, 1.0, 2):
        with pytest.raises(InvalidParameterError,
                           match=rf"^changed_share={share}: must be a real number >= 0 "
                                 r"and < 1"):
            SelectionStable(n_selected=10, changed_share=share)
    assert SelectionStable().changed_share == 0.01 and SelectionStable().allowed == 0


class _Counting(Block):
    """A structural block that counts its steps and changes nothing."""

    name = "counting"
    kind = "structural"
    reads = ("W",)

    def __init__(self):
        self.steps = 0

    def step(self, state):
        self.steps += 1
        return state


class _Shrink(Block):
    """A descent block: W halves every step."""

    name = "shrink"
    kind = "descent"
    reads = ("W",)
    writes = ("W",)

    def step(self, state):
        return state.replace(W=state.W * 0.5)


class _Norm:
    """J = ||W||^2 (a generic objective for the scheduler)."""

    needs = ("W",)

    def __call__(self, state, cache=None):
        value = float(np.sum(state.W ** 2))
        return ObjectiveValue(total=value, terms={"norm": value})


def _run(structure_iter, stopping=(), tol=0.0, max_iter=8):
    counting = _Counting()
    state = State(_Toy(), W=np.ones((3, 2)))
    result = run_schedule(state, [], [_Shrink(), counting], objective=_Norm(),
                          max_iter=max_iter, stopping=[ObjectiveChange(tol), *stopping],
                          structure_iter=structure_iter)
    return result, counting.steps


def test_the_structure_is_frozen_after_structure_iter():
    result, steps = _run(structure_iter=3)
    assert steps == 3 and result.structure_frozen_at == 3
    assert result.n_iter == 8 and not result.converged
    assert result.stop_reason == "max_iter reached"


def test_the_paper_loop_runs_the_structure_every_iteration():
    result, steps = _run(structure_iter=None)
    assert steps == 8 and result.structure_frozen_at is None


def test_a_rule_met_freezes_the_structure_then_stops_the_loop():
    """The first time a rule is met the structure freezes and the rules start over; the
    next time, the loop stops and names the rule."""
    result, steps = _run(structure_iter=100,
                         stopping=[SelectionStable(n_selected=1, patience=2)])
    # the top-1 feature never changes: met after iteration 2 (freeze), again after 4
    assert steps == 2 and result.structure_frozen_at == 2
    assert result.n_iter == 4 and result.converged
    assert result.stop_reason == "top-1 features unchanged for 2 iterations"


def test_without_structural_blocks_the_first_rule_met_stops():
    state = State(_Toy(), W=np.ones((3, 2)))
    result = run_schedule(state, [], [_Shrink()], objective=_Norm(), max_iter=50,
                          stopping=[ObjectiveChange(0.3)], structure_iter=3)
    # J = 6 / 4**t: relative change 0.75 > tol always... with tol 0.3 never met
    assert result.n_iter == 50 and not result.converged
    result = run_schedule(state, [], [_Shrink()], objective=_Norm(), max_iter=50,
                          stopping=[ObjectiveChange(0.8)], structure_iter=3)
    assert result.n_iter == 1 and result.converged and result.structure_frozen_at is None


def test_the_estimator_reports_how_the_loop_stopped(blobs):
    est = CauseFS(n_clusters=3, n_features_to_select=4, random_state=0).fit(blobs[0])
    assert est.converged_ and est.n_iter_ < est.max_iter
    assert est.stop_reason_ in ("top-4 features unchanged for 3 iterations",
                                "objective change below tol=1e-05")
    assert 1 <= est.structure_frozen_at_ <= 3
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        short = CauseFS(n_clusters=3, max_iter=2, random_state=0).fit(blobs[0])
    assert not short.converged_ and short.stop_reason_ == "max_iter reached"


def test_a_converged_fit_does_not_depend_on_max_iter(blobs):
    """Stopped by a rule at iteration t, the fit is the same with any max_iter > t."""
    first = CauseFS(n_clusters=3, n_features_to_select=4, random_state=0).fit(blobs[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        for max_iter in (first.n_iter_, first.n_iter_ + 1, first.n_iter_ + 5):
            again = CauseFS(n_clusters=3, n_features_to_select=4, random_state=0,
                            max_iter=max_iter).fit(blobs[0])
            np.testing.assert_array_equal(again.ranking_, first.ranking_)
            np.testing.assert_array_equal(again.objective_history_, first.objective_history_)


def test_the_paper_schedule_and_paper_exact_settings_fit(blobs):
    """The paper's literal loop (structure every iteration) and the paper-exact settings
    (every treatment balanced, exact neighbours) run on small data."""
    paper = CauseFS(n_clusters=3, schedule="paper", max_iter=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        paper.fit(blobs[0])
    assert paper.structure_frozen_at_ is None
    for iteration in range(1, paper.n_iter_ + 1):
        blocks = {r["block"] for r in paper.trace_ if r["iteration"] == iteration}
        assert {"granularity", "confounders"} <= blocks
    # on small data the defaults are the paper-exact settings: the same fit, for the
    # default schedule (exact neighbours; it has no confounder sets to bound) and for the
    # paper's loop (every treatment balanced too)
    for schedule, exact_settings in (("auto", {}), ("full", {"max_treatments": None})):
        exact = CauseFS(n_clusters=3, schedule=schedule, neighbor_algorithm="exact",
                        random_state=0, **exact_settings).fit(blobs[0])
        default = CauseFS(n_clusters=3, schedule=schedule, random_state=0).fit(blobs[0])
        assert exact.converged_
        np.testing.assert_array_equal(exact.ranking_, default.ranking_)

