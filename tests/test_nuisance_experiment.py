"""The known-nuisance experiment: its job list and the oracle."""

import sys
from pathlib import Path

import pytest

from causefs.app.store import ResultStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import nuisance_shift  # noqa: E402


def test_every_method_runs_once_and_only_the_schedules_that_use_z_get_it():
    jobs = [overrides for overrides, _ in nuisance_shift.main_jobs()]
    assert len({tuple(job) for job in jobs}) == len(jobs)
    params = nuisance_shift.sweep_params("nuisance")
    per_cell = len(params["method"]) - 1 + len(params["schedule"])
    assert len(jobs) == per_cell * len(params["dataset"]) * len(params["dataset.seed"])
    for job in jobs:
        schedule = next((o.split("=")[1] for o in job if o.startswith("schedule=")), None)
        with_z = "dataset.nuisance=null" not in job
        assert with_z == (schedule is not None and nuisance_shift.uses_nuisance(schedule))
    assert len(params["dataset.seed"]) >= 5


@pytest.mark.parametrize("overrides, k", [
    (["dataset=shifted_environments", "dataset.n_train=90", "dataset.n_test=60"], 8),
    (["dataset=digits_environments", "dataset.train_size=0.1"], 20),
])
def test_the_oracle_scores_every_test_environment(tmp_path, overrides, k):
    key = nuisance_shift.oracle_job(overrides + ["evaluation.n_runs=2"], tmp_path)
    result = ResultStore(tmp_path).read(key)
    assert set(result["metrics"]["test_environments"]) == {"0", "-0.9"}
    assert len(result["selected_features"]) == k
    assert result["oracle_method"] in ("all causal", "mcfs", "ndfs", "ablation_I")


def test_the_sweep_runs_every_job_once_the_compared_ones_first(monkeypatch, tmp_path):
    tasks = []
    monkeypatch.setattr(nuisance_shift, "run_tasks", lambda t, workers: tasks.extend(t))
    nuisance_shift.run_all(tmp_path, 1)
    jobs = [(function.__name__, tuple(args[0])) for function, args in tasks]
    assert len(set(jobs)) == len(jobs)
    params = nuisance_shift.sweep_params("nuisance")
    # the pose benchmark has no oracle (every pixel is causal)
    cells = sum(map(nuisance_shift.has_oracle, params["dataset"])) * len(params["dataset.seed"])
    assert cells < len(params["dataset"]) * len(params["dataset.seed"])
    held_out = len(nuisance_shift.held_out_cells())
    assert len(jobs) == (len(nuisance_shift.main_jobs()) + cells + held_out
                         + len(nuisance_shift.irrelevant_jobs())
                         + len(nuisance_shift.held_out_jobs()))
    first_rest = next(i for i, (_, job) in enumerate(jobs) if "method=laplacian_score" in job)
    compared = set(jobs[:first_rest])
    assert {("oracle_job", tuple(job)) for job in nuisance_shift.held_out_cells()} <= compared
    grid = [("run_job", tuple(job)) for job, _ in nuisance_shift.main_jobs()]
    assert {job for job in grid if "schedule=nuisance_adjusted" in job[1]} <= compared
    assert sum(name == "oracle_job" for name, _ in compared) == cells + held_out
