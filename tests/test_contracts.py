"""Run-time contracts: explicit resources, the generic scheduler and its checks."""

import numpy as np
import pytest

from causefs import CauseFS
from causefs.blocks import Block
from causefs.core.contracts import BlockContractError
from causefs.engine import balance_of, build_blocks, resolve_schedule
from causefs.kernels import LinearKernel
from causefs.model.settings import DEFAULTS
from causefs.model.objective import CauseFSObjective, ObjectiveValue
from causefs.model.treatment_coding import treatment_coding
from causefs.numerics.scaling import scale_features
from causefs.core.scheduler import run_schedule
from causefs.core.state import State
from causefs.model.problem import Problem

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


def test_options_reach_only_blocks_that_declare_them(monkeypatch):
    monkeypatch.setattr("causefs.engine.get_block", lambda name: Declares if name == "declares"
                        else OwnSigma)

    class Declares(OwnSigma):
        requires = ("sigma",)

    settings = DEFAULTS.replace(sigma=0.2, max_granularity=3)
    assert build_blocks(["own_sigma"], settings, {})[0].sigma == 0.5
    assert build_blocks(["declares"], settings, {})[0].sigma == 0.2
    assert build_blocks([{"name": "declares", "sigma": 0.9}], settings, {})[0].sigma == 0.9


def test_a_requirement_must_be_a_constructor_argument_the_engine_provides(monkeypatch):
    with pytest.raises(TypeError, match=r"requires names \['qp'\], which its constructor"):
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
    est = CauseFS(n_clusters=3, sigma=0.9, max_granularity=2, max_iter=1,
                  random_state=0).fit(blobs[0])
    assert est.groups_.max() + 1 <= 2
    low = CauseFS(n_clusters=3, sigma=0.0, max_iter=1, random_state=0).fit(blobs[0])
    assert est.confounders_.nnz < low.confounders_.nnz  # sigma reached the confounders


def problem_of(X, beta=1e-3):
    X = scale_features(X)
    return Problem(X=X, coding=treatment_coding(X), n_clusters=3, beta=beta, lam=0.1,
                   n_neighbors=5, sample_weights="mean_one", balance=balance_of(LinearKernel()))


def initialized(blobs, beta=0.0):
    state = State(problem_of(blobs[0], beta))
    for block in build_blocks(INIT, DEFAULTS, {}):
        state = block.step(state)
    return state


def broken_block(step, kind="descent", writes=("W",)):
    return type("Broken", (Block,), {"name": "broken", "kind": kind, "reads": ("W",),
                                     "writes": writes, "step": step})()


def run(state, block, check):
    return run_schedule(state, [], [block], objective=CauseFSObjective(), max_iter=1,
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
    run(initialized(blobs), block, "cheap")  # the cheap checks let these through
    with pytest.raises(BlockContractError, match=message):
        run(state, block, "strict")


def test_strict_leaves_correct_schedules_alone(blobs):
    est = CauseFS(n_clusters=3, max_iter=3, check="strict", random_state=0).fit(blobs[0])
    plain = CauseFS(n_clusters=3, max_iter=3, random_state=0).fit(blobs[0])
    np.testing.assert_array_equal(est.W_, plain.W_)


class SquaredNorm:
    """A loss that is not CAUSE-FS's: the scheduler must not care."""

    def needs(self, problem):
        return ("W",)

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
    result = run_schedule(state, [], [Halve()], objective=SquaredNorm(), max_iter=5, tol=0.0,
                          check="strict")
    history = np.asarray(result.history)
    np.testing.assert_allclose(history[1:] / history[:-1], 0.25)
    assert [r["terms"] for r in result.trace][0].keys() == {"norm"}


def test_qp_iterations_reach_the_trace_and_convergence_the_estimator(blobs):
    est = CauseFS(n_clusters=3, max_iter=2, tol=0.0, random_state=0).fit(blobs[0])
    records = [r for r in est.trace_ if r["block"] == "sample_weights"]
    assert len(records) == 2
    assert all(r["info"]["qp_iterations"] >= 1 and isinstance(r["info"]["qp_converged"], bool)
               for r in records)
    assert all(r["info"] == {} for r in est.trace_ if r["block"] != "sample_weights")
    assert est.converged_ is False and est.n_iter_ == 2
    loose = CauseFS(n_clusters=3, max_iter=50, tol=1e-2, random_state=0).fit(blobs[0])
    assert loose.converged_ is True and loose.n_iter_ < 50
