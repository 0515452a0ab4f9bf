"""Schedules (which blocks run, in which order) and the loop that runs them."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .contracts import (
    CHECKS,
    check_descent,
    check_purity,
    check_returned_state,
    fingerprints,
)
from .state import PROBLEM_FIELDS, State


logger = logging.getLogger("causefs")

#: seconds between two progress messages at INFO
LOG_INTERVAL = 5.0


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


def validate_blocks(init: Sequence, loop: Sequence, needs: Sequence = (),
                    given: frozenset = PROBLEM_FIELDS) -> None:
    """Check that every block reads only variables written by an earlier block.

    ``needs`` lists what the objective needs once the initialization is done; ``given``
    what the starting state already holds.

    Raises
    ------
    ScheduleError
        Listing every violation.
    """
    available = set(given)
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


class Objective(Protocol):
    """What the scheduler minimizes; it knows nothing else about the model.

    ``needs(problem)`` names the state variables that must be set before the objective
    can be evaluated; ``objective(state, cache)`` returns an object with ``total`` (a
    float) and ``terms`` (a dict), reusing ``cache`` (a dict the scheduler keeps for
    one run) as it likes. :class:`causefs.objective.CauseFSObjective` is CAUSE-FS's.
    """

    def needs(self, problem) -> tuple: ...

    def __call__(self, state: State, cache: dict | None = None): ...


@dataclass
class FitResult:
    """What a run of the scheduler produced.

    Attributes
    ----------
    state : State
        Final state.
    trace : list of dict
        One record per block run: ``iteration`` (0 = initialization), ``block``,
        ``kind``, ``seconds`` (the block's own time), ``objective`` / ``terms`` after it,
        and ``info``, the block's diagnostics (``Block.info_``: the mu block's QP
        ``qp_iterations`` and ``qp_converged``). The objective is evaluated after the
        last block of the initialization and of every iteration, and after every block
        only when the run asked for a ``trace``; elsewhere (and while the
        initialization has not set what the objective needs) they are None.
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


def run_schedule(state: State, init: Sequence, loop: Sequence, *, objective: Objective,
                 max_iter: int = 30, tol: float = 1e-5, callback: Callable | None = None,
                 trace: bool = False, check: str = "cheap",
                 rtol: float = 1e-9) -> FitResult:
    """Run the init blocks once, then the loop until convergence or ``max_iter``.

    Convergence: ``|J_prev - J| <= tol * |J_prev|`` between consecutive iterations.
    ``callback(record)`` is called after every block with its trace record. With
    ``trace`` the objective is evaluated after every block (for per-block descent
    checks and plots); without, once per iteration, which is all convergence needs (an
    evaluation costs as much as a cheap block: the balance term is a product with its
    Hessian). Progress goes to the ``causefs`` logger at INFO, at most every
    :data:`LOG_INTERVAL` seconds: iteration, objective, elapsed and estimated time left.

    Parameters
    ----------
    check : {"cheap", "strict"}
        ``cheap`` (always on) checks that every block returns a State of the same
        problem. ``strict`` also checks, after every block, that it left its input
        untouched, changed only its declared ``writes``, and, for a descent block, did
        not raise the objective by more than ``rtol`` of its scale (adaptive parameters
        substituted, :func:`causefs.contracts.check_descent`); for tests and plugin
        authors, it costs two objective evaluations a block and a copy of the state.

    Raises
    ------
    BlockContractError
        When a block breaks a checked contract, naming it.
    FloatingPointError
        When the objective becomes NaN or infinite, naming the block that did it (with
        ``trace``) or the iteration and its blocks.
    """
    if check not in CHECKS:
        raise ValueError(f"unknown check {check!r}; allowed: {', '.join(CHECKS)}")
    needs = set(objective.needs(state.problem))
    validate_blocks(init, loop, tuple(needs), state.available())
    records: list = []
    history: list = []
    cache: dict = {}  # objective terms whose inputs a block left untouched are reused

    def run(block, iteration, last):
        nonlocal state
        before = state
        prints = fingerprints(before) if check == "strict" else None
        start = time.perf_counter()
        state = block.step(before)
        seconds = time.perf_counter() - start
        check_returned_state(block, before, state, iteration)
        if check == "strict":
            check_purity(block, before, prints, state, iteration)
            if needs <= before.available():
                check_descent(block, objective, before, state, rtol, iteration)
        record = {"iteration": iteration, "block": block.name, "kind": block.kind,
                  "seconds": seconds, "objective": None, "terms": None,
                  "info": dict(block.info_)}
        if (trace or last) and needs <= state.available():
            value = objective(state, cache)
            if not math.isfinite(value.total):
                blocks = [b.name for b in (loop if iteration else init)]
                where = (f"block {block.name!r}" if trace or len(blocks) == 1 else
                         f"the blocks {blocks} (trace=True names the block)")
                raise FloatingPointError(
                    f"objective is {value.total} after {where} (iteration {iteration}); "
                    f"terms: {value.terms}"
                )
            record["objective"], record["terms"] = value.total, value.terms
        records.append(record)
        if callback is not None:
            callback(record)
        return record

    record = None
    start = time.perf_counter()
    for position, block in enumerate(init):
        record = run(block, 0, position == len(init) - 1)
    history.append(record["objective"] if record else objective(state, cache).total)
    converged = False
    n_iter = 0
    loop_start = logged = time.perf_counter()
    logger.info("initialization done in %.1f s, J = %.8g", loop_start - start, history[-1])
    for n_iter in range(1, max_iter + 1):
        for position, block in enumerate(loop):
            record = run(block, n_iter, position == len(loop) - 1)
        history.append(record["objective"])
        previous, current = history[-2], history[-1]
        converged = abs(previous - current) <= tol * abs(previous)
        now = time.perf_counter()
        if now - logged >= LOG_INTERVAL or converged or n_iter == max_iter:
            logged = now
            left = (now - loop_start) / n_iter * (max_iter - n_iter)
            logger.info("iteration %d/%d: J = %.8g, %.1f s elapsed, at most %.0f s left",
                        n_iter, max_iter, current, now - start, 0.0 if converged else left)
        if converged:
            break
    return FitResult(state=state, trace=records, history=history, n_iter=n_iter,
                     converged=converged)
