"""The development benchmark's protocol (benchmarks/dev_benchmark.py): a method whose
scores depend on the number of features kept is fitted once per number."""

import sys
from pathlib import Path

import numpy as np
import pytest

from causefs.selectors import Selector

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import dev_benchmark  # noqa: E402


class CountSpy(Selector):
    """Scores that put the features ``count`` apart first: every fit's ranking differs."""

    name = "count_spy"

    def __init__(self):
        self.counts = []

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        self.counts.append(n_features_to_select)
        return -np.roll(np.arange(X.shape[1]), n_features_to_select).astype(float)


@pytest.mark.parametrize("depends", [True, False])
def test_a_count_dependent_method_is_fitted_and_scored_at_each_number(monkeypatch, depends):
    spy = CountSpy()
    spy.depends_on_count = depends
    monkeypatch.setattr(dev_benchmark, "selector", lambda method: spy)
    scored = []  # the columns k-means is given, in the order of the rhos
    monkeypatch.setattr(dev_benchmark, "kmeans_scores",
                        lambda X, y, n_runs: scored.append(X) or {"acc_mean": 0.0})
    rng = np.random.default_rng(0)
    X, y = rng.random((40, 60)), np.repeat([0, 1], 20)
    result = dev_benchmark.run_job(X, y, "count_spy", seed=0)
    assert spy.counts == ([10, 20, 50] if depends else [50])
    for rho, columns in zip((10, 20, 50), scored, strict=True):
        fitted = rho if depends else 50  # the number the ranking was fitted for
        expected = np.argsort(np.roll(np.arange(60), fitted), kind="stable")[:rho]
        assert result["rankings"][str(rho)] == expected.tolist()
        np.testing.assert_array_equal(columns, X[:, expected])
    # the time a table shows is the fit of the default's 20 features where there is one
    assert result["fit_seconds"] == result["fit_seconds_by_rho"]["20" if depends else "50"]


def test_the_jobs_of_a_count_dependent_method_are_new_jobs(monkeypatch, tmp_path):
    spy = CountSpy()
    monkeypatch.setattr(dev_benchmark, "selector", lambda method: spy)
    spy.depends_on_count = True
    per_rho = dev_benchmark.job_path(tmp_path, "jaffe", "count_spy", 0)
    spy.depends_on_count = False
    assert dev_benchmark.job_path(tmp_path, "jaffe", "count_spy", 0) != per_rho


def test_a_method_no_plugin_registers_stops_the_run_before_any_job(tmp_path, capsys):
    """A name that is not a registered selector (a plugin not installed) is refused at the
    start, naming it and the example plugin that registers the table's "variance"."""
    with pytest.raises(SystemExit) as stop:
        dev_benchmark.main(["--methods", "causefs", "no_such_selector:alpha=1",
                            "--store", str(tmp_path / "store")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "not registered: no_such_selector (registered: " in err
    assert "pip install ./examples/causefs-example-plugin" in err
    assert not (tmp_path / "store").exists()
