"""When the loop stops: rules the scheduler checks after every iteration.

A rule is met or not after an iteration; the scheduler stops when one is met (and, while
the structure may still change, freezes the structure first: :func:`run_schedule`). The
first rule met names the stopping reason. Rules that look at the model's variables (the
selection of features) live with the model: :class:`causefs.model.stopping.SelectionStable`.
"""

from __future__ import annotations

from typing import Protocol

from .validation import Interval, check_value


class ConvergenceWarning(UserWarning):
    """The loop reached ``max_iter`` before any stopping rule was met.

    scikit-learn's :class:`~sklearn.exceptions.ConvergenceWarning` is raised by the
    estimator instead; the scheduler knows no scikit-learn.
    """


class StoppingRule(Protocol):
    """A criterion of convergence; ``reason`` says what was met, for a reader."""

    reason: str

    def reset(self) -> None:
        """Forget the iterations seen so far (the scheduler calls it when the objective
        changes, i.e. when the structure is frozen)."""

    def met(self, history: list, state) -> bool:
        """Whether the rule is met after the iteration that produced ``history[-1]``."""


class ObjectiveChange:
    """``|J_prev - J| <= tol |J_prev|`` between two consecutive iterations."""

    def __init__(self, tol: float):
        self.tol = check_value("tol", tol, Interval(float, 0))
        self.reason = f"objective change below tol={tol:g}"
        self._start = 0

    def reset(self) -> None:
        self._start = None

    def met(self, history: list, state) -> bool:
        if self._start is None:  # compare only iterations after the last reset
            self._start = len(history) - 1
            return False
        if len(history) - self._start < 2:
            return False
        previous, current = history[-2], history[-1]
        return abs(previous - current) <= self.tol * abs(previous)
