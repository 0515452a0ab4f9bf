"""Run-time contracts: explicit resources, the generic scheduler and its checks."""

import re
import warnings

import numpy as np
import pytest

from causefs import CauseFS
from causefs.blocks import Block
from causefs.core.contracts import BlockContractError, DescentWarning, NonFiniteError
from causefs.core.schedule import ScheduleError
from causefs.engine import balance_of, build_part, resolve_schedule
from causefs.kernels import LinearKernel
from causefs.model.objective import ObjectiveValue
from causefs.model.settings import DEFAULTS
from causefs.model.treatments import treatment_coding
from causefs.plugins import parts
from causefs.testing import cause_fs_objective
from causefs.numerics.scaling import scale_features
from causefs.core.loop import run_schedule
from causefs.core.state import State
from causefs.model.problem import Problem

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)

INIT = resolve_schedule("full").init


class OwnSigma(Block):
    """A plugin block with an option that happens to be called sigma."""

    name = "own_sigma"
    kind = "structural"
    reads = ("W",)

    def __init__(self, sigma=0.5):
        self.sigma = sigma

    def step(self, state):
        return state


class Declares(OwnSigma):
    requires = ("sigma",)


class TwoBlocks:
    """A registry that knows OwnSigma and Declares only."""

    def get(self, kind, name):
        return Declares if name == "declares" else OwnSigma


def test_options_reach_only_blocks_that_declare_them():
    settings = DEFAULTS.replace(sigma=0.2, max_granularity=3)

    def build(entry):
        return build_part("block", entry, settings, {}, TwoBlocks())

    assert build("own_sigma").sigma == 0.5
    assert build({"name": "own_sigma", "sigma": 0.9}).sigma == 0.9  # its own option
    assert build("declares").sigma == 0.2
    # a schedule entry may not replace a setting: the settings are decided once
    with pytest.raises(ScheduleError, match="schedule.declares.sigma: sigma is a setting"):
        build({"name": "declares", "sigma": 0.9})


def test_a_requirement_must_be_a_constructor_argument_the_engine_provides(monkeypatch):
    with pytest.raises(TypeError, match=r"requires names \['qp'\], which its constructor "
                                        "does not take$"):
        class NoArgument(OwnSigma):
            requires = ("qp",)

    with pytest.raises(TypeError, match=r"WantsGPU.requires names \['gpu'\], which the "
                                        "engine does not provide"):
        class WantsGPU(Block):
            name = "wants_gpu"
            kind = "structural"
            requires = ("gpu",)

            def __init__(self, gpu=None):
                self.gpu = gpu

            def step(self, state):
                return state


def test_builtin_blocks_get_the_estimator_settings(blobs):
    est = CauseFS(n_clusters=3, sigma=0.9, max_granularity=2, max_iter=1, schedule="full",
                  random_state=0).fit(blobs[0])
    assert est.groups_.max() + 1 <= 2
    low = CauseFS(n_clusters=3, sigma=0.0, max_iter=1, random_state=0,
                  schedule="full").fit(blobs[0])
    assert est.confounders_.nnz < low.confounders_.nnz  # sigma reached the confounders


def problem_of(X, beta=1e-3):
    X = scale_features(X)
    return Problem(X=X, coding=treatment_coding(X), n_clusters=3,
                   objective=cause_fs_objective(beta=beta, lam=0.1), n_neighbors=5,
                   sample_weights="mean_one", balance=balance_of(LinearKernel()),
                   fields=parts().fields)


def initialized(blobs, beta=0.0):
    state = State(problem_of(blobs[0], beta))
    for entry in INIT:
        state = build_part("block", entry, DEFAULTS, {}).step(state)
    return state


def broken_block(step, kind="descent", writes=("W",)):
    """A block that breaks its contract; a descent one claims to lower any objective."""
    return type("Broken", (Block,), {"name": "broken", "kind": kind, "reads": ("W",),
                                     "writes": writes, "derived_for": "*", "step": step})()


def run(state, block, check):
    return run_schedule(state, [], [block], objective=state.problem.objective, max_iter=1,
                        check=check)


def test_a_block_that_returns_no_state_is_named_always(blobs):
    state = initialized(blobs)
    with pytest.raises(BlockContractError, match="block 'broken' .iteration 1. returned "
                                                 "NoneType, not a State"):
        run(state, broken_block(lambda self, s: None), "cheap")


@pytest.mark.parametrize("step, message", [
    (lambda self, s: s.replace(F=-s.F), r"changed 'F', which it does not declare in writes"),
    (lambda self, s: (s.W.__imul__(0.5), s)[1], r"mutated its input's 'W' in place"),
    (lambda self, s: s.replace(W=s.W * 1e3), r"descent block 'broken' .iteration 1. raised "
                                             r"the objective"),
])
def test_strict_checks_name_the_block_that_breaks_its_contract(blobs, step, message):
    state = initialized(blobs)
    block = broken_block(step)
    with warnings.catch_warnings():  # the cheap checks let these through (a rise: warned)
        warnings.simplefilter("ignore", DescentWarning)
        run(initialized(blobs), block, "cheap")
    with pytest.raises(BlockContractError, match=message):
        run(state, block, "strict")


def test_strict_leaves_correct_schedules_alone(blobs):
    est = CauseFS(n_clusters=3, max_iter=3, check="strict", random_state=0).fit(blobs[0])
    plain = CauseFS(n_clusters=3, max_iter=3, random_state=0).fit(blobs[0])
    np.testing.assert_array_equal(est.W_, plain.W_)


class SquaredNorm:
    """A loss that is not CAUSE-FS's: the scheduler must not care."""

    needs = ("W",)

    def __call__(self, state, cache=None):
        value = float(np.sum(state.W ** 2))
        return ObjectiveValue(total=value, terms={"norm": value})


class Halve(Block):
    name = "halve"
    kind = "descent"
    reads = ("W",)
    writes = ("W",)

    def step(self, state):
        return state.replace(W=state.W / 2)


def test_the_scheduler_minimizes_whatever_objective_it_is_given(blobs):
    state = initialized(blobs).replace(F=None, mu=None)  # what J needs, SquaredNorm does not
    result = run_schedule(state, [], [Halve()], objective=SquaredNorm(), max_iter=5,
                          check="strict")
    history = np.asarray(result.history)
    np.testing.assert_allclose(history[1:] / history[:-1], 0.25)
    assert [r["terms"] for r in result.trace][0].keys() == {"norm"}


def test_qp_iterations_reach_the_trace_and_convergence_the_estimator(blobs):
    est = CauseFS(n_clusters=3, max_iter=2, tol=0.0, random_state=0,
                  schedule="full").fit(blobs[0])
    records = [r for r in est.trace_ if r["block"] == "sample_weights"]
    assert len(records) == 2
    assert all(r["info"]["qp_iterations"] >= 1 and isinstance(r["info"]["qp_converged"], bool)
               for r in records)
    assert all(r["info"] == {} for r in est.trace_ if r["block"] != "sample_weights")
    assert est.converged_ is False and est.n_iter_ == 2
    loose = CauseFS(n_clusters=3, max_iter=50, tol=1e-2, random_state=0).fit(blobs[0])
    assert loose.converged_ is True and loose.n_iter_ < 50


# ---- contracts that hold at the default level (cheap checks) --------------------------

FULL_LOOP = list(resolve_schedule("full").loop)


def with_block(block, loop=None, init=None):
    """A CauseFS estimator whose schedule runs ``block`` (an instance) in its loop."""
    schedule = {"name": "with_block", "init": list(init or INIT),
                "loop": loop if loop is not None else ["selection_matrix", block, "embedding"]}
    return CauseFS(n_clusters=3, max_iter=4, tol=0.0, random_state=0, schedule=schedule)


@pytest.mark.parametrize("check", ["cheap", "strict"])
def test_declared_writes_left_unset_are_named_at_every_level(blobs, check):
    """A block that declares outputs and writes none (here: an init graph block that
    returns its input) is named before a later block dies on the missing graph."""
    lazy = type("Lazy", (Block,), {"name": "lazy", "kind": "init", "reads": ("X",),
                                   "writes": ("G", "xi"), "step": lambda self, s: s})()
    init = [lazy if b == "initial_fused_graph" else b for b in INIT]
    with pytest.raises(BlockContractError, match=r"block 'lazy' .iteration 0. declares writes "
                                                 r"\('G', 'xi'\) but left \['G', 'xi'\] unset"):
        with_block(None, loop=FULL_LOOP, init=init).set_params(check=check).fit(blobs[0])


@pytest.mark.parametrize("field", ["W", "F", "S"])
def test_a_write_of_the_wrong_shape_is_named_with_its_block(blobs, field):
    """A block that writes a variable in another shape than its field declares (here
    one sample or one column short) is named, not the objective or a later block that
    trips over it."""
    n, d, h = blobs[0].shape[0], blobs[0].shape[1], 3
    expected = {"W": (d, h), "F": (n, h), "S": (n, n)}[field]

    def step(self, state):
        value = getattr(state, field)
        cut = tuple(g[:-1, :-1] for g in value) if field == "S" else value[:, :-1]
        return state.replace(**{field: cut})

    kind = "structural" if field == "S" else "descent"
    bent = type("Bent", (Block,), {"name": "bent", "kind": kind, "reads": (field,),
                                   "writes": (field,), "derived_for": "*", "step": step})()
    with pytest.raises(BlockContractError, match=rf"block 'bent' .iteration 1. wrote "
                                                 rf"'{field}' of shape .*must be "
                                                 rf"{re.escape(str(expected))}"):
        with_block(bent).fit(blobs[0])


def poisoned(field, iteration=2):
    """A descent block that writes a NaN into ``field`` at ``iteration`` (mid-fit)."""
    def step(self, state):
        self.calls += 1
        if self.calls < iteration:
            return state.replace(**{field: getattr(state, field)})
        value = getattr(state, field)
        if hasattr(value, "tocsc"):
            value = value.tocsc(copy=True)
            value.data[0] = np.nan
        else:
            value = np.array(value, dtype=float)
            value.flat[3] = np.nan
        return state.replace(**{field: value})

    return type("Poison", (Block,), {"name": f"nan_{field}", "kind": "descent",
                                     "reads": (field,), "writes": (field,), "calls": 0,
                                     "derived_for": "*", "step": step})()


@pytest.mark.parametrize("field", ["F", "mu", "G", "W"])
@pytest.mark.parametrize("check", ["cheap", "strict"])
def test_a_nan_written_mid_fit_is_named_with_its_block(blobs, field, check):
    block = poisoned(field)
    loop = ["selection_matrix", block, "granular_graphs", "fused_graph", "embedding"]
    est = with_block(block, loop=loop).set_params(check=check)
    with pytest.raises(NonFiniteError, match=rf"block 'nan_{field}' .iteration 2. wrote a NaN "
                                             rf"or an infinity into '{field}'"):
        est.fit(blobs[0])


def test_a_rise_of_the_objective_is_a_warning_naming_the_block_by_default(blobs):
    """At the default level a descent block that raises J (here by a factor of 300 on W)
    is reported once, naming the block; strict refuses it."""
    up = broken_block(lambda self, s: s.replace(W=s.W * 300.0))
    with pytest.warns(DescentWarning, match=r"descent block 'broken' .iteration 1. raised the "
                                            "objective") as caught:
        with_block(up).fit(blobs[0])
    assert len([w for w in caught if w.category is DescentWarning]) == 1
    with pytest.raises(BlockContractError, match="descent block 'broken'"):
        with_block(up).set_params(check="strict").fit(blobs[0])


@pytest.mark.parametrize("schedule", ["full", "ablation_I", "ablation_II", "dwr", "srdo"])
def test_the_builtin_schedules_raise_no_contract_warning(blobs, schedule):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DescentWarning)
        CauseFS(n_clusters=3, max_iter=9, tol=0.0, random_state=0,
                schedule=schedule).fit(blobs[0])


def test_an_error_inside_a_block_names_the_block(blobs):
    boom = broken_block(lambda self, s: s.replace(W=s.W.reshape(-1, 7)))  # 36 entries
    with pytest.raises(ValueError) as error:
        with_block(boom).fit(blobs[0])
    assert "raised by block 'broken' (iteration 1)" in error.value.__notes__


def test_a_loop_without_a_descent_block_is_refused_before_the_fit(blobs, monkeypatch):
    monkeypatch.setattr("causefs.engine.run_cause_fs", lambda *a, **k: pytest.fail("fitted"))
    with pytest.raises(ValueError, match=r"schedule: the loop has no descent block \(its "
                                         r"blocks are confounders \(structural\), granularity"):
        with_block(None, loop=["confounders", "granularity"]).fit(blobs[0])


def test_check_block_names_a_block_that_writes_nothing():
    from causefs.testing import check_block

    lazy = broken_block(lambda self, s: s.replace(W=None), writes=("W", "F"))
    with pytest.raises(AssertionError, match=r"block 'broken' declares writes \('W', 'F'\) "
                                             r"but left \['W'\] unset"):
        check_block(lazy, max_examples=3)
