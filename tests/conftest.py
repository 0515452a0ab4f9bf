import contextlib
import os
from pathlib import Path

import numpy as np
import pytest

from causefs.core.cgroups import cgroup_directories
from causefs.datasets import ENV_VAR
from causefs.testing.profiles import load_profile

load_profile()  # causefs-ci unless $CAUSEFS_HYPOTHESIS_PROFILE says causefs-dev


@pytest.fixture(scope="session")
def data_dir():
    """The benchmark data directory ($CAUSEFS_DATA); tests that need it skip without it."""
    path = os.environ.get(ENV_VAR)
    if not path:
        pytest.skip(f"{ENV_VAR} is not set (.ci/run sets it to ../shared/datasets)")
    return Path(path)


@pytest.fixture(scope="session")
def blobs():
    """Small clustered data: 60 samples, 12 features (4 informative), 3 clusters."""
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 20)
    centers = rng.normal(scale=3.0, size=(3, 4))
    X = np.hstack([centers[labels] + rng.normal(size=(60, 4)), rng.normal(size=(60, 8))])
    return X, labels


def run_engine(X, Z=None, seed=0, **settings):
    """The engine's fit of preprocessed ``X`` with ``settings`` (a FitResult)."""
    from causefs.engine import build_parts, run_cause_fs
    from causefs.model.settings import Settings

    parts = build_parts(Settings(**settings), seed, nuisance=Z is not None)
    return run_cause_fs(X, parts, seed=seed, Z=Z)


@pytest.fixture(scope="session")
def fit_state():
    """``fit_state(X, **settings)``: the final state of the engine's fit of ``X``."""
    return lambda X, **settings: run_engine(X, **settings).state


def weight(problem, name):
    """A weight of the problem's objective, from the term that takes it (alpha, lam,
    eps, beta; 0 for a term the objective does not have)."""
    for term in problem.objective.terms:
        if name in term.options():
            return getattr(term, name)
    return 0.0


def pytest_collection_modifyitems(items):
    """A ``short_fit`` test fits a few iterations to stay fast: the ConvergenceWarning
    such a fit gives is not what it checks, so it is filtered there (an error elsewhere,
    pyproject's ``filterwarnings``; ``test_convergence.py`` asserts the warning)."""
    for item in items:
        if item.get_closest_marker("short_fit"):
            item.add_marker(pytest.mark.filterwarnings(
                "ignore::sklearn.exceptions.ConvergenceWarning"))


def write(path, text):
    """``text`` into ``path``, its folders made (fake /proc and cgroup trees)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def fake_proc_self(tmp_path, cgroup, mountinfo):
    """A fake ``/proc/self`` with the process's cgroups and the mounts; its path."""
    write(tmp_path / "proc" / "cgroup", cgroup)
    write(tmp_path / "proc" / "mountinfo", mountinfo)
    return str(tmp_path / "proc")


@contextlib.contextmanager
def child_cgroup(controller, settings):
    """A child of this process's ``controller`` cgroup with ``settings`` written
    (``{fstype: {file: text}}``, the files of v1, ``"cgroup"``, or v2, ``"cgroup2"``),
    removed after, where this machine lets a test make one (root, a hierarchy it may
    write); else a skip."""
    for fstype, directories in cgroup_directories(controller):
        own, files = Path(directories[0]), settings.get(fstype, {})
        if files and all((own / name).exists() for name in files):
            break
    else:
        pytest.skip(f"no {controller} cgroup with the files {settings}")
    child = own / f"causefs-test-{os.getpid()}"
    try:
        child.mkdir()
    except OSError as error:
        pytest.skip(f"cannot make a {controller} cgroup here: {error}")
    try:
        try:
            for name, text in files.items():
                (child / name).write_text(text)
        except OSError as error:
            pytest.skip(f"cannot set {name} here: {error}")
        yield child
    finally:
        child.rmdir()
