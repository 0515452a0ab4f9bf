"""Schedules: validation, the trace, monotonicity, ablations, kernels and backends end to end."""

import numpy as np
import pytest

from causefs import CauseFS, Schedule, ScheduleError, SettingsWarning
from causefs.blocks import Block
from causefs.core.loop import run_schedule
from causefs.core.schedule import validate_blocks
from causefs.core.state import State
from causefs.engine import (
    balance_of,
    build_part,
    build_parts,
    resolve_qp,
    resolve_schedule,
    uses_nuisance,
)
from causefs.kernels import LinearKernel
from causefs.model.problem import Problem
from causefs.model.settings import DEFAULTS, Settings
from causefs.model.treatments import treatment_coding
from causefs.numerics.scaling import scale_features
from causefs.plugins import available, parts
from causefs.testing import cause_fs_objective, check_step
from conftest import run_engine

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)

FULL = resolve_schedule("full")
STRUCTURAL = {"granularity", "confounders"}


def fit(X, schedule, max_iter=8, **options):
    params = dict(n_clusters=3, alpha=1.0, beta=1e-3, lam=0.1, eps=1e-8, n_neighbors=5,
                  sample_weights="mean_one", kernel="linear", qp="gradient_projection_cg")
    params.update(options)
    return run_engine(scale_features(X), schedule=schedule, max_iter=max_iter, tol=0.0,
                      check="strict", **params)


def build_blocks(entries, settings, resources):
    return [build_part("block", entry, settings, resources) for entry in entries]


def without_structural(update="closed_form"):
    loop = [name for name in FULL.loop if name not in STRUCTURAL]
    loop = [{"name": n, "adaptive_update": update} if n in ("granular_graphs", "fused_graph")
            else n for n in loop]
    return Schedule("descent_only", FULL.init, tuple(loop))


DATA = frozenset({"X", "X_adjusted", "Z"})  # what a state holds before any block


def test_builtin_schedules_validate():
    for name in available("schedule"):
        schedule = resolve_schedule(name)
        blocks = [build_blocks(phase, DEFAULTS, {"qp": resolve_qp(DEFAULTS.qp)})
                  for phase in (schedule.init, schedule.loop)]
        validate_blocks(*blocks, given=DATA)
        build_parts(DEFAULTS.replace(schedule=name), nuisance=uses_nuisance(
            build_parts(DEFAULTS.replace(schedule=name))))  # and their terms


def test_validation_names_every_problem():
    init = build_blocks(["uniform_weights"], DEFAULTS, {})
    loop = build_blocks(["embedding", "granular_graphs"], DEFAULTS, {})
    with pytest.raises(ScheduleError) as error:
        validate_blocks(init, loop, needs=("W", "F", "mu"), given=DATA)
    message = str(error.value)
    assert "loop block 0 ('embedding') reads ['F', 'G', 'W']" in message
    assert "loop block 1 ('granular_graphs') reads ['G', 'W', 'groups', 'nu']" in message
    assert "after the init blocks ['F', 'W'] are still unset" in message


def test_trace_records_every_block(blobs):
    result = fit(blobs[0], "full", max_iter=3, trace=True)
    loop_records = [r for r in result.trace if r["iteration"] > 0]
    assert [r["block"] for r in loop_records] == list(FULL.loop) * 3
    assert all(r["seconds"] >= 0 and np.isfinite(r["objective"]) for r in loop_records)
    assert all(set(r["terms"]) == {"regression", "fused_smoothness", "sparsity",
                                   "granular_graphs", "fusion", "balance"} for r in loop_records)
    assert len(result.history) == result.n_iter + 1 == 4
    assert result.history[-1] == loop_records[-1]["objective"]


def test_without_trace_the_objective_is_evaluated_once_per_iteration(blobs):
    traced = fit(blobs[0], "full", max_iter=3, trace=True)
    result = fit(blobs[0], "full", max_iter=3)
    loop_records = [r for r in result.trace if r["iteration"] > 0]
    evaluated = [r["block"] for r in loop_records if r["objective"] is not None]
    assert evaluated == [FULL.loop[-1]] * 3
    # the same run: only when the objective is looked at differs
    assert result.history == traced.history


def test_callback_sees_every_record(blobs):
    seen = []
    CauseFS(n_clusters=3, max_iter=2, random_state=0).fit(blobs[0])  # warm import paths
    parts = build_parts(Settings(n_clusters=3, beta=1e-3, lam=0.1, max_iter=2,
                                 schedule="full"))
    from causefs.engine import run_cause_fs

    result = run_cause_fs(scale_features(blobs[0]), parts, callback=seen.append)
    assert seen == result.trace


def test_monotone_variant_is_monotone_block_by_block(blobs):
    """With the structural blocks off and adaptive_update=monotone, J never rises."""
    result = fit(blobs[0], without_structural("monotone"), max_iter=10, trace=True)
    values = [r["objective"] for r in result.trace if r["iteration"] > 0]
    for before, after in zip(values, values[1:]):
        assert after <= before + 1e-9 * abs(before)
    assert np.all(np.diff(result.history[1:]) <= 1e-9 * np.abs(result.history[1:-1]))


def test_paper_schedule_descends_block_by_block_with_substitution(blobs):
    """The paper's schedule (structural blocks off): every step along a real run is a
    descent step (re-estimated gamma, xi substituted into both sides)."""
    X = scale_features(blobs[0])
    schedule = without_structural()
    problem = Problem(X=X, coding=treatment_coding(X), n_clusters=3,
                      objective=cause_fs_objective(beta=1e-3, lam=0.1), n_neighbors=5,
                      sample_weights="mean_one", balance=balance_of(LinearKernel()),
                      fields=parts().fields)
    resources = {"qp": resolve_qp("gradient_projection_cg")}
    state = State(problem)
    for block in build_blocks(schedule.init, DEFAULTS, resources):
        state = block.step(state)
    loop = build_blocks(schedule.loop, DEFAULTS, resources)
    for _ in range(6):
        for block in loop:
            state = check_step(block, state)


def test_paper_schedule_is_not_monotone_in_j_as_recorded(blobs):
    """Documents a finding: re-estimating gamma/xi (the paper) can raise J as it stands,
    so the recorded objective is not monotone even without the structural blocks."""
    from sklearn.datasets import load_digits

    X = load_digits().data[:400]
    result = fit(X, without_structural(), max_iter=10, n_clusters=10, trace=True)
    values = [r["objective"] for r in result.trace if r["iteration"] > 0]
    rises = [(a, b) for a, b in zip(values, values[1:]) if b > a + 1e-9 * abs(a)]
    assert rises, "expected the closed-form gamma re-estimation to raise J at least once"


@pytest.mark.parametrize("schedule", available("schedule"))
@pytest.mark.parametrize("kernel", available("kernel"))
def test_schedules_and_kernels_run_end_to_end(blobs, schedule, kernel):
    settings = Settings(n_clusters=3, schedule=schedule, kernel=kernel)
    # a schedule that adjusts for nuisance variables gets some (labels tied to no cluster)
    Z = np.arange(len(blobs[0])) % 2 if uses_nuisance(build_parts(settings)) else None
    est = CauseFS(n_clusters=3, n_features_to_select=4, schedule=schedule, kernel=kernel,
                  max_iter=3, random_state=0).fit(blobs[0], nuisance=Z)
    assert np.all(np.isfinite(est.scores_)) and est.support_.sum() == 4
    blocks = {r["block"] for r in est.trace_}
    if schedule == "ablation_I":
        assert "sample_weights" not in blocks and "confounders" not in blocks
        assert np.allclose(est.sample_weight_, 1.0)
        assert all("balance" not in r["terms"] for r in est.trace_ if r["terms"])
        assert [term["name"] for term in est.terms_] == [
            "regression", "fused_smoothness", "sparsity", "granular_graphs", "fusion"]
    if schedule == "ablation_II":
        assert not blocks & {"granular_graphs", "fused_graph", "granularity"}
        assert np.all(est.groups_ == -1)


@pytest.mark.parametrize("qp", available("qp"))
def test_backends_run_end_to_end(blobs, qp):
    est = CauseFS(n_clusters=3, qp=qp, max_iter=2, random_state=0, beta=1.0,
                  schedule="full").fit(blobs[0])
    assert est.sample_weight_.sum() == pytest.approx(60.0)


def test_a_block_that_produces_nan_is_named(blobs):
    class Poison(Block):
        name = "poison"
        kind = "descent"
        reads = ("W",)
        writes = ("W",)
        derived_for = "*"

        def step(self, state):
            return state.replace(W=np.full_like(state.W, np.nan))

    X = scale_features(blobs[0])
    problem = Problem(X=X, coding=np.zeros_like(X), n_clusters=3, n_neighbors=5,
                      objective=cause_fs_objective(beta=0.0), fields=parts().fields)
    init = build_blocks(FULL.init, DEFAULTS, {})
    with pytest.raises(FloatingPointError, match="block 'poison' .iteration 1. wrote a NaN"):
        run_schedule(State(problem), init, [Poison()], objective=problem.objective,
                     max_iter=1)


def test_a_weight_of_a_term_the_schedule_lacks_is_reported_not_overridden(blobs):
    """ablation_I has no balance term: a beta set by the user is unused, and says so (it
    used to be set to 0 by the schedule, in silence)."""
    with pytest.warns(SettingsWarning, match=r"beta=5.0 is not used: no part of schedule "
                                             r"'ablation_I' reads it"):
        est = CauseFS(n_clusters=3, beta=5.0, schedule="ablation_I", max_iter=1,
                      random_state=0).fit(blobs[0])
    assert est.settings_.beta == 5.0 and "balance" not in [t["name"] for t in est.terms_]


def test_a_schedule_default_never_replaces_a_value_the_user_set(blobs):
    est = CauseFS(n_clusters=3, schedule="paper", max_iter=2, random_state=0).fit(blobs[0])
    assert est.settings_.patience is None and est.settings_.structure_iter is None
    with pytest.warns(SettingsWarning, match=r"patience=5 is used, not schedule 'paper''s "
                                             r"default patience=None"):
        est = CauseFS(n_clusters=3, schedule="paper", patience=5, max_iter=2,
                      random_state=0).fit(blobs[0])
    assert est.settings_.patience == 5 and est.settings_.structure_iter is None


def test_a_value_equal_to_the_library_default_takes_the_schedule_default(blobs):
    """The documented limit of the rule above (docs/guide/selector.md, "Settings and
    schedules"): the library's default passed explicitly cannot be told from one left
    there, so the schedule's replaces it, and no warning is given."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", SettingsWarning)
        est = CauseFS(n_clusters=3, schedule="paper", structure_iter=3, max_iter=2,
                      random_state=0).fit(blobs[0])
    assert est.get_params()["structure_iter"] == 3 and est.settings_.structure_iter is None


def test_cached_objective_equals_a_fresh_evaluation(blobs):
    """The scheduler reuses terms whose inputs are unchanged; the values must not differ."""
    from causefs.model.objective import objective

    result = fit(blobs[0], "full", max_iter=3)
    fresh = objective(result.state)
    assert fresh.terms == result.trace[-1]["terms"]
