"""Hydra configs compose and instantiate; the causefs command runs in a subprocess."""

import contextlib
import itertools
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from hydra import compose, initialize_config_module

from causefs.app.config_checks import ConfigError, check_config, make_method
from causefs.app.configs import check_schedule_config, config_nodes, register_configs
from causefs.model.settings import DEFAULTS, SettingsWarning, setting_names
from causefs.selectors.cause_fs import SUPPLIED
from causefs.core.schedule import entry_name
from causefs.plugins import available, get_block
from causefs.selectors import available_selectors

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)

register_configs()
GROUPS = {"schedule": available("schedule"), "kernel": available("kernel"),
          "qp": available("qp")}
DATASETS = ["digits", "jaffe", "umist", "coil20", "usps", "file"]


def composed(*overrides):
    with initialize_config_module(config_module="causefs.conf", version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


CONF = Path(__import__("causefs.conf", fromlist=["_"]).__file__).parent


@pytest.mark.parametrize("group, names", [*GROUPS.items(), ("method", available_selectors())])
def test_every_registered_piece_has_a_config_node(group, names):
    for name in names:
        assert composed(f"{group}={name}")[group]["name"] == name


@pytest.mark.parametrize("group", ["schedule", "method", "kernel", "qp"])
def test_packaged_yaml_agrees_with_the_generated_nodes(group):
    """Packaged YAML (comments, the built-in schedules' source) must not drift from the
    defaults in the code; a YAML file without a registered piece is an orphan."""
    nodes = config_nodes()[group]
    for path in (CONF / group).glob("*.yaml"):
        assert path.stem in nodes, f"{group}/{path.name} has no registered piece"
        assert yaml.safe_load(path.read_text()) == nodes[path.stem], f"{group}/{path.name}"


def test_generated_nodes_take_their_defaults_from_the_constructors():
    nodes = config_nodes()
    assert nodes["kernel"]["rbf"] == {"name": "rbf", "approximation": "auto",
                                      "n_components": 50, "exact_budget": 2e10,
                                      "n_pairs": 2000}
    assert nodes["block"]["embedding"] == {"name": "embedding", "max_iter": None, "tol": 1e-10,
                                           "solver": "auto"}
    assert "sigma" not in nodes["block"]["confounders"]  # handed in by the engine
    cfg = composed("kernel=rbf", "kernel.n_components=7")
    assert cfg.kernel.n_components == 7 and cfg.kernel.n_pairs == 2000


def test_renaming_a_registered_schedule_is_refused():
    """``schedule.name=ablation_I`` used to run the full schedule's blocks as 'ablation_I'."""
    cfg = composed("schedule.name=ablation_I")
    with pytest.raises(ConfigError, match="choose a registered schedule with schedule=abl"):
        check_config(cfg)
    check_schedule_config(dict(composed("schedule=ablation_I").schedule))
    renamed = composed("schedule=full", "schedule.name=my_schedule").schedule
    assert make_method(composed("schedule=full", "schedule.name=my_schedule")
                       ).options()["schedule"] == \
        {**dict(renamed), "init": list(renamed.init), "loop": list(renamed.loop),
         "terms": list(renamed.terms), "stopping": list(renamed.stopping)}


@pytest.mark.parametrize("schedule, kernel, qp", list(itertools.product(*GROUPS.values())))
def test_every_config_composes_and_instantiates(blobs, schedule, kernel, qp):
    cfg = composed(f"schedule={schedule}", f"kernel={kernel}", f"qp={qp}",
                   "method.max_iter=1", "n_features_to_select=4")
    method = make_method(cfg)
    assert method.options()["schedule"]["name"] == schedule
    reads = {name for entry in (*cfg.schedule.init, *cfg.schedule.loop)
             for name in get_block(entry_name(entry)).reads}
    given = {"nuisance": np.arange(len(blobs[0])) % 2} if "Z" in reads else {}
    # a schedule none of whose blocks declares the QP solver (no sample-weight step) solves
    # no QP: a backend other than the default is then reported as unused, nothing else is
    solves_qp = any("qp" in get_block(entry_name(entry)).requires
                    for entry in (*cfg.schedule.init, *cfg.schedule.loop))
    unused = not solves_qp and qp != DEFAULTS.qp
    with warnings.catch_warnings():
        warnings.simplefilter("error", SettingsWarning)
        with (pytest.warns(SettingsWarning, match=rf"^qp=.*'name': '{qp}'.* is not used")
              if unused else contextlib.nullcontext()):
            scores = method.score(blobs[0], n_clusters=3, n_features_to_select=4,
                                  random_state=0, **given)
    assert np.all(np.isfinite(scores))


@pytest.mark.parametrize("dataset", DATASETS)
def test_dataset_configs_compose(dataset):
    cfg = composed(f"dataset={dataset}")
    assert cfg.dataset.name == dataset


EXPERIMENTS = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_experiment_configs_compose_with_their_launcher(experiment):
    from hydra.utils import get_class

    with initialize_config_module(config_module="causefs.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"+experiment={experiment}"],
                      return_hydra_config=True)
    # the launcher the experiment asks for must be importable from the installed deps
    launcher = get_class(cfg.hydra.launcher._target_)
    assert launcher.__name__.endswith("Launcher")
    assert cfg.hydra.sweeper.params, "an experiment is a sweep: it must set sweeper params"


def test_the_causefs_node_is_the_settings_table():
    """method=causefs is generated from the settings (one place for a default); its part
    options take the schedule/kernel/qp groups, and config.yaml holds only what every
    method shares. The schedule group's default is the estimator's, ``auto`` (resolved
    when the fit knows whether it has nuisance variables)."""
    cfg = composed()
    for name in setting_names():
        if name == "schedule":
            assert dict(cfg.method[name]) == {"name": DEFAULTS.schedule}
        elif name in ("kernel", "qp"):
            assert cfg.method[name]["name"] == getattr(DEFAULTS, name), name
        elif name in SUPPLIED:
            assert name not in cfg.method, name
        else:
            assert cfg.method[name] == getattr(DEFAULTS, name), name
    text = yaml.safe_load((CONF / "config.yaml").read_text())
    shared = set(text) & set(setting_names())
    assert shared == set(SUPPLIED), "config.yaml repeats a method option"
    assert composed("schedule=ablation_I").method.schedule.name == "ablation_I"


def run_cli(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "causefs.app.cli", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, cwd=cwd, timeout=600)


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "causefs"
    assert script.exists(), f"console script missing next to {sys.executable}"


def test_cli_runs_on_the_embedded_default(tmp_path):
    out = run_cli("method.max_iter=2", "evaluation.n_runs=2", f"hydra.run.dir={tmp_path}")
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["dataset"]["name"] == "digits"
    assert len(result["selected_features"]) == 20
    details = result["details"]
    assert len(details["objective_history"]) == 3
    # two iterations end no loop by a rule: the result says so
    assert (details["converged"], details["stop_reason"]) == (False, "max_iter reached")
    assert "2 iterations (max_iter reached" in out.stdout
    assert set(result["metrics"]) == {"selected", "all_features"}
    assert "selected features (best first)" in out.stdout
    assert "k-means on top 20 features (2 runs): ACC" in out.stdout
    assert "k-means on all features (2 runs): ACC" in out.stdout


def test_cli_reads_any_file_and_overrides(tmp_path, blobs):
    X, y = blobs
    np.savez(tmp_path / "mine.npz", X=X, y=y)
    out = run_cli("dataset=file", f"dataset.path={tmp_path / 'mine.npz'}", "method.max_iter=1",
                  "n_features_to_select=4", "kernel=rbf", "schedule=ablation_II",
                  "qp=cvxpy", "method.alpha=10", "evaluation.n_runs=2",
                  f"hydra.run.dir={tmp_path / 'run'}")
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["job"]["params"]["alpha"] == 10
    assert result["job"]["params"]["kernel"]["name"] == "rbf"
    assert result["dataset"]["n_classes"] == 3 and len(result["selected_features"]) == 4


def test_cli_multirun_sweep(tmp_path):
    out = run_cli("-m", "method.alpha=0.5,2", "method.max_iter=1", "evaluation.enabled=false",
                  f"hydra.sweep.dir={tmp_path}")
    assert out.returncode == 0, out.stderr
    results = sorted(tmp_path.glob("*/result.json"))
    assert len(results) == 2
    alphas = sorted(json.loads(p.read_text())["job"]["params"]["alpha"] for p in results)
    assert alphas == [0.5, 2.0]


def test_cli_reports_bad_values(tmp_path):
    out = run_cli("kernel.name=cosine", "method.max_iter=1", f"hydra.run.dir={tmp_path}")
    assert out.returncode != 0
    kernels = ", ".join(map(repr, available("kernel")))
    assert f"kernel='cosine': must be one of {kernels}" in out.stderr


@pytest.mark.parametrize("name", ["jaffe", "umist", "coil20", "usps"])
def test_cli_loads_benchmarks_by_name(tmp_path, data_dir, name):
    """A dry run loads the data and plans the job; the fit itself is jaffe's (the
    smallest: fitting the others here only cost the suite's time)."""
    shape = np.load(data_dir / f"{name.upper()}.npz")["X"].shape
    dry = run_cli(f"dataset={name}", "dry_run=true", f"hydra.run.dir={tmp_path}",
                  env={"CAUSEFS_DATA": str(data_dir)})
    assert dry.returncode == 0, dry.stderr
    assert f"dry run: causefs on {name} ({shape[0]} x {shape[1]}," in dry.stdout
    if name != "jaffe":
        return
    out = run_cli(f"dataset={name}", "method.max_iter=1", "evaluation.enabled=false",
                  f"hydra.run.dir={tmp_path}", env={"CAUSEFS_DATA": str(data_dir)})
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "result.json").read_text())["dataset"]["name"] == name


def test_renaming_the_default_schedule_says_it_has_no_loop_and_what_to_start_from():
    """The default, 'auto', is chosen at fit time: renamed, it is a schedule of no loop
    (the message once read 'method.a schedule needs ...')."""
    with pytest.raises(ConfigError, match=r"^schedule: a schedule needs a 'loop' list of "
                                          r"blocks; .* e\.g\. schedule=full "
                                          r"schedule\.name=mine$"):
        make_method(composed("schedule.name=mine"))
    make_method(composed("schedule=full", "schedule.name=mine"))  # has a loop: fine
