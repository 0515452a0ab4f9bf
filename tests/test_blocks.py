"""Every registered block honours the block contract (parametrized over the registry)."""

import re

import numpy as np
import pytest

from causefs.blocks import Block, SelectionMatrixBlock
from causefs.engine import build_part
from causefs.model.objective import objective
from causefs.model.settings import DEFAULTS
from causefs.plugins import available, get_block
from causefs.qp.projected_gradient import ProjectedGradientBackend
from causefs.testing import check_block, check_step, states
from hypothesis import given, settings

RESOURCES = {"qp": ProjectedGradientBackend(rtol=1e-12), "seed": 0, "n_selected": None}


def make(name, **options):
    return build_part("block", {"name": name, **options}, DEFAULTS, RESOURCES)


@pytest.mark.parametrize("name", available("block"))
def test_block_contract(name):
    """Descent blocks never raise J; every block is pure, valid and deterministic."""
    check_block(make(name), max_examples=25)


@pytest.mark.parametrize("system", ["primal", "dual", "cg"])
def test_every_w_system_descends(system):
    check_block(make("selection_matrix", system=system), max_examples=15)


@pytest.mark.parametrize("solver", ["gpi", "subspace"])
def test_every_embedding_solver_descends(solver):
    """The registry's default takes GPI on the small states of the property test
    ("auto"): the subspace solver is checked here by name."""
    check_block(make("embedding", solver=solver), max_examples=25)


@pytest.mark.parametrize("name", ["granular_graphs", "fused_graph"])
def test_monotone_adaptive_update_descends_without_substitution(name):
    """With adaptive_update='monotone' the graph blocks never raise J as it stands."""
    block = make(name, adaptive_update="monotone")

    @settings(max_examples=25)
    @given(states())
    def run(state):
        new = block.step(state)
        before, after = objective(state), objective(new)
        scale = sum(abs(v) for v in before.terms.values())
        assert after.total <= before.total + 1e-9 * scale

    run()


def test_declarations_are_consistent():
    for name in available("block"):
        cls = get_block(name)
        assert issubclass(cls, Block)
        assert cls.name == name
        assert cls.writes, f"{name} writes nothing"


class RaisesObjective(SelectionMatrixBlock):
    """A broken W update: the right step, then pushed away from the optimum."""

    name = "broken_selection"

    def step(self, state):
        new = super().step(state)
        return new.replace(W=new.W * 3.0 + 1.0)


class MutatesInput(SelectionMatrixBlock):
    name = "mutating_selection"

    def step(self, state):
        state.mu[0] += 1.0
        return super().step(state)


class WritesUndeclared(SelectionMatrixBlock):
    name = "undeclared_selection"

    def step(self, state):
        return super().step(state).replace(F=-state.F)


@pytest.mark.parametrize("broken, message", [
    (RaisesObjective(), "raised the objective"),
    (MutatesInput(), "mutated its input"),
    (WritesUndeclared(), "does not declare"),
])
def test_check_block_catches_broken_blocks(broken, message):
    with pytest.raises(AssertionError, match=message):
        check_block(broken, max_examples=10)


def test_unknown_block_option_is_named():
    with pytest.raises(ValueError, match="schedule.embedding.bogus: unknown option"):
        make("embedding", bogus=1)


def test_check_step_returns_the_new_state():
    from hypothesis import find

    state = find(states(), lambda s: True, settings=settings())
    new = check_step(make("selection_matrix"), state)
    assert new.W is not state.W and np.all(np.isfinite(new.W))


def test_a_block_class_is_checked_when_it_is_defined_and_an_abstract_one_is_not():
    """``Block.__init_subclass__``: a concrete block's kind is one of KINDS and what it
    re-estimates is among what it writes (all of it may be: a subset, not a proper one);
    an abstract intermediate class, which sets no kind yet, is left alone."""
    from abc import abstractmethod

    class Intermediate(Block):  # abstract: declares no kind, must not be checked
        @abstractmethod
        def extra(self):
            ...

    class Concrete(Intermediate):
        name, kind, writes, reestimates = "concrete", "descent", ("x", "c"), ("c",)

        def extra(self):
            return None

        def step(self, state):
            return state

    assert Concrete().descended() == ("x",)  # what it writes, less what it re-estimates

    class OnlyReestimated(Block):  # reestimates == writes is allowed
        name, kind, writes, reestimates = "only", "descent", ("c",), ("c",)

        def step(self, state):
            return state

    assert OnlyReestimated().descended() == ()
    with pytest.raises(TypeError, match=re.escape(
            "Sideways.kind must be one of ['descent', 'init', 'structural'], got 'sideways'")):
        type("Sideways", (Concrete,), {"kind": "sideways"})
    with pytest.raises(TypeError, match="^Wider.reestimates must be a subset of writes$"):
        type("Wider", (Concrete,), {"reestimates": ("c", "y")})
