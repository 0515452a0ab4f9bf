"""The scheduler's loop on a problem of one number whose iterates are known in closed form:
the history, the trace, when the objective is evaluated, the progress log, non-finite
objectives and errors named, the structure frozen. The model is not involved: what the
loop must do is written out here from :func:`causefs.core.loop.run_schedule`'s contract."""

import logging

import numpy as np
import pytest

from causefs.blocks import Block
from causefs.core import loop as loop_module
from causefs.core.contracts import BlockContractError
from causefs.core.convergence import StoppingRule
from causefs.core.loop import objective_by_iteration, run_schedule, seconds_by
from causefs.core.schedule import ScheduleError
from causefs.core.state import Field, State
from causefs.core.validation import InvalidParameterError
from causefs.model.objective import ObjectiveValue


class _Toy:
    """A problem of one number ``x`` and a helper variable ``y``."""

    fields = {"x": Field("x", doc="the number"), "y": Field("y", doc="a helper")}


class _Clock:
    """A clock the blocks advance: each step takes ``step`` seconds of it."""

    def __init__(self, step=0.0):
        self.now, self.step = 0.0, step

    def __call__(self):
        return self.now


CLOCK = _Clock()


class _Start(Block):
    """Sets x = 2 (an initialization)."""

    name, kind, writes = "start", "init", ("x",)

    def step(self, state):
        CLOCK.now += CLOCK.step
        return state.replace(x=np.array([2.0]))


class _Helper(Block):
    """Sets y, which the objective does not need."""

    name, kind, writes = "helper", "init", ("y",)

    def step(self, state):
        CLOCK.now += CLOCK.step
        return state.replace(y=np.array([1.0]))


class _Halve(Block):
    """x / 2: J = x^2 falls to a quarter (a descent block); its info counts its steps."""

    name, kind, reads, writes = "halve", "descent", ("x",), ("x",)

    def __init__(self):
        self.steps = 0

    def step(self, state):
        CLOCK.now += CLOCK.step
        self.steps += 1
        self.info_ = {"steps": self.steps}
        return state.replace(x=state.x / 2)


class _Restructure(Block):
    """A structural block that changes nothing (counts its steps)."""

    name, kind, reads = "restructure", "structural", ("x",)

    def __init__(self):
        self.steps = 0

    def step(self, state):
        CLOCK.now += CLOCK.step
        self.steps += 1
        return state


class _Square:
    """J = x^2, as a term ``square`` and a constant term ``one`` = 1."""

    needs = ("x",)

    def __call__(self, state, cache=None):
        square = float(state.x[0] ** 2)
        return ObjectiveValue(total=square + 1.0, terms={"square": square, "one": 1.0})


class _Always(StoppingRule):
    """Met after every iteration; counts its resets."""

    def __init__(self, reason):
        self.reason, self.resets = reason, 0

    def met(self, history, state) -> bool:
        return True

    def reset(self) -> None:
        self.resets += 1


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    CLOCK.now, CLOCK.step = 0.0, 0.0
    monkeypatch.setattr(loop_module.time, "perf_counter", CLOCK)
    return CLOCK


def _run(init=(_Start,), loop=(_Halve,), **options):
    state = State(_Toy())
    return run_schedule(state, [b() for b in init], [b() for b in loop],
                        objective=_Square(), **options)


def test_the_history_is_j_after_the_initialization_and_after_every_iteration():
    result = _run(max_iter=3)
    # x = 2, 1, 1/2, 1/4: J = x^2 + 1
    assert result.history == [5.0, 2.0, 1.25, 1.0625]
    assert result.n_iter == 3 and not result.converged
    assert result.stop_reason == "max_iter reached" and result.structure_frozen_at is None
    assert result.state.x[0] == 0.25


def test_without_an_initialization_the_history_starts_at_the_given_state():
    state = State(_Toy(), x=np.array([4.0]))
    result = run_schedule(state, [], [_Halve()], objective=_Square(), max_iter=1)
    assert result.history == [17.0, 5.0]


def test_the_trace_has_a_record_per_block_and_the_objective_where_it_was_evaluated():
    result = _run(init=(_Helper, _Start), loop=(_Halve, _Restructure), max_iter=2)
    assert [(r["iteration"], r["block"], r["kind"]) for r in result.trace] == [
        (0, "helper", "init"), (0, "start", "init"),
        (1, "halve", "descent"), (1, "restructure", "structural"),
        (2, "halve", "descent"), (2, "restructure", "structural")]
    # without trace=True: after the last block of each phase only
    assert [r["objective"] for r in result.trace] == [None, 5.0, None, 2.0, None, 1.25]
    assert [r["terms"] for r in result.trace][1] == {"square": 4.0, "one": 1.0}
    assert [r["info"] for r in result.trace] == [{}, {}, {"steps": 1}, {}, {"steps": 2}, {}]
    assert all(r["seconds"] == 0.0 for r in result.trace)


def test_with_trace_every_block_is_evaluated_once_what_j_needs_is_set():
    result = _run(init=(_Helper, _Start), loop=(_Halve, _Restructure), max_iter=1,
                  trace=True)
    # the helper runs before x is set: J cannot be evaluated there
    assert [r["objective"] for r in result.trace] == [None, 5.0, 2.0, 2.0]
    assert [r["terms"] for r in result.trace][2] == {"square": 1.0, "one": 1.0}


def test_the_trace_copies_a_blocks_info_and_times_each_block(clock):
    clock.step = 3.0
    result = _run(max_iter=2)
    assert [r["seconds"] for r in result.trace] == [3.0, 3.0, 3.0]
    assert seconds_by(result.trace) == {"start": 3.0, "halve": 6.0}
    assert seconds_by(result.trace, "iteration") == {0: 3.0, 1: 3.0, 2: 3.0}
    first, second = result.trace[1]["info"], result.trace[2]["info"]
    assert first == {"steps": 1} and second == {"steps": 2}


def test_the_callback_gets_every_record_as_it_is_made():
    seen = []
    result = _run(init=(_Helper, _Start), loop=(_Halve, _Restructure), max_iter=2,
                  callback=lambda record: seen.append(dict(record)))
    assert seen == result.trace


def test_objective_by_iteration_keeps_the_last_evaluation_of_each_iteration():
    result = _run(init=(_Helper, _Start), loop=(_Halve, _Restructure), max_iter=2,
                  trace=True)
    assert objective_by_iteration(result.trace) == [
        {"iteration": 0, "objective": 5.0, "terms": {"square": 4.0, "one": 1.0},
         "structure_changed": False},
        {"iteration": 1, "objective": 2.0, "terms": {"square": 1.0, "one": 1.0},
         "structure_changed": True},
        {"iteration": 2, "objective": 1.25, "terms": {"square": 0.25, "one": 1.0},
         "structure_changed": True}]


class _Zero(Block):
    """x = 0, where J = log x is -inf (a fall: no descent check objects)."""

    name, kind, reads, writes = "zero", "descent", ("x",), ("x",)

    def step(self, state):
        return state.replace(x=np.zeros(1))


class _Log(_Square):
    def __call__(self, state, cache=None):
        with np.errstate(divide="ignore"):
            value = float(np.log(state.x[0]))
        return ObjectiveValue(total=value, terms={"log": value})


@pytest.mark.parametrize("trace, loop, where", [
    (True, [_Zero, _Restructure], "after block 'zero' (iteration 1)"),
    (False, [_Zero, _Restructure], "after the blocks ['zero', 'restructure'] (trace=True names the "
                             "block) (iteration 1)"),
    (False, [_Zero], "after block 'zero' (iteration 1)"),
])
def test_a_non_finite_objective_names_where_it_appeared(trace, loop, where):
    state = State(_Toy(), x=np.array([1.0]))
    with pytest.raises(FloatingPointError) as error:
        run_schedule(state, [], [b() for b in loop], objective=_Log(), trace=trace,
                     max_iter=2)
    assert str(error.value) == f"objective is -inf {where}; terms: {{'log': -inf}}"


def test_an_error_in_a_block_carries_a_note_naming_it_and_the_iteration():
    class Boom(_Halve):
        name = "boom"

        def step(self, state):
            if state.x[0] < 1.5:
                raise ArithmeticError("too small")
            return super().step(state)

    with pytest.raises(ArithmeticError) as error:
        _run(loop=(Boom,), max_iter=5)
    assert error.value.__notes__ == ["raised by block 'boom' (iteration 2)"]


def test_the_checking_level_and_the_blocks_are_checked_before_any_block_runs():
    with pytest.raises(InvalidParameterError) as error:
        _run(check="everything")
    assert str(error.value) == "check='everything': must be one of 'cheap', 'strict'"
    with pytest.raises(ScheduleError, match="loop block 0 \\('halve'\\) reads \\['x'\\]"):
        _run(init=(), max_iter=1)
    with pytest.raises(ScheduleError, match="the loop has no descent block"):
        _run(loop=(_Restructure,))


def test_a_block_breaking_its_contract_is_stopped_by_the_loop():
    class Forgets(_Halve):
        name = "forgets"

        def step(self, state):
            return None

    with pytest.raises(BlockContractError, match="'forgets' \\(iteration 1\\) returned "
                                                 "NoneType"):
        _run(loop=(Forgets,), max_iter=1)


def _logged(caplog):
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "causefs"]


def test_progress_is_logged_every_interval_the_last_iteration_and_the_time_left(caplog,
                                                                                clock):
    # the run starts at 100 s on the clock; each block takes 2.5 s: the init ends 2.5 s
    # into the run, iteration t at 2.5 (t + 1) s; progress is logged once LOG_INTERVAL
    # (5 s) has passed since the last message (or the init's end), and at the last
    clock.now, clock.step = 100.0, 2.5
    caplog.set_level(logging.DEBUG, logger="causefs")
    _run(max_iter=7, log_level=logging.INFO)
    expected = [(logging.INFO, "initialization done in 2.5 s, J = 5")]
    last = 2.5
    for t in range(1, 8):
        now = 2.5 * (t + 1)
        if now - last >= loop_module.LOG_INTERVAL or t == 7:
            last = now
            left = (now - 2.5) / t * (7 - t)
            expected.append((logging.INFO, f"iteration {t}/7: J = {4 / 4 ** t + 1:.8g}, "
                                           f"{now:.1f} s elapsed, at most {left:.0f} s left"))
    assert _logged(caplog) == expected
    assert [message.split(":")[0] for _, message in expected[1:]] == [
        "iteration 2/7", "iteration 4/7", "iteration 6/7", "iteration 7/7"]


def test_a_run_that_stops_logs_its_last_iteration_with_nothing_left(caplog, clock):
    clock.step = 1.0
    caplog.set_level(logging.DEBUG, logger="causefs")
    result = _run(max_iter=10, stopping=[_Always("always")])
    assert result.n_iter == 1 and result.converged and result.stop_reason == "always"
    assert _logged(caplog)[-1] == (logging.DEBUG, "iteration 1/10: J = 2, 2.0 s elapsed, "
                                                  "at most 0 s left")


def test_the_first_rule_met_names_the_reason():
    first, second = _Always("first"), _Always("second")
    result = _run(max_iter=5, stopping=[first, second])
    assert result.stop_reason == "first" and result.n_iter == 1


def test_a_rule_met_freezes_the_structure_resets_the_rules_and_the_log_says_why(caplog):
    rules = [_Always("first"), _Always("second")]
    caplog.set_level(logging.DEBUG, logger="causefs")
    restructure = _Restructure()
    result = run_schedule(State(_Toy()), [_Start()], [_Halve(), restructure],
                          objective=_Square(), max_iter=8, stopping=rules,
                          structure_iter=9, log_level=logging.INFO)
    # met after iteration 1: frozen there (before structure_iter), every rule reset;
    # met again after iteration 2, without the structural block: stopped
    assert (logging.INFO, "structure frozen after iteration 1 (first)") in _logged(caplog)
    assert [rule.resets for rule in rules] == [1, 1]
    assert restructure.steps == 1 and result.structure_frozen_at == 1
    assert result.n_iter == 2 and result.stop_reason == "first"
    assert [r["block"] for r in result.trace] == ["start", "halve", "restructure", "halve"]


def test_the_structure_frozen_by_structure_iter_is_reported_and_logged(caplog):
    caplog.set_level(logging.DEBUG, logger="causefs")
    restructure = _Restructure()
    rule = _Always("never reached")
    rule.met = lambda history, state: len(history) > 5  # met after iteration 5
    result = run_schedule(State(_Toy()), [_Start()], [_Halve(), restructure],
                          objective=_Square(), max_iter=8, stopping=[rule],
                          structure_iter=2)
    assert restructure.steps == 2 and result.structure_frozen_at == 2 and rule.resets == 1
    assert (logging.DEBUG, "structure frozen after iteration 2 (structure_iter=2)") in \
        _logged(caplog)
    assert result.n_iter == 5 and result.stop_reason == "never reached"


def test_a_structure_frozen_at_the_last_iteration_is_not_reported_as_frozen():
    restructure = _Restructure()
    result = run_schedule(State(_Toy()), [_Start()], [_Halve(), restructure],
                          objective=_Square(), max_iter=3, structure_iter=3)
    assert restructure.steps == 3 and result.structure_frozen_at is None


def test_without_a_frozen_structure_the_first_rule_met_stops_at_once():
    restructure = _Restructure()
    result = run_schedule(State(_Toy()), [_Start()], [_Halve(), restructure],
                          objective=_Square(), max_iter=8, structure_iter=None,
                          stopping=[_Always("first"), _Always("second")])
    assert result.n_iter == 1 and result.stop_reason == "first"
    assert restructure.steps == 1 and result.structure_frozen_at is None


def test_by_default_the_loop_runs_at_most_30_iterations():
    result = _run()
    assert result.n_iter == 30 and result.stop_reason == "max_iter reached"


def test_each_block_is_announced_as_the_phase_running(monkeypatch):
    phases = []
    monkeypatch.setattr(loop_module.progress, "phase", phases.append)
    _run(init=(_Helper, _Start), max_iter=2)
    assert phases == ["block 'helper' (iteration 0)", "block 'start' (iteration 0)",
                      "block 'halve' (iteration 1)", "block 'halve' (iteration 2)"]


class _Recording(_Square):
    """J = x^2 + 1; keeps the caches it is handed."""

    def __init__(self):
        self.caches = []

    def __call__(self, state, cache=None):
        self.caches.append(cache)
        return super().__call__(state, cache)


def test_one_cache_serves_every_evaluation_of_a_run_at_the_default_level():
    objective = _Recording()
    run_schedule(State(_Toy()), [_Start()], [_Halve()], objective=objective, max_iter=2)
    # after the init, descent checks (iterations 1 and 2: before and after), iterations
    assert len(objective.caches) == 7 and isinstance(objective.caches[0], dict)
    assert all(cache is objective.caches[0] for cache in objective.caches)
    objective = _Recording()  # no initialization: J of the given state, with the cache
    run_schedule(State(_Toy(), x=np.ones(1)), [], [_Halve()], objective=objective,
                 max_iter=1)
    assert len(objective.caches) == 4 and isinstance(objective.caches[0], dict)
    assert all(cache is objective.caches[0] for cache in objective.caches)


def test_no_iteration_at_max_iter_0():
    result = _run(max_iter=0)
    assert result.n_iter == 0 and result.history == [5.0] and not result.converged


class _Rise(_Halve):
    """Multiplies x by (1 + 1e-6): J rises by about 2e-6 of its scale."""

    name = "rise"

    def step(self, state):
        return state.replace(x=state.x * (1 + 1e-6))


def test_the_strict_level_holds_descent_to_rtol_and_checks_purity():
    with pytest.raises(BlockContractError, match="descent block 'rise' \\(iteration 1\\)"):
        _run(loop=(_Rise,), max_iter=1, check="strict")  # rtol 1e-9 by default
    assert _run(loop=(_Rise,), max_iter=1, check="strict", rtol=1e-5).n_iter == 1

    class InPlace(_Halve):
        name = "in_place"

        def step(self, state):
            state.x[0] /= 2
            return state.replace(x=state.x.copy())

    assert _run(loop=(InPlace,), max_iter=1).n_iter == 1  # the default level: not seen
    with pytest.raises(BlockContractError, match="'in_place' \\(iteration 1\\) mutated its"):
        _run(loop=(InPlace,), max_iter=1, check="strict")
