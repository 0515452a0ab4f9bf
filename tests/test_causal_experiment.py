"""The causal experiment: its sweep composes, and one job scores the test environment."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hydra import compose, initialize_config_module

from causefs.app.cli import run
from causefs.app.configs import register_configs
from causefs.core.schedule import entry_name
from causefs.plugins import available, get_block
from causefs.plugins.builtin import builtin_schedules
from causefs.selectors import available_selectors
from causefs.selectors.builtin import BUILTIN_SELECTORS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import causal_shift  # noqa: E402

register_configs()


def composed(*overrides):
    with initialize_config_module(config_module="causefs.conf", version_base="1.3"):
        return compose(config_name="config", overrides=["+experiment=causal", *overrides])


def test_sweep_covers_every_method_and_schedule_once():
    """Every built-in method and schedule (installed plugins may add more: the experiment
    is the project's, not theirs) but ``paper`` (the same blocks as ``full`` with the
    paper's loop settings, a way to stop the loop rather than a method) and the schedules
    that adjust for nuisance variables, and the recipes for them, which without Z are their
    base selector (the nuisance experiment's)."""
    jobs = causal_shift.sweep()
    methods = {o.split("=")[1] for job in jobs for o in job if o.startswith("method=")}
    assert methods == {cls.name for cls in BUILTIN_SELECTORS if not cls.adjusts_for_nuisance}
    assert methods <= set(available_selectors())
    schedules = {o.split("=")[1] for job in jobs for o in job
                 if o.startswith("schedule=") and "method=causefs" in job}
    assert schedules == {schedule["name"] for schedule in builtin_schedules()
                         if not any("Z" in get_block(entry_name(entry)).reads
                                    for entry in (*schedule["init"], *schedule["loop"]))
                         } - {"paper"}
    assert schedules <= set(available("schedule"))
    assert len({tuple(job) for job in jobs}) == len(jobs)
    seeds = {o for job in jobs for o in job if o.startswith("dataset.seed=")}
    assert len(seeds) >= 5


@pytest.mark.parametrize("dataset", ["shifted_clusters", "shifted_clusters_weak",
                                     "digits_border"])
def test_every_dataset_of_the_sweep_composes(dataset):
    cfg = composed(f"dataset={dataset}", "dataset.train_bias=0.5", "dataset.seed=3")
    assert cfg.dataset.train_bias == 0.5 and cfg.dataset.seed == 3


def test_one_job_scores_the_test_environment(tmp_path):
    cfg = composed("dataset=shifted_clusters", "method=mcfs", f"store.dir={tmp_path}/store",
                   "evaluation.n_runs=2")
    result = run(cfg, output_dir=tmp_path)
    ood = result["metrics"]["test_environment"]
    assert set(ood) == {8, 20} and 0 <= ood[8]["acc_mean"] <= 1
    recovery = result["causal_recovery"][8]
    assert recovery["precision"] + recovery["spurious_fraction"] <= 1
    table = causal_shift.collect(tmp_path / "store")
    row = table["shifted_clusters, spurious separation 2"][("MCFS", 0.9)]
    assert row["ood_acc"] == [pytest.approx(ood[8]["acc_mean"])]
    assert "MCFS" in causal_shift.markdown(table)
    assert np.isfinite(row["precision"][0])


def test_shifted_dataset_options_are_checked(tmp_path):
    from causefs.app.config_checks import ConfigError

    cfg = composed("dataset=digits_border", "+dataset.n_noise=3", "method=mcfs")
    with pytest.raises(ConfigError, match="dataset.n_noise: unknown option; the options of "
                                          "'digits_border' are"):
        run(cfg, output_dir=tmp_path)
