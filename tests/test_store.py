"""The results store: content keys, self-describing entries checked on read, invalid
entries moved aside, file permissions, stale temporaries, and the report's refusals."""

import contextlib
import fnmatch
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hydra import compose, initialize_config_module

from causefs.app.cli import run
from causefs.app.configs import register_configs
from causefs.app.report import main as report_main
from causefs.app.report import report
from causefs.app.store import (INVALID_DIR, SCHEMA_VERSION, InvalidEntryError, ResultStore,
                               StoreError, StoreWarning, canonical, job_key, validate_entry,
                               write_json_atomic)

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)

JOB = {"method": "spec", "dataset": {"name": "x", "sha256": "0" * 64}}
RESULT = {"scores": [0.5, 0.1], "features_best_first": [0, 1], "selected_features": [0],
          "metrics": None, "job": JOB}
SCORED = {**RESULT, "metrics": {"selected": {"20": {"acc_mean": 0.5, "acc_std": 0.1,
                                                  "nmi_mean": 0.4, "nmi_std": 0.1}}}}
register_configs()  # the method, kernel and qp groups come from the registry, as at CLI start
SETTINGS = ["evaluation.n_runs=2", "evaluation.rhos=[4]",
            "n_features_to_select=4", "evaluation.all_features=false"]
SYNTHETIC = ["dataset=synthetic", "dataset.n_samples=60", "dataset.n_features=12",
             "dataset.n_causal=3", "dataset.n_spurious=3"]


def composed(*overrides):
    with initialize_config_module(config_module="causefs.conf", version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


@pytest.fixture
def store(tmp_path):
    return ResultStore(tmp_path / "store")


def test_entries_describe_themselves_and_round_trip(store):
    key = job_key(JOB)
    path = store.put(key, {**RESULT, "value": np.float64(1.5)})
    entry = json.loads(path.read_text())
    assert entry["schema"] == SCHEMA_VERSION and entry["key"] == key and entry["job"] == JOB
    assert store.lookup(key, JOB)["value"] == 1.5
    assert [p.name for p in store.root.iterdir()] == [f"{key}.json"]  # no temporary left


def test_numpy_values_and_paths_are_written_as_the_plain_values_they_hold(store, tmp_path):
    # canonical JSON and entries hold what json writes for the equal Python values
    given = {"i": np.int32(3), "b": np.bool_(True), "f": np.float32(0.5),
             "a": np.arange(3).reshape(1, 3), "p": tmp_path / "x.csv"}
    plain = {"i": 3, "b": True, "f": 0.5, "a": [[0, 1, 2]], "p": str(tmp_path / "x.csv")}
    assert canonical(given) == json.dumps(plain, sort_keys=True, separators=(",", ":"))
    job = {**JOB, "options": given}
    entry = json.loads(store.put(job_key(job), {**RESULT, "job": job}).read_text())
    assert entry["job"]["options"] == plain
    with pytest.raises(TypeError, match="not JSON serializable: set"):
        canonical({"s": {1}})


def test_put_refuses_a_key_that_is_not_the_jobs(store):
    with pytest.raises(ValueError, match="not the key"):
        store.put("abc", RESULT)


@pytest.mark.parametrize("content, reason", [
    ("{}", "schema None"),
    ('{"schema": 2, "key": "', "not valid JSON"),  # a truncated write
    ("[1, 2]", "not a JSON object"),
    ("\xff\xfe", "not valid JSON"),
])
def test_an_invalid_entry_is_moved_aside_with_a_warning_naming_it(store, content, reason):
    key = job_key(JOB)
    store.root.mkdir(parents=True)
    store.path(key).write_text(content, encoding="latin-1")
    with pytest.warns(StoreWarning, match=rf"{store.path(key)}: .*{reason}.*moved to"):
        assert store.lookup(key, JOB) is None
    assert not store.path(key).exists()
    moved = list((store.root / INVALID_DIR).iterdir())
    assert len(moved) == 1 and moved[0].read_text(encoding="latin-1") == content


def test_an_entry_answering_another_job_is_not_trusted(store):
    key = job_key(JOB)
    store.put(key, RESULT)
    with pytest.warns(StoreWarning, match="answers another job"):
        assert store.lookup(key, {**JOB, "method": "mcfs"}) is None


@pytest.mark.parametrize("change, reason", [
    (lambda e: {**e, "schema": 1}, "schema 1, expected"),
    (lambda e: {**e, "key": "0" * 16}, "holds key"),
    (lambda e: {**e, "job": {**JOB, "method": "x"}}, "does not hash to its key"),
    (lambda e: {k: v for k, v in e.items() if k != "features_best_first"},
     "missing field.*features_best_first"),
])
def test_an_entry_with_a_wrong_field_is_not_trusted(store, change, reason):
    key = job_key(JOB)
    entry = json.loads(store.put(key, RESULT).read_text())
    store.path(key).write_text(json.dumps(change(entry)))
    with pytest.warns(StoreWarning, match=reason):
        assert store.lookup(key, JOB) is None


def test_files_follow_the_umask(store):
    key = job_key(JOB)
    previous = os.umask(0o022)
    try:
        assert store.put(key, RESULT).stat().st_mode & 0o777 == 0o644
        os.umask(0o077)
        assert store.put(key, RESULT).stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(previous)


def test_stale_temporaries_of_killed_writes_are_removed_on_open(store):
    store.root.mkdir(parents=True)
    stale, fresh = store.root / ".k.json.abc.tmp", store.root / ".k.json.def.tmp"
    stale.write_text("{")
    fresh.write_text("{")  # a write in progress elsewhere: left alone
    old = time.time() - 3600
    os.utime(stale, (old, old))
    ResultStore(store.root)
    assert not stale.exists() and fresh.exists()


def test_unwritable_store_is_reported(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StoreError, match=f"{blocker / 'store'} is not writable"):
        ResultStore(blocker / "store").check_writable()


def test_report_skips_a_corrupt_file_with_a_warning(store, tmp_path):
    store.put(job_key(JOB), SCORED)
    (store.root / "0123456789abcdef.json").write_text("{trunc")
    with pytest.warns(StoreWarning, match="0123456789abcdef.json: not valid JSON"):
        assert len(list(store)) == 1
    with pytest.warns(StoreWarning):
        report(store.root, tmp_path / "out", with_figures=False)


@pytest.mark.parametrize("make", ["missing", "empty", "only_invalid"])
def test_report_on_a_missing_or_empty_store_exits_nonzero(tmp_path, capsys, make):
    root = tmp_path / "store"
    if make != "missing":
        root.mkdir()
    if make == "only_invalid":
        (root / "0123456789abcdef.json").write_text("{}")
    with pytest.warns(StoreWarning) if make == "only_invalid" else _no_warning():
        with pytest.raises(SystemExit) as stop:
            report_main(["--store", str(root), "--out", str(tmp_path / "out")])
    assert stop.value.code != 0
    err = capsys.readouterr().err
    assert str(root) in err and ("no results store" in err or "no valid results" in err)


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _run(tmp_path, *overrides, data=SYNTHETIC):
    # CAUSE-FS, the default method, for one iteration; or the method an override names
    short = [] if any(o.startswith("method=") for o in overrides) else ["method.max_iter=1"]
    cfg = composed(*data, *SETTINGS, *short, "store.enabled=true",
                   f"store.dir={tmp_path / 'store'}", *overrides)
    return run(cfg, output_dir=tmp_path / "run")


def test_the_key_follows_the_datas_content_not_its_path(tmp_path, capsys):
    rng = np.random.default_rng(0)
    data = tmp_path / "data.npz"
    X = rng.random((40, 6))
    np.savez(data, X=X, y=np.repeat([0, 1], 20))
    first = _run(tmp_path, data=["dataset=file", f"dataset.path={data}"])
    np.savez(data, X=X[:, ::-1], y=np.repeat([0, 1], 20))  # same path, new content
    second = _run(tmp_path, data=["dataset=file", f"dataset.path={data}"])
    assert "skipped" not in capsys.readouterr().out
    assert first["key"] != second["key"]
    copy = tmp_path / "copy.npz"
    copy.write_bytes(data.read_bytes())  # same content, new path: the stored result
    assert _run(tmp_path, data=["dataset=file", f"dataset.path={copy}"])["key"] == second["key"]
    assert "already in" in capsys.readouterr().out


@pytest.mark.parametrize("first, second", [("evaluation.enabled=false", "evaluation.enabled=true"),
                                           ("evaluation.all_features=false",
                                            "evaluation.all_features=true")])
def test_evaluation_switches_are_in_the_key(tmp_path, capsys, first, second):
    without = _run(tmp_path, "method=laplacian_score", first)
    with_it = _run(tmp_path, "method=laplacian_score", second)
    assert "skipped" not in capsys.readouterr().out
    assert with_it["metrics"] != without["metrics"]


def test_n_features_to_select_is_in_the_key(tmp_path, capsys):
    five = _run(tmp_path, "method=laplacian_score", "n_features_to_select=5")
    three = _run(tmp_path, "method=laplacian_score", "n_features_to_select=3")
    assert "skipped" not in capsys.readouterr().out
    assert len(five["selected_features"]) == 5 and len(three["selected_features"]) == 3


def test_an_emptied_entry_is_recomputed_not_trusted(tmp_path, capsys):
    first = _run(tmp_path, "method=laplacian_score")
    path = tmp_path / "store" / f"{first['key']}.json"
    path.write_text("{}")
    with pytest.warns(StoreWarning, match=str(path)):
        again = _run(tmp_path, "method=laplacian_score")
    assert "skipped" not in capsys.readouterr().out
    assert again["features_best_first"] == first["features_best_first"]
    assert json.loads(path.read_text())["features_best_first"]


def test_an_entry_moved_by_another_job_meanwhile_is_a_miss(store, monkeypatch):
    key = job_key(JOB)
    store.root.mkdir(parents=True)
    store.path(key).write_text("{}")

    def moved_elsewhere(key):
        raise FileNotFoundError(key)

    monkeypatch.setattr(store, "move_aside", moved_elsewhere)
    with pytest.warns(StoreWarning) as record:
        assert store.lookup(key, JOB) is None
    assert str(record[0].message).endswith("; moved by another process, recomputing")


def test_report_at_a_rho_no_result_has_says_which_it_has(store, tmp_path, capsys):
    store.put(job_key(JOB), SCORED)
    report(store.root, tmp_path / "ok", rho=20, with_figures=False)
    with pytest.raises(SystemExit) as stop:
        report_main(["--store", str(store.root), "--out", str(tmp_path / "o"), "--rho", "7"])
    assert stop.value.code != 0
    assert "has metrics at rho=7 (stored: 20)" in capsys.readouterr().err


def test_report_to_an_unwritable_place_is_one_line(store, tmp_path, capsys):
    store.put(job_key(JOB), SCORED)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SystemExit) as stop:
        report_main(["--store", str(store.root), "--out", str(blocker / "out"), "--no-figures"])
    assert stop.value.code != 0
    err = capsys.readouterr().err
    assert err.startswith("causefs-report: error: ") and str(blocker) in err
    assert err.count("\n") == 1


def test_a_dry_run_checks_and_plans_but_fits_nothing(tmp_path, capsys, monkeypatch):
    import causefs.app.cli as cli

    done = _run(tmp_path, "method=laplacian_score")
    monkeypatch.setattr(cli, "score", lambda *a: pytest.fail("a dry run fitted"))
    planned = _run(tmp_path, "method=laplacian_score", "dry_run=true")
    assert planned == {"key": done["key"], "job": done["job"], "dry_run": True}
    assert f"key {done['key']}; in the store" in capsys.readouterr().out
    _run(tmp_path, "method=spec", "dry_run=true")
    assert "in the store" not in capsys.readouterr().out
    written = json.loads((tmp_path / "run" / "result.json").read_text())
    assert written["job"]["method"] == "laplacian_score"  # the dry runs wrote nothing


@pytest.mark.parametrize("first, second", [
    ([], ["method.alpha=1", "method.beta=0.0001"]),  # the defaults 1.0 and 1e-4
    (["schedule=full", "qp.rtol=1"], ["schedule=full", "qp.rtol=1.0"]),
    (["kernel=rbf"], ["kernel=rbf", "kernel.exact_budget=20000000000"]),
    (["schedule=ablation_I"], ["schedule=ablation_I", "method.lam=1"]),
])
def test_equal_values_are_one_job(tmp_path, capsys, first, second):
    """1 and 1.0 are one job: values are normalized by the rules that check them."""
    stored = _run(tmp_path, *first)
    again = _run(tmp_path, *second)
    assert "already in" in capsys.readouterr().out
    assert again["key"] == stored["key"]


def test_equal_generator_options_are_one_job(tmp_path, capsys):
    data = ["dataset=shifted_clusters", "dataset.n_train=40", "dataset.n_test=40"]
    stored = _run(tmp_path, "method=laplacian_score", data=data)
    again = _run(tmp_path, "method=laplacian_score", "dataset.separation=3",
                 "dataset.train_bias=0.90", data=data)
    assert "already in" in capsys.readouterr().out and again["key"] == stored["key"]


# ---- only regular files it wrote: anything else is moved aside or skipped, never opened
# blocking, never fatal ------------------------------------------------------------------


@pytest.fixture
def no_hang():
    """Fail instead of hanging (a FIFO opened for reading blocks until a writer comes)."""
    def stop(*_):
        raise TimeoutError("the store blocked")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _fifo(path):
    os.mkfifo(path)


def _directory(path):
    path.mkdir()
    (path / "inside").write_text("{}")


def _loop(path):
    os.symlink(path.name, path)


def _link_to_a_file(path):
    target = path.parent.parent / "elsewhere.json"
    target.write_text(json.dumps({"schema": SCHEMA_VERSION}))
    os.symlink(target, path)


def _dangling(path):
    os.symlink("/nonexistent/entry.json", path)


NOT_ENTRIES = {"a FIFO": _fifo, "a directory": _directory, "a symbolic link": _loop,
               "a symbolic link ": _link_to_a_file, " a symbolic link": _dangling}


@pytest.mark.parametrize("kind", NOT_ENTRIES)
def test_what_is_not_a_regular_file_is_moved_aside_without_opening_it(store, no_hang, kind):
    key = job_key(JOB)
    store.root.mkdir(parents=True)
    NOT_ENTRIES[kind](store.path(key))
    with pytest.warns(StoreWarning, match=rf"{store.path(key)}: {kind.strip()}, not an "
                                          "entry; moved to"):
        assert store.lookup(key, JOB) is None
    assert not os.path.lexists(store.path(key))
    assert store.lookup(key, JOB) is None  # a miss, and the job can be stored
    store.put(key, RESULT)
    assert store.lookup(key, JOB)["features_best_first"] == RESULT["features_best_first"]


@pytest.mark.parametrize("kind", NOT_ENTRIES)
def test_the_report_skips_what_is_not_a_regular_file(store, no_hang, kind):
    store.put(job_key(JOB), SCORED)
    NOT_ENTRIES[kind](store.root / "0123456789abcdef.json")
    with pytest.warns(StoreWarning, match=f"0123456789abcdef.json: {kind.strip()}"):
        assert len(list(store)) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_entry_is_moved_aside(store):
    key = job_key(JOB)
    store.put(key, RESULT).chmod(0)
    with pytest.warns(StoreWarning, match="unreadable"):
        assert store.lookup(key, JOB) is None


def test_a_directory_under_an_entrys_name_does_not_stop_a_put(store):
    key = job_key(JOB)
    _directory(store.root.mkdir(parents=True) or store.path(key))
    with pytest.warns(StoreWarning, match="not a regular file, moved to"):
        store.put(key, RESULT)
    assert store.lookup(key, JOB) is not None


def test_an_invalid_folder_that_is_a_file_does_not_stop_a_lookup(store):
    key = job_key(JOB)
    store.root.mkdir(parents=True)
    (store.root / INVALID_DIR).write_text("a file, not a folder")
    store.path(key).write_text("{}")
    with pytest.warns(StoreWarning, match="moved to"):
        assert store.lookup(key, JOB) is None
    assert not store.path(key).exists()
    assert len([p for p in store.root.iterdir() if p.name.endswith(".invalid")]) == 1


@contextlib.contextmanager
def _warns_here():
    """Expect StoreWarnings from the ``with`` block, each naming the block's own line as
    where it comes from (the caller's line, not the store's: ``stacklevel``). Call the
    store right in the block: one frame further up is pytest's."""
    with pytest.warns(StoreWarning) as record:
        yield record
    assert {(w.filename, w.lineno) for w in record} == {(__file__, record[0].lineno)}


@pytest.mark.skipif("MUTANT_UNDER_TEST" in os.environ,
                    reason="mutmut's trampoline adds a frame to every call of a mutated "
                           "module: no stacklevel holds under it (docs/MUTATION.md)")
def test_store_warnings_point_at_the_callers_line(store, monkeypatch):
    key = job_key(JOB)
    store.root.mkdir(parents=True)
    store.path(key).write_text("{trunc")
    with _warns_here():
        store.lookup(key, JOB)                                   # moved aside
    _directory(store.path(key))
    with _warns_here():
        store.put(key, RESULT)                                   # a directory moved aside
    (store.root / "0123456789abcdef.json").write_text("{trunc")
    with _warns_here():
        list(store.entries())                                    # skipped
    _directory(store.root / f"{key}.claim")
    with _warns_here(), store.claim(key) as claim:               # a claim that is no file
        assert claim.held

    def no_locks(*_):
        raise OSError(37, "No locks available")

    monkeypatch.setattr("fcntl.lockf", no_locks)
    with _warns_here() as record, store.claim(key) as claim:
        assert claim.held
    assert "cannot lock" in str(record[0].message)


# ---- concurrent sweeps: one claim per job -------------------------------------------

HOLD = """
import sys, time
from causefs.app.store import ResultStore
with ResultStore(sys.argv[1]).claim(sys.argv[2]) as claim:
    print("held" if claim.held else "busy", flush=True)
    time.sleep(float(sys.argv[3]))
"""


def _holder(store, key, seconds):
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(store.root), key,
                                str(seconds)], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    return process


def test_a_claim_held_by_another_process_is_not_taken(store):
    key = job_key(JOB)
    holder = _holder(store, key, 60)
    try:
        with store.claim(key) as claim:
            assert not claim.held and f"pid {holder.pid} on " in claim.holder
    finally:
        holder.kill()
        holder.communicate()  # reads and closes its pipe
    # the holder died without releasing anything: its claim is free again
    with store.claim(key) as claim:
        assert claim.held
    assert not (store.root / f"{key}.claim").exists()  # a finished job leaves none


def test_a_job_claimed_elsewhere_is_skipped_not_computed(tmp_path, capsys, monkeypatch):
    first = _run(tmp_path, "method=laplacian_score", "store.overwrite=true")
    store = ResultStore(tmp_path / "store")
    store.path(first["key"]).unlink()
    holder = _holder(store, first["key"], 60)
    monkeypatch.setattr("causefs.app.cli.compute", lambda *a, **k: pytest.fail("computed"))
    try:
        assert _run(tmp_path, "method=laplacian_score") is None
    finally:
        holder.kill()
        holder.communicate()  # reads and closes its pipe
    assert f"is being computed by pid {holder.pid}" in capsys.readouterr().out


def test_two_sweeps_at_once_compute_every_job_once(tmp_path):
    store = tmp_path / "store"
    sweep = ["-m", "dataset.seed=0,1,2", *SYNTHETIC, *SETTINGS, "method.max_iter=3",
             "store.enabled=true", f"store.dir={store}"]
    runs = [subprocess.Popen([sys.executable, "-m", "causefs.app.cli", *sweep,
                              f"hydra.sweep.dir={tmp_path / str(i)}"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for i in range(2)]
    outs = [r.communicate(timeout=600) for r in runs]
    assert all(r.returncode == 0 for r in runs), [e for _, e in outs]
    assert sum(out.count("result written to") for out, _ in outs) == 3
    assert len(list(store.glob("*.json"))) == 3 and not list(store.glob("*.claim"))


def test_a_relative_store_stays_put_when_hydra_changes_directory(tmp_path):
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "data.npz", X=rng.random((40, 6)), y=np.repeat([0, 1], 20))
    args = ["dataset=file", "dataset.path=data.npz", "method=laplacian_score",
            "n_features_to_select=2", "evaluation.n_runs=1", "store.enabled=true",
            "store.dir=rel/store", "hydra.job.chdir=true"]
    outs = [subprocess.run([sys.executable, "-m", "causefs.app.cli", *args,
                            f"hydra.run.dir=outputs/{i}"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=600) for i in range(2)]
    assert all(o.returncode == 0 for o in outs), [o.stderr for o in outs]
    assert len(list((tmp_path / "rel" / "store").glob("*.json"))) == 1
    assert "already in" in outs[1].stdout


#: a value other than the default for every key that can change a result, by the
#: settings' meaning (docs/MODEL.md); only verbose, trace, check and memory_limit cannot
OTHER_VALUES = {
    "method.alpha": 2.0, "method.beta": 0.01, "method.lam": 0.5, "method.eps": 1e-6,
    "method.n_neighbors": 4, "method.n_anchors": 50, "method.sigma": 0.3,
    "method.max_treatments": 3,
    "method.sample_weights": "simplex", "schedule": "ablation_II", "kernel": "rbf",
    "qp.rtol": 1e-6, "method.max_iter": 2, "method.tol": 0.001, "method.patience": 5,
    "method.structure_iter": 1, "method.stability_subsamples": 2,
    "method.max_granularity": 3, "method.max_correlation": 0.5, "method.treatment": "mean",
    "method.cluster_screen": 0.5,
    "method.mmd_normalization": "paper", "method.neighbor_algorithm": "exact",
    "method.balance_form": "gram", "n_clusters": 3, "n_features_to_select": 3,
    "preprocessing": "standard", "random_state": 1, "evaluation.n_runs": 3,
    "evaluation.seed": 1, "evaluation.rhos": [3], "dataset.seed": 1,
}


def test_every_key_that_can_change_a_result_is_in_the_store_key(tmp_path):
    """Two jobs that differ in one such key are two jobs: a key left out (as
    max_treatments once was) would return one's result for the other."""
    from omegaconf import OmegaConf

    from causefs.app.cli import load, plan
    from causefs.model.settings import affects_result, setting_names

    shared = [*SYNTHETIC, *SETTINGS]
    default = composed(*shared)
    data = load(default)
    base = plan(default, data).key
    method_keys = {k.split(".", 1)[1] for k in OTHER_VALUES if k.startswith("method.")}
    neutral = {"verbose", "trace", "check", "memory_limit"}
    supplied = {"n_clusters", "n_features_to_select", "random_state", "preprocessing"}
    parts = {"schedule", "kernel", "qp"}
    assert {n for n in setting_names() if affects_result(n)} == \
        method_keys | supplied | parts  # every setting that matters is varied here ...
    assert set(setting_names()) - method_keys - supplied - parts == neutral

    def key_with(key, value):
        if key in ("schedule", "kernel"):  # another config group entry
            cfg = composed(*shared, f"{key}={value}")
        else:
            cfg = default.copy()
            OmegaConf.update(cfg, key, value)
        return plan(cfg, load(cfg) if key.startswith("dataset.") else data).key

    for key, value in OTHER_VALUES.items():
        assert key_with(key, value) != base, f"{key}={value} is not in the store key"
    for key, value in {"verbose": True, "trace": True, "check": "strict",
                       "memory_limit": "8GB"}.items():  # ... the others leave it alone
        cfg = default.copy()
        OmegaConf.update(cfg, f"method.{key}", value)
        assert plan(cfg, data).key == base


# ---- where the files go: temporaries, folders, names of what is moved aside ----------

def test_a_write_goes_through_a_temporary_the_store_would_clean_up(tmp_path, monkeypatch):
    # the temporary is in the target's folder (a rename across file systems is no atomic
    # write) and named as remove_stale_temporaries finds it after a killed write
    renames = []
    real_replace = os.replace

    def recorded(source, target):
        renames.append((Path(source), Path(target)))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", recorded)
    target = tmp_path / "a" / "b" / "entry.json"  # parents that do not exist yet
    write_json_atomic(target, {"x": 1})
    assert json.loads(target.read_text()) == {"x": 1}
    [(source, renamed)] = renames
    assert renamed == target and source.parent == target.parent
    assert fnmatch.fnmatchcase(source.name, ".entry.json.*.tmp")


def test_check_writable_makes_missing_parents_and_says_why_it_cannot_write(tmp_path):
    nested = ResultStore(tmp_path / "a" / "b" / "store")
    nested.check_writable()
    assert nested.root.is_dir()
    if not os.path.isdir("/proc/self"):
        pytest.skip("no procfs: no folder that even root cannot write to")
    # procfs: a folder in which no file can be created, even by root; the message
    # carries the system's reason, not the exception's repr
    with pytest.raises(StoreError, match=r"^results store /proc is not writable: [^\[]+$"):
        ResultStore("/proc").check_writable()


@pytest.mark.parametrize("content, message", [
    ("[1, 2]", "not a JSON object but list"),
    ('{"schema": %d, "key": "0123"}' % SCHEMA_VERSION, "holds key '0123'"),
])
def test_invalid_entries_are_described_exactly(store, content, message):
    key = job_key(JOB)
    store.root.mkdir(parents=True)
    store.path(key).write_text(content)
    with pytest.raises(InvalidEntryError) as error:
        store.read(key, JOB)
    assert str(error.value) == f"{store.path(key)}: {message}"


def test_the_reasons_an_entry_is_not_trusted_are_worded_exactly(store):
    key = job_key(JOB)
    entry = json.loads(store.put(key, RESULT).read_text())
    reasons = {"its job specification does not hash to its key":
               ({**entry, "job": {**JOB, "method": "x"}}, JOB),
               "answers another job": (entry, {**JOB, "method": "mcfs"}),
               "missing field(s) scores, metrics":
               ({k: v for k, v in entry.items() if k not in ("scores", "metrics")}, JOB)}
    for reason, (content, spec) in reasons.items():
        with pytest.raises(InvalidEntryError) as error:
            validate_entry(content, key, spec)
        assert str(error.value) == reason


def test_invalid_entries_of_one_key_are_all_kept_under_time_stamped_names(store):
    # <key>.json.<YYYYmmddTHHMMSS>.invalid, the stamp the time of the move; a second move
    # goes into the invalid/ folder the first one made
    key = job_key(JOB)
    store.root.mkdir(parents=True)
    before = time.strftime("%Y%m%dT%H%M%S")
    store.path(key).write_text("first")
    first = store.move_aside(key)
    after = time.strftime("%Y%m%dT%H%M%S")
    assert first.parent == store.root / INVALID_DIR
    stamp = re.fullmatch(rf"{key}\.json\.(\d{{8}}T\d{{6}})\.invalid", first.name).group(1)
    assert before <= stamp <= after
    store.path(key).write_text("second")
    assert store.move_aside(key).parent == store.root / INVALID_DIR


def test_names_of_entries_moved_aside_in_one_second_are_numbered(store, monkeypatch, no_hang):
    key = job_key(JOB)
    store.root.mkdir(parents=True)
    monkeypatch.setattr(time, "strftime", lambda _: "20260101T000000")
    names = []
    for content in ("a", "b", "c", "d"):
        store.path(key).write_text(content)
        names.append(store.move_aside(key).name)
    stem = f"{key}.json.20260101T000000"
    assert names == [f"{stem}.invalid", f"{stem}.1.invalid", f"{stem}.2.invalid",
                     f"{stem}.3.invalid"]
    assert [(store.root / INVALID_DIR / name).read_text() for name in names] == list("abcd")


def test_an_invalid_folder_that_links_elsewhere_is_not_followed(store, tmp_path):
    # a link named invalid/ would move the store's files out of it: they stay in the store
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    store.root.mkdir(parents=True)
    (store.root / INVALID_DIR).symlink_to(elsewhere, target_is_directory=True)
    key = job_key(JOB)
    store.path(key).write_text("{}")
    moved = store.move_aside(key)
    assert moved.parent == store.root and moved.read_text() == "{}"
    assert list(elsewhere.iterdir()) == []


def test_put_stores_the_job_it_is_given_with_a_result_that_has_none(store):
    key = job_key(JOB)
    result = {name: value for name, value in RESULT.items() if name != "job"}
    entry = json.loads(store.put(key, result, spec=JOB).read_text())
    assert entry["job"] == JOB and store.lookup(key, JOB)["scores"] == RESULT["scores"]


def test_a_claim_that_is_no_file_is_moved_aside_under_the_claims_name(store, monkeypatch):
    key = job_key(JOB)
    monkeypatch.setattr(time, "strftime", lambda _: "20260101T000000")
    _directory(store.root.mkdir(parents=True) or store.root / f"{key}.claim")
    moved = store.root / INVALID_DIR / f"{key}.claim.20260101T000000.invalid"
    with pytest.warns(StoreWarning) as record, store.claim(key) as claim:
        assert claim.held
    assert [str(w.message) for w in record] == [
        f"{store.root / f'{key}.claim'}: not a regular file, moved to {moved}"]
    assert (moved / "inside").read_text() == "{}"


def test_a_claim_file_this_process_may_not_open_lets_the_job_run_with_a_warning(
        store, monkeypatch):
    """(Another user's claim file, or an immutable one: os.open raises EACCES or EPERM.)
    It was a PermissionError traceback, and the finished fit was never reached."""
    key = job_key(JOB)
    claim_path = store.root / f"{key}.claim"
    real_open = os.open

    def refusing_open(path, *args, **kwargs):
        if Path(path) == claim_path:
            raise PermissionError(1, "Operation not permitted", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    with pytest.warns(StoreWarning) as record, store.claim(key) as claim:
        assert claim.held
    assert [str(w.message) for w in record] == [
        f"results store {store.root} cannot open {key}.claim (Operation not permitted): "
        "the job runs unclaimed, and concurrent sweeps may compute it twice"]


def test_a_claim_file_follows_the_umask_and_is_no_program(store):
    previous = os.umask(0o022)
    try:
        with store.claim(job_key(JOB)) as claim:
            assert claim.held
            mode = (store.root / f"{job_key(JOB)}.claim").stat().st_mode & 0o777
    finally:
        os.umask(previous)
    assert mode == 0o644


def test_a_link_made_under_a_claims_name_after_the_check_is_not_followed(store, tmp_path,
                                                                         monkeypatch):
    # the check before the open sees no file (another process makes the link just
    # after it): the open itself must refuse the link, not create its target
    key = job_key(JOB)
    store.root.mkdir(parents=True)
    claim_path, target = store.root / f"{key}.claim", tmp_path / "elsewhere"
    claim_path.symlink_to(target)
    real_lexists = os.path.lexists
    monkeypatch.setattr(os.path, "lexists",
                        lambda path: False if Path(path) == claim_path else real_lexists(path))
    with pytest.raises(OSError), store.claim(key):
        pass
    assert not target.exists()


def test_the_key_is_the_first_16_hex_digits_of_the_sha256_of_the_canonical_json():
    spec = {"b": [1, 2.5], "a": {"y": None, "x": "é"}}
    text = '{"a":{"x":"\\u00e9","y":null},"b":[1,2.5]}'  # sorted keys, no whitespace
    assert job_key(spec) == hashlib.sha256(text.encode()).hexdigest()[:16]


def test_an_entry_file_is_indented_json_one_value_per_line(tmp_path):
    path = tmp_path / "entry.json"
    write_json_atomic(path, {"a": [1, 2], "b": {"c": None}})
    assert path.read_text() == '{\n "a": [\n  1,\n  2\n ],\n "b": {\n  "c": null\n }\n}'


def test_a_failed_write_leaves_neither_the_file_nor_its_temporary(tmp_path):
    with pytest.raises(TypeError, match="not JSON serializable: set"):
        write_json_atomic(tmp_path / "entry.json", {"s": {1}})
    assert list(tmp_path.iterdir()) == []


def test_an_entry_name_the_system_refuses_is_unreadable_not_a_link(store):
    store.root.mkdir(parents=True)
    with pytest.raises(InvalidEntryError, match=r"unreadable \(File name too long\), not an"):
        store.read("k" * 300)


def test_stale_means_strictly_older_and_the_removed_files_are_returned(store, monkeypatch):
    store.root.mkdir(parents=True)
    now = 2_000_000_000
    temporaries = {age: store.root / f".k.json.{age}.tmp" for age in (599, 600, 601, 7200)}
    for age, path in temporaries.items():
        path.write_text("{")
        os.utime(path, (now - age, now - age))
    monkeypatch.setattr(time, "time", lambda: now)
    removed = store.remove_stale_temporaries()
    assert sorted(removed) == sorted([temporaries[601], temporaries[7200]])
    assert sorted(store.root.iterdir()) == sorted([temporaries[599], temporaries[600]])


def test_a_temporary_removed_meanwhile_does_not_stop_the_others(store, monkeypatch):
    store.root.mkdir(parents=True)
    for n in range(4):
        (store.root / f".k.json.{n}.tmp").write_text("{")
        os.utime(store.root / f".k.json.{n}.tmp", (0, 0))
    real_lstat, calls = Path.lstat, []

    def first_gone(path):  # another process removed the first one the glob lists
        calls.append(path)
        if len(calls) == 1:
            raise FileNotFoundError(path)
        return real_lstat(path)

    monkeypatch.setattr(Path, "lstat", first_gone)
    assert len(store.remove_stale_temporaries()) == 3
    assert list(store.root.iterdir()) == [calls[0]]


def test_a_claim_left_by_a_dead_process_names_only_its_new_holder(store):
    # the file a crashed job left holds a longer line: the new holder's replaces it whole
    key = job_key(JOB)
    store.root.mkdir(parents=True)
    (store.root / f"{key}.claim").write_text("x" * 150)
    holder = _holder(store, key, 60)
    try:
        with store.claim(key) as claim:
            assert not claim.held
            assert re.fullmatch(rf"pid {holder.pid} on {re.escape(socket.gethostname())} "
                                r"since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", claim.holder)
    finally:
        holder.kill()
        holder.communicate()  # reads and closes its pipe


def test_a_claim_that_is_a_hard_link_is_moved_aside_and_the_linked_file_kept(
        store, tmp_path, monkeypatch):
    # a hard link is a regular file: truncating and writing the claim wrote into the
    # file it links to (a user's file, in a shared store)
    key = job_key(JOB)
    store.root.mkdir(parents=True)
    mine = tmp_path / "my_notes.txt"
    mine.write_text("keep me")
    os.link(mine, store.root / f"{key}.claim")
    monkeypatch.setattr(time, "strftime", lambda _: "20260101T000000")
    moved = store.root / INVALID_DIR / f"{key}.claim.20260101T000000.invalid"
    with pytest.warns(StoreWarning) as record, store.claim(key) as claim:
        assert claim.held
        assert os.stat(store.root / f"{key}.claim").st_nlink == 1
    assert mine.read_text() == "keep me"
    assert [str(w.message) for w in record] == [
        f"{store.root / f'{key}.claim'}: a hard link to another file (2 links), moved to "
        f"{moved}"]


def test_a_hard_link_made_under_a_claims_name_after_the_check_is_not_written(
        store, tmp_path, monkeypatch):
    # linked again between the check and the open, twice: the job runs unclaimed
    key = job_key(JOB)
    store.root.mkdir(parents=True)
    claim_path, mine = store.root / f"{key}.claim", tmp_path / "my_notes.txt"
    mine.write_text("keep me")
    real_open = os.open

    def linking_open(path, *args, **kwargs):
        if Path(path) == claim_path and not os.path.lexists(path):
            os.link(mine, path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", linking_open)
    with pytest.warns(StoreWarning) as record, store.claim(key) as claim:
        assert claim.held
    assert mine.read_text() == "keep me"
    messages = [str(w.message) for w in record]
    assert "a hard link to another file (2 links), moved to" in messages[0]
    assert messages[1:] == [
        f"results store {store.root} cannot open {key}.claim (a hard link to another file, "
        "made again after it was moved aside): the job runs unclaimed, and concurrent "
        "sweeps may compute it twice"]
