"""The loop that runs a schedule's blocks and minimizes an objective it is given."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from . import progress
from .contracts import CHECKS, Contract
from .schedule import validate_blocks
from .state import State
from .validation import check_choice

logger = logging.getLogger("causefs")

#: seconds between two progress messages
LOG_INTERVAL = 5.0


class Objective(Protocol):
    """What the scheduler minimizes; it knows nothing else about the model.

    ``needs`` names the state variables that must be set before the objective can be
    evaluated; ``objective(state, cache)`` returns an object with ``total`` (a float) and
    ``terms`` (a dict), reusing ``cache`` (a dict the scheduler keeps for one run) as it
    likes. :class:`causefs.model.objective.Objective` (a sum of terms) is the model's.
    """

    needs: tuple

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
        Whether a stopping rule was met within ``max_iter`` iterations.
    stop_reason : str
        The rule that stopped the loop, or ``"max_iter reached"``.
    structure_frozen_at : int or None
        The last iteration in which the structural blocks ran, when the structure was
        frozen before the loop ended (None otherwise).
    """

    state: State
    trace: list
    history: list
    n_iter: int
    converged: bool
    stop_reason: str = "max_iter reached"
    structure_frozen_at: int | None = None


def seconds_by(trace: list, field: str = "block") -> dict:
    """Total block time of a trace grouped by a record field (``block`` or ``iteration``)."""
    totals: dict = {}
    for record in trace:
        totals[record[field]] = totals.get(record[field], 0.0) + record["seconds"]
    return totals


def objective_by_iteration(trace: list) -> list[dict]:
    """The objective and its terms at the end of every iteration of a trace (0: after
    the initialization), each ``{"iteration", "objective", "terms", "structure_changed"}``;
    ``structure_changed`` says the iteration ran structural blocks, which redefine the
    objective (so it may rise there, where descent blocks never raise it)."""
    structural = {record["iteration"] for record in trace if record["kind"] == "structural"}
    last: dict = {}
    for record in trace:
        if record["terms"] is not None:  # the last evaluated record of its iteration wins
            last[record["iteration"]] = {"iteration": record["iteration"],
                                         "objective": record["objective"],
                                         "terms": dict(record["terms"]),
                                         "structure_changed": record["iteration"] in structural}
    return list(last.values())


class _Run:
    """One run of a schedule: the current state, the trace, and the objective's cache."""

    def __init__(self, state, objective, *, trace, check, rtol, callback):
        self.state, self.objective = state, objective
        self.needs = set(objective.needs)
        self.trace, self.callback = trace, callback
        self.records: list = []
        self.cache: dict = {}  # objective terms whose inputs a block left untouched
        self.contract = Contract(check, objective, self.needs, rtol)

    def phase(self, blocks: Sequence, iteration: int):
        """Run ``blocks`` once; the record of the last one (None for no block)."""
        record = None
        for position, block in enumerate(blocks):
            record = self.step(block, iteration, blocks, position == len(blocks) - 1)
        return record

    def step(self, block, iteration: int, phase: Sequence, last: bool) -> dict:
        before = self.state
        prints = self.contract.prints(before)
        progress.phase(f"block {block.name!r} (iteration {iteration})")
        start = time.perf_counter()
        try:
            after = block.step(before)
        except Exception as error:
            error.add_note(f"raised by block {block.name!r} (iteration {iteration})")
            raise
        seconds = time.perf_counter() - start
        self.contract.check(block, before, prints, after, iteration, self.cache)
        self.state = after
        record = {"iteration": iteration, "block": block.name, "kind": block.kind,
                  "seconds": seconds, "objective": None, "terms": None,
                  "info": dict(block.info_)}
        if (self.trace or last) and self.needs <= after.available():
            value = self.evaluate(block, iteration, phase)
            record["objective"], record["terms"] = value.total, value.terms
        self.records.append(record)
        if self.callback is not None:
            self.callback(record)
        return record

    def evaluate(self, block, iteration: int, phase: Sequence):
        """The objective at the current state, refused when it is not finite."""
        value = self.objective(self.state, self.cache)
        if not math.isfinite(value.total):
            names = [b.name for b in phase]
            where = (f"block {block.name!r}" if self.trace or len(names) == 1 else
                     f"the blocks {names} (trace=True names the block)")
            raise FloatingPointError(f"objective is {value.total} after {where} (iteration "
                                     f"{iteration}); terms: {value.terms}")
        return value


def _log_progress(level, n_iter, max_iter, current, elapsed, loop_seconds, converged):
    left = 0.0 if converged else loop_seconds / n_iter * (max_iter - n_iter)
    logger.log(level, "iteration %d/%d: J = %.8g, %.1f s elapsed, at most %.0f s left",
               n_iter, max_iter, current, elapsed, left)


class _Loop:
    """Which loop blocks run, and when the loop stops.

    While the structure may change, every block runs; the structure is frozen (the
    structural blocks no longer run) after ``structure_iter`` iterations or as soon as a
    stopping rule is met, whichever comes first, and the rules start over on the frozen
    objective. Once frozen (or when the structure is never frozen, ``structure_iter``
    None), the first rule met stops the loop.
    """

    def __init__(self, loop: Sequence, rules: Sequence, structure_iter: int | None,
                 log_level: int = logging.DEBUG):
        self.loop, self.rules, self.structure_iter = list(loop), list(rules), structure_iter
        self.log_level = log_level
        self.descent = [block for block in self.loop if block.kind != "structural"]
        self.frozen_at = None if len(self.descent) < len(self.loop) else 0

    def blocks(self) -> list:
        return self.loop if self.frozen_at is None else self.descent

    def after(self, n_iter: int, history: list, state) -> str | None:
        """The stopping reason after iteration ``n_iter``, or None to go on."""
        met = [rule.reason for rule in self.rules if rule.met(history, state)]
        if self.frozen_at is None:
            if self.structure_iter is None:
                return met[0] if met else None
            if met or n_iter >= self.structure_iter:
                self.frozen_at = n_iter
                logger.log(self.log_level, "structure frozen after iteration %d (%s)",
                           n_iter, met[0] if met else f"structure_iter={self.structure_iter}")
                for rule in self.rules:
                    rule.reset()
            return None
        return met[0] if met else None


def run_schedule(state: State, init: Sequence, loop: Sequence, *, objective: Objective,
                 max_iter: int = 30, stopping: Sequence = (),
                 structure_iter: int | None = None, callback: Callable | None = None,
                 trace: bool = False, check: str = "cheap",
                 rtol: float = 1e-9, log_level: int = logging.DEBUG) -> FitResult:
    """Run the init blocks once, then the loop until a stopping rule is met or
    ``max_iter`` iterations.

    Stopping rules (:class:`~causefs.core.convergence.StoppingRule`, e.g.
    :class:`~causefs.core.convergence.ObjectiveChange`) are checked in the order given
    after every iteration; the first met names the reason. Structural blocks (which
    change the objective itself) run in the first ``structure_iter`` iterations only, or until a rule is first met; the structure is
    then frozen and the rules start over (None: structural blocks run every iteration,
    the paper's Algorithm 1). ``callback(record)`` is called after every block with its
    trace record. With
    ``trace`` the objective is evaluated after every block (for per-block descent
    checks and plots); without, once per iteration, which is all convergence needs (an
    evaluation costs as much as a cheap block: the balance term is a product with its
    Hessian). Progress goes to the ``causefs`` logger at ``log_level`` (DEBUG: silent
    unless asked for; the estimator logs at INFO with ``verbose=True``), at most every
    :data:`LOG_INTERVAL` seconds: iteration, objective, elapsed and estimated time left.

    Parameters
    ----------
    check : {"cheap", "strict"}
        ``cheap`` (the default) checks that every block returns a State of the same
        problem with its declared ``writes`` set and finite, and on iterations 1, 2, 4,
        8, ... that no descent block raises the objective by more than
        :data:`~causefs.core.contracts.DESCENT_WARN_RTOL` of its scale (a
        :class:`~causefs.core.contracts.DescentWarning` naming the block). ``strict``
        also checks, after every block, that it left its input untouched, changed only
        its declared ``writes``, and, for a descent block, did not raise the objective by
        more than ``rtol`` of its scale (adaptive parameters substituted,
        :func:`causefs.core.contracts.check_descent`); for tests and plugin authors, it
        costs two objective evaluations a block and a copy of the state.

    Raises
    ------
    BlockContractError
        When a block breaks a checked contract, naming it. An exception raised inside a
        block carries a note naming the block and the iteration.
    FloatingPointError
        When the objective becomes NaN or infinite, naming the block that did it (with
        ``trace``) or the iteration and its blocks.
    """
    check_choice("check", check, CHECKS)
    run = _Run(state, objective, trace=trace, check=check, rtol=rtol, callback=callback)
    validate_blocks(init, loop, tuple(run.needs), state.available())
    plan = _Loop(loop, stopping, structure_iter, log_level)
    start = time.perf_counter()
    record = run.phase(init, 0)
    history = [record["objective"] if record else objective(run.state, run.cache).total]
    loop_start = last_log = time.perf_counter()
    logger.log(log_level, "initialization done in %.1f s, J = %.8g", loop_start - start,
               history[-1])
    reason, n_iter = None, 0
    for n_iter in range(1, max_iter + 1):
        history.append(run.phase(plan.blocks(), n_iter)["objective"])
        reason = plan.after(n_iter, history, run.state)
        now = time.perf_counter()
        if now - last_log >= LOG_INTERVAL or reason or n_iter == max_iter:
            last_log = now
            _log_progress(log_level, n_iter, max_iter, history[-1], now - start,
                          now - loop_start, bool(reason))
        if reason:
            break
    frozen = plan.frozen_at if plan.frozen_at and plan.frozen_at < n_iter else None
    return FitResult(state=run.state, trace=run.records, history=history, n_iter=n_iter,
                     converged=reason is not None, stop_reason=reason or "max_iter reached",
                     structure_frozen_at=frozen)
