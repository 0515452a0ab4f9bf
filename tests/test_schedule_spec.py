"""Schedules as data: the entries a schedule accepts, the mapping form's checks and
defaults, and the order check of :func:`causefs.core.schedule.validate_blocks`, each
message as a user reads it. No fit: blocks here are declarations only."""

import pytest

from causefs.blocks import Block
from causefs.core.schedule import Schedule, ScheduleError, entry_name, validate_blocks


class _Declared(Block):
    """A block known by what it reads and writes (never run)."""

    name, kind = "declared", "descent"

    def step(self, state):
        raise AssertionError("not run")


def _block(name, kind="descent", reads=(), writes=()):
    return type(name, (_Declared,), {"name": name, "kind": kind, "reads": tuple(reads),
                                     "writes": tuple(writes)})()


def test_an_entry_is_a_name_a_mapping_with_a_name_or_a_part():
    assert entry_name("embedding") == "embedding"
    assert entry_name({"name": "embedding", "max_iter": 5}) == "embedding"
    assert entry_name(_block("mine")) == "mine"


@pytest.mark.parametrize("entry, message", [
    ({"max_iter": 5}, "a schedule entry given as a mapping needs a 'name' key, got "
                      "{'max_iter': 5}"),
    (3, "a schedule entry is a part's name, a mapping with a 'name' key or a part "
        "instance; got 3"),
    (type(_block("cls")), "a schedule entry is a part's name"),  # a class, not a part
])
def test_an_entry_of_another_kind_is_refused_with_what_it_was(entry, message):
    with pytest.raises(ScheduleError) as error:
        entry_name(entry)
    assert str(error.value).startswith(message)


def test_a_part_whose_name_is_no_string_is_refused():
    class Nameless:
        name = 3

    with pytest.raises(ScheduleError, match="a part instance; got"):
        entry_name(Nameless())


def test_the_mapping_form_fills_its_defaults():
    schedule = Schedule.from_mapping({"loop": ["embedding", {"name": "granularity"}]})
    assert schedule == Schedule(name="custom", init=(), loop=("embedding",
                                                              {"name": "granularity"}),
                                terms=None, stopping=None, setting_defaults={})
    full = Schedule.from_mapping({"name": 7, "init": ["uniform_weights"], "loop": ["a"],
                                  "terms": ["regression"], "stopping": [],
                                  "setting_defaults": {"structure_iter": None}})
    assert full.name == "7" and full.init == ("uniform_weights",)
    assert full.terms == ("regression",) and full.stopping == ()
    assert full.setting_defaults == {"structure_iter": None}
    assert full.part_names() == {"block": ["uniform_weights", "a"], "term": ["regression"],
                                 "stopping_rule": []}


@pytest.mark.parametrize("spec, message", [
    ({"loop": ["a"], "params": {"beta": 0}},
     "schedule.params: schedules name their settings' defaults under 'setting_defaults' "
     "(a value the user sets wins), and their objective under 'terms' (ablation I lists "
     "the terms without 'balance' instead of setting beta: 0)"),
    ({"loop": ["a"], "blocks": [], "order": 1},
     "schedule has unknown keys ['blocks', 'order']; allowed: name, init, loop, terms, "
     "stopping, setting_defaults"),
    ({"init": ["a"]}, "a schedule needs a 'loop' list of blocks"),
    ({"loop": ["a", {"options": 1}]}, "a schedule entry given as a mapping needs a 'name' "
                                      "key, got {'options': 1}"),
    ({"loop": ["a"], "terms": [{"weight": 1}]}, "a schedule entry given as a mapping"),
    ({"loop": ["a"], "stopping": [1]}, "a schedule entry is a part's name"),
])
def test_the_mapping_form_refuses_what_cannot_run_saying_why(spec, message):
    with pytest.raises(ScheduleError) as error:
        Schedule.from_mapping(spec)
    assert str(error.value).startswith(message)


def test_every_block_reads_what_an_earlier_one_wrote_or_the_state_holds():
    start = _block("start", "init", writes=("W",))
    uses_f = _block("uses_f", reads=("F", "W"), writes=("W",))
    makes_f = _block("makes_f", reads=("W",), writes=("F",))
    validate_blocks([start], [makes_f, uses_f], needs=("W",), given=frozenset({"X"}))
    validate_blocks([], [uses_f], given=frozenset({"F", "W"}))
    with pytest.raises(ScheduleError) as error:
        validate_blocks([start], [uses_f, makes_f], needs=("W", "F", "G"))
    assert str(error.value) == (
        "schedule: after the init blocks ['F', 'G'] are still unset; the objective needs "
        "them; loop block 0 ('uses_f') reads ['F'], which no earlier block writes")


def test_a_loop_needs_blocks_and_one_of_them_a_descent():
    with pytest.raises(ScheduleError) as error:
        validate_blocks([], [])
    assert str(error.value) == "schedule: the loop has no block"
    with pytest.raises(ScheduleError) as error:
        validate_blocks([], [_block("a", "structural"), _block("b", "init")])
    assert str(error.value) == ("schedule: the loop has no descent block (its blocks are "
                                "a (structural), b (init)): nothing lowers the objective")
    with pytest.raises(ScheduleError, match="init block 1 \\('b'\\) reads \\['Q'\\]"):
        validate_blocks([_block("a", "init"), _block("b", "init", reads=("Q",))],
                        [_block("c")])
