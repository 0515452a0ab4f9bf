"""Sweeps: the results store, resuming an interrupted sweep, launchers, the report."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from causefs.app.evaluation import causal_recovery, evaluate_ranking
from causefs.app.report import report
from causefs.app.store import job_key

SMALL = ["dataset=synthetic", "dataset.n_samples=120", "dataset.n_features=20",
         "evaluation.n_runs=2", "evaluation.rhos=[5,10]"]
#: CAUSE-FS's own option, for the sweeps that run CAUSE-FS only (a baseline has no max_iter)
SHORT = "method.max_iter=2"


def cli(*args, cwd=None, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "causefs.app.cli", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kwargs)


def test_job_keys_are_stable_and_distinct():
    a = {"method": "spec", "params": {"style": -1, "n_neighbors": 5}}
    b = {"params": {"n_neighbors": 5, "style": -1}, "method": "spec"}
    assert job_key(a) == job_key(b)
    assert job_key(a) != job_key({**a, "method": "mcfs"})


def test_interrupted_sweep_resumes_without_loss_or_duplicates(tmp_path):
    store = tmp_path / "store"
    sweep = ["-m", "dataset.seed=0,1,2,3", *SMALL, SHORT, "store.enabled=true",
             f"store.dir={store}"]
    first = cli(*sweep, f"hydra.sweep.dir={tmp_path / 'a'}")
    deadline = time.time() + 300
    while time.time() < deadline and len(list(store.glob("*.json"))) < 1:
        time.sleep(0.2)
    os.killpg(first.pid, signal.SIGKILL)  # kill the sweep midway
    first.communicate()  # reaps it and closes its pipes
    done = {p.name: p.read_text() for p in store.glob("*.json")}
    assert 1 <= len(done) < 4, "the kill must land between jobs for this test to mean something"
    second = cli(*sweep, f"hydra.sweep.dir={tmp_path / 'b'}")
    out, err = second.communicate(timeout=600)
    assert second.returncode == 0, err
    assert out.count("already in") == len(done)  # the stored jobs are skipped ...
    files = sorted(store.glob("*.json"))
    assert len(files) == 4  # ... the others run, and nothing is duplicated
    for name, text in done.items():
        assert (store / name).read_text() == text  # nothing rewritten
    seeds = sorted(json.loads(p.read_text())["job"]["dataset"]["seed"] for p in files)
    assert seeds == [0, 1, 2, 3]
    assert not list(store.glob(".*.tmp"))


def test_two_job_sweep_through_submitit(tmp_path):
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    store = tmp_path / "store"
    run = cli("-m", "hydra/launcher=submitit_local", "method=all_features,laplacian_score",
              *SMALL, "store.enabled=true", f"store.dir={store}",
              f"hydra.sweep.dir={tmp_path / 's'}")
    out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err
    methods = sorted(json.loads(p.read_text())["job"]["method"] for p in store.glob("*.json"))
    assert methods == ["all_features", "laplacian_score"]


def test_protocol_and_recovery(blobs):
    X, y = blobs
    table = evaluate_ranking(X, y, np.arange(12), rhos=(4, 100), n_runs=3)
    assert table[100]["features"] == 12 and table[4]["features"] == 4
    recovery = causal_recovery([3, 1, 7, 0], causal=[0, 1, 2], rhos=(2, 4), spurious=[7])
    assert recovery[2] == {"precision": 0.5, "recall": 1 / 3, "spurious_fraction": 0.0}
    assert recovery[4]["precision"] == 0.5 and recovery[4]["spurious_fraction"] == 0.25


def test_report_from_a_store(tmp_path):
    store = tmp_path / "store"
    common = ["evaluation.rhos=[20]", "evaluation.n_runs=2", "store.enabled=true",
              f"store.dir={store}"]
    # a sweep sets a method's own options for that method only: one sweep per method
    sweeps = [("method=causefs", SHORT, "schedule=full,ablation_II", "dataset=digits"),
              ("method=all_features", "schedule=full,ablation_II", "dataset=digits"),
              ("method=all_features,laplacian_score", *SMALL),
              ("method=causefs", SHORT, *SMALL)]
    for number, sweep in enumerate(sweeps):
        run = cli("-m", *sweep, *common, f"hydra.sweep.dir={tmp_path / str(number)}")
        out, err = run.communicate(timeout=600)
        assert run.returncode == 0, err
        if number == 1:  # all_features does not depend on the schedule: stored once
            assert len(list(store.glob("*.json"))) == 3
            assert "already in" in out
    text = report(store, tmp_path / "report", rho=20, with_figures=True)
    tables, _, causal = text.partition("Causal features recovered")
    # rows are named by what ran (2 iterations, not the defaults)
    assert "| CAUSE-FS (full) (max_iter=2) |" in tables
    assert "| CAUSE-FS-II (max_iter=2) |" in tables
    assert "| AllFea |" in tables and "k-means x 2 runs" in tables and "**" in tables
    assert "paper:" not in tables  # 2 k-means runs: not the paper's protocol
    assert "synthetic" not in tables  # one result per seed: the causal table reports it
    assert "| LapScore |" in causal and "| CAUSE-FS (max_iter=2) |" in causal
    assert "| AllFea |" not in causal  # column order is no ranking
    assert (tmp_path / "report" / "tables.csv").read_text().count("\n") >= 3
    assert (tmp_path / "report" / "figures" / "acc_vs_features.png").exists()
