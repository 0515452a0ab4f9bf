"""Schedules: which blocks run in which order, the objective's terms they minimize, the
rules that stop the loop, and the check that the order can run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .validation import InvalidParameterError


class ScheduleError(InvalidParameterError):
    """A schedule that cannot run: a block reads a variable nothing has written yet, an
    entry names no block, or a block refuses its options."""


def entry_name(entry) -> str:
    """The part name of a schedule entry: a name, ``{"name": ..., **options}`` or a
    part instance (a block, a term or a stopping rule).

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
    if isinstance(name, str) and not isinstance(entry, type):
        return name
    raise ScheduleError(f"a schedule entry is a part's name, a mapping with a 'name' key or "
                        f"a part instance; got {entry!r}")


#: the keys of a schedule mapping
SCHEDULE_KEYS = ("name", "init", "loop", "terms", "stopping", "setting_defaults")


@dataclass(frozen=True)
class Schedule:
    """Blocks of the initialization and of the loop, the terms of the objective they
    minimize, and the rules that stop the loop.

    Parameters
    ----------
    name : str
    init, loop : sequence
        Block entries: a registered block name, ``{"name": ..., **options}`` to pass
        options to that block, or a block instance (composed as it is, optax's ``chain``
        style).
    terms : sequence or None
        The objective: term entries, as block entries. None: the engine's default terms
        (CAUSE-FS's objective, :data:`causefs.engine.DEFAULT_TERMS`).
    stopping : sequence or None
        Stopping rule entries, checked in this order after every iteration. None: the
        engine's default rules (:data:`causefs.engine.DEFAULT_STOPPING`).
    setting_defaults : mapping
        Settings the schedule supplies where the user left the library's default (the
        paper's loop sets ``structure_iter: null``); a value the user set is never
        replaced (:func:`causefs.engine.resolve_settings`).
    """

    name: str
    init: tuple
    loop: tuple
    terms: tuple | None = None
    stopping: tuple | None = None
    setting_defaults: Mapping = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, spec: Mapping) -> "Schedule":
        if "params" in spec:
            raise ScheduleError("schedule.params: schedules name their settings' defaults "
                                "under 'setting_defaults' (a value the user sets wins), and "
                                "their objective under 'terms' (ablation I lists the terms "
                                "without 'balance' instead of setting beta: 0)")
        unknown = set(spec) - set(SCHEDULE_KEYS)
        if unknown:
            raise ScheduleError(f"schedule has unknown keys {sorted(unknown)}; "
                                f"allowed: {', '.join(SCHEDULE_KEYS)}")
        if "loop" not in spec:
            raise ScheduleError("a schedule needs a 'loop' list of blocks")
        optional = {key: None if spec.get(key) is None else tuple(spec[key])
                    for key in ("terms", "stopping")}
        schedule = cls(
            name=str(spec.get("name", "custom")),
            init=tuple(spec.get("init") or ()),
            loop=tuple(spec["loop"]),
            setting_defaults=dict(spec.get("setting_defaults") or {}),
            **optional,
        )
        schedule.part_names()  # every entry names a part
        return schedule

    def block_names(self) -> list[str]:
        """The names of the blocks of the initialization, then of the loop."""
        return [entry_name(entry) for entry in (*self.init, *self.loop)]

    def part_names(self) -> dict:
        """The names of its parts by kind: ``{"block": [...], "term": [...],
        "stopping_rule": [...]}`` (terms and rules: the ones it names itself)."""
        return {"block": self.block_names(),
                "term": [entry_name(entry) for entry in self.terms or ()],
                "stopping_rule": [entry_name(entry) for entry in self.stopping or ()]}


def validate_blocks(init: Sequence, loop: Sequence, needs: Sequence = (),
                    given: frozenset = frozenset()) -> None:
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
