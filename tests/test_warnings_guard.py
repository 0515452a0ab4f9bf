"""The suite's output stays clean: a warning a test does not expect fails that test.

pyproject's ``filterwarnings`` turns the library's own warnings, scikit-learn's
ConvergenceWarning (which CauseFS raises) and ResourceWarning into errors; a test that
expects one asserts it, a ``short_fit`` test filters the ConvergenceWarning of its short
fits (``tests/conftest.py``). Checked here by running pytest, with the project's
configuration and conftest, on tests that warn.
"""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WARNING_TESTS = '''
import warnings

import numpy as np
import pytest

from causefs import CauseFS, NuisanceWarning, SettingsWarning


def short_fit():
    X = np.random.default_rng(0).random((30, 6))
    CauseFS(n_clusters=2, n_features_to_select=2, max_iter=1, random_state=0).fit(X)


def test_stray_convergence_warning():
    short_fit()


def test_stray_settings_warning():
    warnings.warn("a stray warning", SettingsWarning)


def test_stray_resource_warning():
    warnings.warn("a stray warning", ResourceWarning)


def test_expected_warning():
    with pytest.warns(NuisanceWarning, match="expected"):
        warnings.warn("expected", NuisanceWarning)


@pytest.mark.short_fit
def test_short_fit():
    short_fit()


def test_other_warnings_are_reported_not_raised():
    warnings.warn("a third-party notice", UserWarning)
'''


def test_a_warning_no_test_expects_fails_the_test(tmp_path):
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_warns.py").write_text(WARNING_TESTS)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"),
         "--rootdir", str(tmp_path), "-p", "no:cacheprovider", "-q", "-rfp",
         str(tmp_path / "test_warns.py")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    failed = {line.split("::")[1].split()[0] for line in done.stdout.splitlines()
              if line.startswith("FAILED")}
    assert failed == {"test_stray_convergence_warning", "test_stray_settings_warning",
                      "test_stray_resource_warning"}, done.stdout
    assert "3 failed, 3 passed" in done.stdout, done.stdout
