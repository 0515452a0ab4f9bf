"""Schedules: which blocks run, in which order, and the check that the order can run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .state import PROBLEM_FIELDS
from .validation import InvalidParameterError


class ScheduleError(InvalidParameterError):
    """A schedule that cannot run: a block reads a variable nothing has written yet, an
    entry names no block, or a block refuses its options."""


def entry_name(entry) -> str:
    """The block name of a schedule entry: a name, ``{"name": ..., **options}`` or a
    block instance.

    Raises
    ------
    ScheduleError
        A mapping without a ``name`` or an entry of another kind.
    """
    if isinstance(entry, str):
        return entry
    if isinstance(entry, Mapping):
        if "name" not in entry:
            raise ScheduleError(f"a schedule entry given as a mapping needs a 'name' key, "
                                f"got {dict(entry)}")
        return entry["name"]
    name = getattr(entry, "name", None)
    if isinstance(name, str) and callable(getattr(entry, "step", None)):
        return name
    raise ScheduleError(f"a schedule entry is a block name, a mapping with a 'name' key or "
                        f"a block instance; got {entry!r}")


@dataclass(frozen=True)
class Schedule:
    """Blocks of the initialization and of the loop.

    Parameters
    ----------
    name : str
    init, loop : sequence
        Entries: a registered block name, ``{"name": ..., **options}`` to pass options to
        that block, or a block instance (composed as it is, optax's ``chain`` style).
    params : mapping
        Objective weights the schedule fixes (ablation I sets ``beta: 0``).
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
        schedule = cls(
            name=str(spec.get("name", "custom")),
            init=tuple(spec.get("init") or ()),
            loop=tuple(spec["loop"]),
            params=dict(spec.get("params") or {}),
        )
        schedule.block_names()  # every entry names a block
        return schedule

    def block_names(self) -> list[str]:
        """The names of the blocks of the initialization, then of the loop."""
        return [entry_name(entry) for entry in (*self.init, *self.loop)]


def validate_blocks(init: Sequence, loop: Sequence, needs: Sequence = (),
                    given: frozenset = PROBLEM_FIELDS) -> None:
    """Check that every block reads only variables written by an earlier block, and
    that the loop has a descent block (without one nothing lowers the objective: the
    loop would stop at once, "converged", on the initial ranking).

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
    elif not any(block.kind == "descent" for block in loop):
        problems.append(f"the loop has no descent block (its blocks are "
                        f"{', '.join(f'{b.name} ({b.kind})' for b in loop)}): nothing "
                        "lowers the objective")
    if problems:
        raise ScheduleError("schedule: " + "; ".join(problems))
