"""The Block interface: one variable update of Algorithm 1 (a plugin kind)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar

from ..core.parts import Part
from ..core.state import State
from ..model.settings import RESOURCES, check_requires, providable

__all__ = ["Block", "EVERY_TERM", "KINDS", "RESOURCES", "providable"]

#: what a block promises about the objective (docs/MODEL.md, "Descent and monotonicity")
KINDS = {
    "init": "builds variables before the loop; no promise about the objective",
    "descent": "J(step(state)) <= J(state) + tol for every valid state",
    "structural": "changes the objective itself (groups, nu, K); no descent promise",
}

#: a block's ``derived_for`` that accounts for every term: it evaluates J itself
EVERY_TERM = "*"


class Block(Part, ABC):
    """One update of the state.

    Subclasses set the class attributes below and implement :meth:`step`. A block reads
    the variables it declares, never mutates the state it is given, and returns
    ``state.replace(...)`` with exactly the variables it declares in ``writes``.
    Constructor keywords are the block's options, set in a schedule entry
    (``{"name": "embedding", "max_iter": 50}``). The engine hands a block only what it
    declares in ``requires``, as the constructor keyword of that name. A block may
    declare what one :meth:`step` costs (:meth:`~causefs.core.parts.Part.cost`).

    A descent block minimizes the schedule's objective, whatever terms it names, in the
    variables it writes: it asks the objective for its ``subproblem``
    (:mod:`causefs.model.subproblems`), to which every term that depends on those
    variables adds its part, or it declares the terms its update was derived for
    (``derived_for``). The engine refuses a schedule in which a term depends on a
    descent block's variables and is accounted for neither way.

    Attributes
    ----------
    name : str
        Registry name used in schedules (``schedule.loop=[selection_matrix, ...]``).
    kind : {"init", "descent", "structural"}
        See :data:`KINDS`.
    reads, writes : tuple of str
        Fields read / variables written (:class:`~causefs.core.state.Field`; CAUSE-FS's
        are in :mod:`causefs.model.variables`).
    optional_reads : tuple of str
        Variables used when a schedule provides them (the granular graphs, absent in
        ablation II).
    reestimates : tuple of str
        Adaptive parameters the block sets itself (gamma, xi); the descent property
        substitutes the new values into both sides (docs/MODEL.md).
    subproblem : type or None
        The subproblem a descent block solves, assembled from the objective's terms.
    derived_for : tuple of str, or "*"
        Without a subproblem: the names of the terms whose sum the update is known to
        lower, or ``"*"`` for a block that evaluates J itself (any term).
    requires : tuple of str
        What the engine hands the constructor (:func:`providable`): any setting of
        :class:`~causefs.model.settings.Settings` (``sigma``, ``max_granularity``,
        ``neighbor_algorithm``, ...) or a resource of :data:`RESOURCES` (``qp``,
        ``seed``). A constructor argument of the same name that is not declared here is
        never filled in.
    fields : tuple of Field
        Variables the block declares (a plugin's own).
    info_ : dict
        Diagnostics of the last :meth:`step` (e.g. a solver's iterations), copied into
        the scheduler's trace; empty unless the block sets it.
    """

    name: ClassVar[str]
    kind: ClassVar[str]
    reads: ClassVar[tuple] = ()
    writes: ClassVar[tuple] = ()
    optional_reads: ClassVar[tuple] = ()
    reestimates: ClassVar[tuple] = ()
    subproblem: ClassVar[type | None] = None
    derived_for: ClassVar[tuple | str] = ()
    requires: ClassVar[tuple] = ()
    fields: ClassVar[tuple] = ()
    info_: Mapping = MappingProxyType({})  # read-only: a block assigns its own dict

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # ABCMeta sets __abstractmethods__ only after this hook runs
        if any(getattr(getattr(cls, attr, None), "__isabstractmethod__", False)
               for attr in dir(cls)):
            return
        if cls.kind not in KINDS:
            raise TypeError(f"{cls.__name__}.kind must be one of {sorted(KINDS)}, got {cls.kind!r}")
        if not set(cls.reestimates) <= set(cls.writes):
            raise TypeError(f"{cls.__name__}.reestimates must be a subset of writes")
        check_requires(cls)

    def descended(self) -> tuple:
        """The variables whose subproblem the block solves: what it writes, less the
        parameters it re-estimates."""
        return tuple(name for name in self.writes if name not in self.reestimates)

    @abstractmethod
    def step(self, state: State) -> State:
        """Return a new state with the variables in ``writes`` updated."""
