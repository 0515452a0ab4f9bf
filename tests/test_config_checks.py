"""The causefs command checks its whole configuration before any fit and reports a user
error as one line naming the key (causefs.app.config_checks, causefs.app.cli)."""

import os
import subprocess
import sys

import numpy as np
import pytest
from hydra import compose, initialize_config_module

from causefs import CauseFS
from causefs.app import cli
from causefs.app.config_checks import ConfigError, check_config
from causefs.app.configs import register_configs

register_configs()  # the kernel/ and qp/ groups come from the registry, as at CLI start

FAST = ["evaluation.n_runs=1"]
#: the default method's own option (a baseline chosen by an override has none)
SHORT = "method.max_iter=1"


def composed(*overrides):
    with initialize_config_module(config_module="causefs.conf", version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def _forbidden(*args, **kwargs):
    raise AssertionError("reached the data or the fit")


@pytest.fixture
def no_fit(monkeypatch):
    """Fail the test if a run gets as far as fitting."""
    monkeypatch.setattr(CauseFS, "fit", _forbidden)


@pytest.fixture
def no_data(monkeypatch, no_fit):
    """Fail the test if a run gets as far as loading data."""
    monkeypatch.setattr(cli, "load_dataset", _forbidden)


#: override -> text the one-line error must contain (the key and what is allowed)
BEFORE_ANY_DATA = {
    "evaluation.n_runs=0": "evaluation.n_runs=0: must be an integer >= 1",
    "evaluation.n_runs=2.5": "evaluation.n_runs=2.5",
    "evaluation.rhos=[0]": "evaluation.rhos=[0]: must be a non-empty list",
    "evaluation.rhos=[]": "evaluation.rhos=[]",
    "evaluation.rhos=[20,abc]": "evaluation.rhos",
    "evaluation.nmi_average=bogus": "evaluation.nmi_average='bogus': must be one of "
                                    "'arithmetic', 'max'",
    "evaluation.seed=-1": "evaluation.seed=-1",
    "evaluation.enabled=maybe": "evaluation.enabled='maybe': must be true or false",
    "evaluation.all_features=1": "evaluation.all_features=1: must be true or false",
    "n_clusters=2.5": "n_clusters=2.5: must be None or an integer >= 2",
    "n_clusters=1": "n_clusters=1",
    "n_clusters=abc": "n_clusters='abc'",
    "n_features_to_select=0": "n_features_to_select=0",
    "n_features_to_select=0.5": "n_features_to_select=0.5",
    "n_features_to_select=null": "n_features_to_select=None",
    "preprocessing=zscore": "preprocessing='zscore': must be one of 'minmax', 'standard', "
                            "'none'",
    "random_state=-3": "random_state=-3",
    "random_state=null": "random_state=None",
    "method.verbose=2": "method.verbose=2: must be true or false",
    "method.trace=maybe": "method.trace='maybe': must be true or false",
    "method.memory_limit=lots": "method.memory_limit='lots'",
    "method.memory_limit=-5": "method.memory_limit=-5",
    "method.memory_limit=0": "method.memory_limit=0",
    "method.memory_limit=true": "method.memory_limit=True",
    "method.memory_limit=8XB": "method.memory_limit='8XB'",
    "method.n_neighbors=0": "method.n_neighbors=0: must be an integer >= 1",
    "method.alpha=-1": "method.alpha=-1: must be a real number > 0",
    "method.sigma=2": "method.sigma=2: must be a real number >= 0 and <= 1",
    "method.max_treatments=0": "method.max_treatments=0: must be None or 'auto' or",
    "+method.foo=1": "method.foo: not an option of CAUSE-FS here",
    "schedule=full schedule.name=mine +schedule.setting_defaults.alpha=-5":
        "schedule.setting_defaults.alpha=-5: must be a real number > 0",
    "schedule=full schedule.name=mine +schedule.params.alpha=-5":
        "schedule.params: schedules name their settings' defaults under 'setting_defaults'",
    "result_file=''": "result_file=''",
    "result_file=out/": "result_file='out/'",
    "store.enabled=yes": "store.enabled='yes'",
    "store.overwrite=2": "store.overwrite=2",
    "+foo=1": "unknown key(s) foo",
    "dataset=file": "dataset.path is not set",
    "dataset.label_column=-1": "dataset.label_column=-1: applies to .csv files only",
    "+dataset.n_samples=100": "dataset.n_samples: only generated datasets",
    "method=mcfs method.weight=x": "method.weight='x': must be one of 'heat', 'binary'",
    "method=mcfs +method.foo=1": "method.foo: unknown option; the options of 'mcfs' are",
    "method=ndfs method.alpha=-1": "method.alpha=-1: must be a real number > 0",
    "method=spec method.style=1": "method.style=1: must be one of -1, 0 or an integer >= 2",
    "method=mcfs method.weight=binary method.t=1": "method=mcfs: t is the heat-kernel width",
    "kernel.name=nope": "kernel='nope': must be one of",
    "qp.name=nope": "qp='nope': must be one of",
    "+kernel.foo=1": "kernel.foo: unknown option; the options of 'linear' are none",
    "schedule=full schedule.loop=[nope]": "the schedule config is named 'full'",
    "schedule=full schedule.name=mine schedule.loop=[nope]": "schedule: block='nope': must be one of",
    "schedule=full schedule.name=mine schedule.loop=[{name:embedding,bogus:1}]":
        "schedule.embedding.bogus: unknown option; the options of 'embedding' are",
    "+evaluation.foo=1": "unknown key(s) evaluation.foo",
    "+store.foo=1": "unknown key(s) store.foo",
    "evaluation.rhos=[4,4]": "evaluation.rhos=[4, 4]: lists a number twice",
    "kernel=rbf kernel.n_components=0": "kernel.n_components=0: must be an integer >= 1",
    "kernel=rbf kernel.n_pairs=-1": "kernel.n_pairs=-1: must be an integer >= 1",
    "kernel=rbf kernel.exact_budget=-1": "kernel.exact_budget=-1: must be a real number >= 0",
    "qp.rtol=-1": "qp.rtol=-1: must be a real number >= 0",
    "qp.max_iter=abc": "qp.max_iter='abc': must be an integer",
    "qp=projected_gradient qp.stall_iter=0": "qp.stall_iter=0: must be an integer >= 1",
    "qp=cvxpy qp.solver=SCIPY": "qp.solver='SCIPY': must be one of",
    "schedule=full schedule.name=mine schedule.loop=[selection_matrix,{name:embedding,max_iter:-1}]":
        "schedule.embedding.max_iter=-1: must be an integer >= 0",
    "schedule=full schedule.name=mine schedule.loop=[selection_matrix,{name:confounders,irrelevant_tol:2}]":
        "schedule.confounders.irrelevant_tol=2: must be a real number >= 0 and <= 1",
    "schedule=full schedule.name=mine schedule.loop=[selection_matrix,{name:sample_weights,qp:abc}]":
        "schedule.sample_weights.qp: qp is a setting; a schedule supplies a setting's "
        "default in its 'setting_defaults'",
    "schedule=full schedule.name=mine schedule.terms=[regression,nope]":
        "schedule: term='nope': must be one of",
    "data_dir=[a]": "data_dir=['a']: must be None or a directory path",
    "dataset=file dataset.path=": "dataset.path='': must be a file path",
    "result_file=42": "result_file=42: must be a file path",
    "+max_iter=3": "unknown key(s) max_iter: max_iter is an option of the method: "
                   "method.max_iter=",
    "dataset=shifted_clusters dataset.train_bias=abc":
        "dataset.train_bias='abc': must be a real number",
    "dataset=digits_border dataset.seed=1.5": "dataset.seed=1.5: must be an integer",
}


def test_synthetic_options_are_checked_by_name(no_data, tmp_path):
    with pytest.raises(ConfigError, match="dataset.n_points: unknown option; the options of "
                                          "'synthetic' are"):
        cli.run(composed("dataset=synthetic", "+dataset.n_points=3", *FAST), output_dir=tmp_path)


def test_an_unwritable_store_fails_before_any_data(no_data, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    cfg = composed("store.enabled=true", f"store.dir={blocker / 'store'}", *FAST)
    with pytest.raises(ConfigError, match=r"store.dir: .* is not writable"):
        cli.run(cfg, output_dir=tmp_path)


def test_a_read_only_store_gives_its_results_and_refuses_new_jobs_before_the_fit(
        monkeypatch, tmp_path):
    """A store that exists but cannot take a file (read-only, another user's, immutable:
    simulated, as root writes anywhere) returns a stored job's result; a job it does not
    hold is refused naming store.dir, before the fit. It refused the stored job too."""
    from sklearn.exceptions import ConvergenceWarning

    from causefs.app.store import ResultStore, StoreError

    store = tmp_path / "store"
    job = ("store.enabled=true", f"store.dir={store}", "dataset=synthetic",
           "dataset.n_samples=60", "dataset.n_features=12", "dataset.n_causal=3",
           "dataset.n_spurious=3", "n_features_to_select=2",
           "evaluation.n_runs=1", SHORT)
    with pytest.warns(ConvergenceWarning):  # one iteration: the stopping rules not met
        first = cli.run(composed(*job), output_dir=tmp_path / "first")

    def read_only(self):
        raise StoreError(f"results store {self.root} is not writable: Read-only file system")

    monkeypatch.setattr(ResultStore, "check_writable", read_only)
    monkeypatch.setattr(CauseFS, "fit", _forbidden)
    again = cli.run(composed(*job), output_dir=tmp_path / "again")
    assert again["key"] == first["key"]
    assert again["features_best_first"] == first["features_best_first"]
    with pytest.raises(ConfigError, match=r"^store.dir: results store .* is not writable"):
        cli.run(composed(*job, "random_state=7"), output_dir=tmp_path / "new")
    with pytest.raises(ConfigError, match=r"^store.dir: results store .* is not writable"):
        cli.run(composed(*job, "random_state=7", "dry_run=true"), output_dir=tmp_path / "dry")


#: keys bounded by the data (digits: 1797 x 64, 10 classes): checked before the fit
AGAINST_DATA = {
    "n_features_to_select=65": "n_features_to_select=65: exceeds the 64 features",
    "evaluation.rhos=[20,100]": "100 exceeds the 64 features",
    "n_clusters=5000": "n_clusters=5000: exceeds the 1797 samples",
    "method.n_neighbors=1796": "method.n_neighbors=1796: needs at least n_neighbors + 2",
}


@pytest.mark.parametrize("override, message, guard",
                         [(*case, "no_data") for case in BEFORE_ANY_DATA.items()]
                         + [(*case, "no_fit") for case in AGAINST_DATA.items()])
def test_bad_keys_fail_early_in_one_line(request, tmp_path, override, message, guard):
    request.getfixturevalue(guard)  # before loading the data, or at least before the fit
    with pytest.raises(ConfigError) as error:
        short = [] if "method=" in override else [SHORT]
        cli.run(composed(*FAST, *short, *override.split()), output_dir=tmp_path)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


#: generator options refused by the generator itself: as the data is made, before the fit
AT_LOAD = {
    "dataset=shifted_clusters dataset.seed=-1": "dataset.seed=-1: must be an integer >= 0",
    "dataset=shifted_clusters dataset.n_groups=5": "dataset.n_groups=5: must be < n_clusters",
    "dataset=digits_border dataset.border_noise=-1":
        "dataset.border_noise=-1: must be a real number >= 0",
    "dataset=digits_border dataset.border_levels=[1]": "dataset.border_levels=[1]: must be",
    "dataset=synthetic dataset.n_features=12":
        "dataset.n_causal=10: with n_spurious=10 exceeds n_features=12",
}


@pytest.mark.parametrize("override, message", AT_LOAD.items())
def test_generator_values_fail_in_one_line_naming_the_key(no_fit, tmp_path, override,
                                                          message):
    with pytest.raises(ConfigError) as error:
        cli.run(composed(*FAST, SHORT, *override.split()), output_dir=tmp_path)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


@pytest.mark.parametrize("overrides, message", [
    (["n_features_to_select=100"], "n_features_to_select=100: exceeds the 64"),
    (["method.n_neighbors=2000"], "method.n_neighbors=2000: needs more than 2000 samples"),
])
def test_baselines_get_the_same_checks(monkeypatch, tmp_path, overrides, message):
    from causefs.selectors import MCFS

    monkeypatch.setattr(MCFS, "score", _forbidden)  # never reached
    with pytest.raises(ConfigError, match=message):
        cli.run(composed(*FAST, "method=mcfs", *overrides), output_dir=tmp_path)


@pytest.mark.parametrize("labels, found", [(None, "no labels"), (np.zeros(20), "1 class")])
def test_n_clusters_null_needs_two_classes(tmp_path, labels, found):
    X = np.random.default_rng(0).random((20, 4))
    arrays = {"X": X} if labels is None else {"X": X, "y": labels}
    np.savez(tmp_path / "data.npz", **arrays)
    cfg = composed("dataset=file", f"dataset.path={tmp_path / 'data.npz'}",
                   "n_features_to_select=2", *FAST)
    with pytest.raises(ConfigError, match=f"n_clusters=null: .* has {found}"):
        cli.run(cfg, output_dir=tmp_path)


def test_the_default_config_passes():
    check_config(composed())
    check_config(composed("+experiment=compare"))


def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "causefs.app.cli", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=600)


def test_user_errors_are_one_line_and_exit_2(tmp_path):
    out = run_cli("evaluation.n_runs=0", f"hydra.run.dir={tmp_path}")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "causefs: error: evaluation.n_runs=0: must be an integer >= 1 "
        "(set CAUSEFS_DEBUG=1 for the traceback)"]
    assert not (tmp_path / "result.json").exists()
    debug = run_cli("evaluation.n_runs=0", f"hydra.run.dir={tmp_path}",
                    env={"CAUSEFS_DEBUG": "1", "HYDRA_FULL_ERROR": "1"})
    assert debug.returncode != 0 and "Traceback" in debug.stderr
    assert "ConfigError: evaluation.n_runs=0" in debug.stderr
    # an invalid schedule, found as the method is built (before the data)
    empty_loop = run_cli("schedule=full", "schedule.name=mine", "schedule.loop=[]",
                         f"hydra.run.dir={tmp_path}")
    assert empty_loop.returncode == 2
    assert empty_loop.stderr.strip().splitlines() == [
        "causefs: error: schedule: the loop has no block "
        "(set CAUSEFS_DEBUG=1 for the traceback)"]
    on_auto = run_cli("schedule.name=mine", "schedule.loop=[]", f"hydra.run.dir={tmp_path}")
    assert on_auto.returncode == 2
    assert "schedule=auto has no blocks to edit: start from a registered schedule, e.g. " \
        "schedule=full schedule.name=mine" in on_auto.stderr


def test_help_names_the_app_and_explains_the_main_keys():
    out = run_cli("--help")
    assert out.returncode == 0
    assert out.stdout.startswith("causefs: CAUSE-FS")
    for key in ("dataset=NAME", "data_dir=DIR", "method=NAME", "n_features_to_select=K",
                "memory_limit", "evaluation.rhos", "store.enabled", "CAUSEFS_DEBUG"):
        assert key in out.stdout, key
    assert "cli is powered by Hydra" not in out.stdout


@pytest.mark.parametrize("override, message", [
    ("max_iter=3", "max_iter=3: max_iter is an option of the method: method.max_iter=3"),
    ("dataset.max_iter=2", "dataset.max_iter=2: max_iter is an option of the method: "
                           "method.max_iter=2"),
    ("dataset.n_clusters=3", "dataset.n_clusters=3: n_clusters is a top-level key, not one "
                             "of dataset: n_clusters=3"),
    ("evaluation.random_state=1", "evaluation.random_state=1: random_state is a top-level "
                                  "key, not one of evaluation: random_state=1"),
    ("evaluation.n_run=3", "evaluation.n_run=3: evaluation.n_run is not a key of the "
                           "configuration (did you mean evaluation.n_runs?); "
                           "+evaluation.n_run=3 would add it"),
    ("method.n_neighbor=3", "method.n_neighbor=3: method.n_neighbor is not a key of the "
                            "configuration (did you mean method.n_neighbors, "
                            "method.n_anchors?)"),
])
def test_a_key_in_the_wrong_place_gets_the_key_that_exists(override, message):
    """A key given under a group it does not belong to names where it is: the top level
    (``n_clusters``), or the method's options (``method.max_iter``); an unknown key gets
    the closest known ones."""
    with pytest.raises(Exception) as caught:
        composed(override)
    assert cli.hydra_error_message(caught.value).startswith(message)


@pytest.mark.parametrize("override, key, value", [
    ("store.dir=~/causefs-store", "store.dir", "~/causefs-store"),
    ("store.dir=/tmp/résultats", "store.dir", "/tmp/résultats"),
    ("result_file=~/kept.json", "result_file", "~/kept.json"),
])
def test_a_value_the_grammar_cannot_read_gets_the_quoting_that_reads_it(override, key,
                                                                       value):
    with pytest.raises(Exception) as caught:
        composed(override)
    assert cli.hydra_error_message(caught.value) == (
        f"{override}: the command line cannot read this value as it is; quote it, as "
        f"'{key}=\"{value}\"' (with the single quotes, for the shell)")
    composed(f'{key}="{value}"')  # quoted, it is read
