"""When the loop stops: rules the scheduler checks after every iteration (a plugin kind).

A rule is met or not after an iteration; the scheduler stops when one is met (and, while
the structure may still change, freezes the structure first: :func:`run_schedule`). The
first rule met names the stopping reason. A schedule names its rules (``stopping``);
rules that look at the model's variables live with the model
(:class:`causefs.model.stopping.SelectionStable`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from .parts import Part
from .validation import Interval, check_value


class StoppingRule(Part, ABC):
    """A criterion of convergence.

    Like a block, a rule gets from the engine, as constructor keywords, the settings and
    resources it declares in ``requires`` (``tol``; ``patience`` and ``n_selected``).

    Attributes
    ----------
    name : str
        Registry name used in schedules (``stopping: [objective_change]``).
    reason : str
        What was met, for a reader (set by the instance).
    """

    name: ClassVar[str]
    requires: ClassVar[tuple] = ()
    reason: str = ""

    def reset(self) -> None:
        """Forget the iterations seen so far (the scheduler calls it when the objective
        changes, i.e. when the structure is frozen)."""

    @abstractmethod
    def met(self, history: list, state) -> bool:
        """Whether the rule is met after the iteration that produced ``history[-1]``."""


class ObjectiveChange(StoppingRule):
    """``|J_prev - J| <= tol |J_prev|`` between two consecutive iterations.

    Parameters
    ----------
    tol : float
    """

    name = "objective_change"
    requires = ("tol",)

    def __init__(self, tol: float = 1e-5):
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
