"""The Block interface: one variable update of Algorithm 1."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar

from ..core.parts import Part
from ..core.state import PROBLEM_FIELDS, STATE_FIELDS, State
from ..model.settings import setting_names

#: what a block promises about the objective (docs/MODEL.md, "Descent and monotonicity")
KINDS = {
    "init": "builds variables before the loop; no promise about the objective",
    "descent": "J(step(state)) <= J(state) + tol for every valid state",
    "structural": "changes the objective itself (groups, nu, K); no descent promise",
}

#: what the engine hands a block besides the settings (:class:`causefs.model.settings.Settings`)
RESOURCES = {
    "qp": "the QP backend, resolved from the qp setting",
    "seed": "the int seed of the fit's random choices, drawn from random_state",
}


def providable() -> list[str]:
    """Every name a block may declare in ``requires``: a setting or a resource."""
    return [*setting_names(), *RESOURCES]


class Block(Part, ABC):
    """One update of the CAUSE-FS state.

    Subclasses set the class attributes below and implement :meth:`step`. A block reads
    the variables it declares, never mutates the state it is given, and returns
    ``state.replace(...)`` with exactly the variables it declares in ``writes``.
    Constructor keywords are the block's options, set in a schedule entry
    (``{"name": "embedding", "max_iter": 50}``). The engine hands a block only what it
    declares in ``requires``, as the constructor keyword of that name. A block may
    declare what one :meth:`step` costs (:meth:`~causefs.core.parts.Part.cost`).

    Attributes
    ----------
    name : str
        Registry name used in schedules (``schedule.loop=[selection_matrix, ...]``).
    kind : {"init", "descent", "structural"}
        See :data:`KINDS`.
    reads, writes : tuple of str
        Variables of :data:`causefs.core.state.STATE_FIELDS` (and ``"X"``) read / written.
    optional_reads : tuple of str
        Variables used when a schedule provides them (the granular graphs, absent in
        ablation II).
    reestimates : tuple of str
        Adaptive parameters the block sets itself (gamma, xi); the descent property
        substitutes the new values into both sides (docs/MODEL.md).
    requires : tuple of str
        What the engine hands the constructor (:func:`providable`): any setting of
        :class:`~causefs.model.settings.Settings` (``sigma``, ``max_granularity``,
        ``neighbor_algorithm``, ...) or a resource of :data:`RESOURCES` (``qp``,
        ``seed``). A constructor argument of the same name that is not declared here is
        never filled in.
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
    requires: ClassVar[tuple] = ()
    info_: Mapping = MappingProxyType({})  # read-only: a block assigns its own dict

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # ABCMeta sets __abstractmethods__ only after this hook runs
        if any(getattr(getattr(cls, attr, None), "__isabstractmethod__", False)
               for attr in dir(cls)):
            return
        if cls.kind not in KINDS:
            raise TypeError(f"{cls.__name__}.kind must be one of {sorted(KINDS)}, got {cls.kind!r}")
        known = set(STATE_FIELDS) | PROBLEM_FIELDS
        for attr in ("reads", "writes", "optional_reads", "reestimates"):
            unknown = set(getattr(cls, attr)) - known
            if unknown:
                raise TypeError(
                    f"{cls.__name__}.{attr} names unknown variables {sorted(unknown)}; "
                    f"variables are {sorted(known)}"
                )
        if not set(cls.reestimates) <= set(cls.writes):
            raise TypeError(f"{cls.__name__}.reestimates must be a subset of writes")
        parameters = inspect.signature(cls).parameters
        missing = [name for name in cls.requires if name not in parameters]
        if missing:
            raise TypeError(f"{cls.__name__}.requires names {missing}, which its constructor "
                            "does not take")
        unknown = sorted(set(cls.requires) - set(providable()))
        if unknown:
            raise TypeError(f"{cls.__name__}.requires names {unknown}, which the engine does "
                            f"not provide; it provides the settings and {sorted(RESOURCES)}")

    @abstractmethod
    def step(self, state: State) -> State:
        """Return a new state with the variables in ``writes`` updated."""
