"""Schedules (which blocks run, in which order) and the loop that runs them."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .objective import objective
from .state import PROBLEM_FIELDS, State


class ScheduleError(ValueError):
    """A schedule that cannot run: a block reads a variable nothing has written yet."""


@dataclass(frozen=True)
class Schedule:
    """Blocks of the initialization and of the loop, by registry name.

    Parameters
    ----------
    name : str
    init, loop : sequence of str or mapping
        A block name, or ``{"name": ..., **options}`` to pass options to that block.
    params : mapping
        Hyperparameters the schedule fixes (ablation I sets ``beta: 0``).
    """

    name: str
    init: tuple
    loop: tuple
    params: Mapping = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, spec: Mapping) -> "Schedule":
        unknown = set(spec) - {"name", "init", "loop", "params"}
        if unknown:
            raise ScheduleError(f"schedule has unknown keys {sorted(unknown)}; "
                                "allowed: name, init, loop, params")
        if "loop" not in spec:
            raise ScheduleError("a schedule needs a 'loop' list of blocks")
        return cls(
            name=str(spec.get("name", "custom")),
            init=tuple(spec.get("init") or ()),
            loop=tuple(spec["loop"]),
            params=dict(spec.get("params") or {}),
        )


def validate_blocks(init: Sequence, loop: Sequence, needs: Sequence = ("W", "F", "mu")) -> None:
    """Check that every block reads only variables written by an earlier block.

    ``needs`` lists what the objective needs once the initialization is done.

    Raises
    ------
    ScheduleError
        Listing every violation.
    """
    available = set(PROBLEM_FIELDS)
    problems = []
    for phase, blocks in (("init", init), ("loop", loop)):
        for position, block in enumerate(blocks):
            missing = sorted(set(block.reads) - available)
            if missing:
                problems.append(
                    f"{phase} block {position} ({block.name!r}) reads {missing}, "
                    "which no earlier block writes"
                )
            available |= set(block.writes)
        if phase == "init":
            missing = sorted(set(needs) - available)
            if missing:
                problems.append(f"after the init blocks {missing} are still unset; "
                                "the objective needs them")
    if not loop:
        problems.append("the loop has no block")
    if problems:
        raise ScheduleError("invalid schedule:\n  " + "\n  ".join(problems))


@dataclass
class FitResult:
    """What a run of the scheduler produced.

    Attributes
    ----------
    state : State
        Final state.
    trace : list of dict
        One record per block run: ``iteration`` (0 = initialization), ``block``,
        ``kind``, ``seconds`` (the block's own time), and ``objective`` / ``terms``
        after it (None while the initialization has not set W, F and mu yet).
    history : list of float
        Objective after the initialization and after every iteration.
    n_iter : int
        Loop iterations run.
    converged : bool
        Whether the relative change fell below ``tol`` before ``max_iter``.
    """

    state: State
    trace: list
    history: list
    n_iter: int
    converged: bool


def seconds_by(trace: list, field: str = "block") -> dict:
    """Total block time of a trace grouped by a record field (``block`` or ``iteration``)."""
    totals: dict = {}
    for record in trace:
        totals[record[field]] = totals.get(record[field], 0.0) + record["seconds"]
    return totals


def run_schedule(state: State, init: Sequence, loop: Sequence, *, max_iter: int = 30,
                 tol: float = 1e-5, callback: Callable | None = None) -> FitResult:
    """Run the init blocks once, then the loop until convergence or ``max_iter``.

    Convergence: ``|J_prev - J| <= tol * |J_prev|`` between consecutive iterations.
    ``callback(record)`` is called after every block with its trace record.

    Raises
    ------
    FloatingPointError
        When the objective becomes NaN or infinite, naming the block that did it.
    """
    needs = ("W", "F", "mu") + (("K",) if state.problem.beta != 0 else ())
    validate_blocks(init, loop, needs)
    trace: list = []
    history: list = []
    cache: dict = {}  # objective terms whose inputs a block left untouched are reused

    def run(block, iteration):
        nonlocal state
        start = time.perf_counter()
        state = block.step(state)
        seconds = time.perf_counter() - start
        record = {"iteration": iteration, "block": block.name, "kind": block.kind,
                  "seconds": seconds, "objective": None, "terms": None}
        if {"W", "F", "mu"} <= state.available():
            value = objective(state, cache)
            if not math.isfinite(value.total):
                raise FloatingPointError(
                    f"objective is {value.total} after block {block.name!r} "
                    f"(iteration {iteration}); terms: {value.terms}"
                )
            record["objective"], record["terms"] = value.total, value.terms
        trace.append(record)
        if callback is not None:
            callback(record)
        return record

    record = None
    for block in init:
        record = run(block, 0)
    history.append(record["objective"] if record else objective(state, cache).total)
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        for block in loop:
            record = run(block, n_iter)
        history.append(record["objective"])
        previous, current = history[-2], history[-1]
        if abs(previous - current) <= tol * abs(previous):
            converged = True
            break
    return FitResult(state=state, trace=trace, history=history, n_iter=n_iter,
                     converged=converged)
