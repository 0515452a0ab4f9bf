"""Feature names reach the result; a finished result survives a failed write; the printed
objective explains itself (issue 25, items 2, 5 and 6)."""

import json

import numpy as np
import pytest
from hydra import compose, initialize_config_module

from causefs.app import cli
from causefs.app.cli import ResultWriteError, run
from causefs.app.configs import register_configs
from causefs.app.store import ResultStore
from causefs.core.loop import objective_by_iteration
from causefs.datasets import DatasetError, load_file
from causefs.selectors.cause_fs import CauseFSSelector, describe_objective

register_configs()
# two iterations keep these fits short; that they stop before converging is not under test
# the command line always passes a qp, which a schedule without weights reports unused
pytestmark = [pytest.mark.short_fit,
              pytest.mark.filterwarnings("ignore::causefs.model.settings.SettingsWarning")]
FAST = ["method.max_iter=2", "evaluation.n_runs=1", "evaluation.all_features=false",
        "n_clusters=2", "n_features_to_select=3"]


def composed(*overrides):
    with initialize_config_module(config_module="causefs.conf", version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def write_csv(path, header, rows):
    path.write_text(",".join(header) + "\n"
                    + "".join(",".join(f"{v:g}" for v in row) + "\n" for row in rows))
    return path


@pytest.fixture
def named_csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    batch = rng.integers(0, 2, size=40)
    return write_csv(tmp_path / "named.csv", ["a", "b", "batch", "c", "d", "e", "f"],
                     np.column_stack([X[:, :2], batch, X[:, 2:]]))


def test_csv_header_names_the_features_less_the_label_and_nuisance_columns(tmp_path):
    rows = np.arange(20.0).reshape(5, 4)
    rows[:, 3] = [0, 1, 0, 1, 1]
    path = write_csv(tmp_path / "d.csv", ["x1", "batch", "x2", "label"], rows)
    data = load_file(path, nuisance="batch")
    assert data.feature_names == ("x1", "x2")
    np.testing.assert_array_equal(data.X, rows[:, [0, 2]])
    assert load_file(write_csv(tmp_path / "n.csv", ["1", "2"], rows[:, :2])).feature_names \
        is None  # a first line of numbers is data, not a header


def test_npz_feature_names_are_read_and_checked(tmp_path):
    X = np.arange(12.0).reshape(4, 3)
    np.savez(tmp_path / "ok.npz", X=X, feature_names=np.array(["p", "q", "r"]))
    assert load_file(tmp_path / "ok.npz").feature_names == ("p", "q", "r")
    np.savez(tmp_path / "short.npz", X=X, feature_names=np.array(["p", "q"]))
    with pytest.raises(DatasetError, match=r"'feature_names' must be an array of 3 strings"):
        load_file(tmp_path / "short.npz")


def test_a_header_naming_the_label_column_twice_is_refused(tmp_path):
    path = write_csv(tmp_path / "twice.csv", ["label", "x", "label"], np.ones((4, 3)))
    with pytest.raises(DatasetError, match=r"label_column='label' names columns \[1, 3\]"):
        load_file(path, label_column="label")


def test_names_differ_so_do_the_store_keys(tmp_path):
    rows = np.random.default_rng(1).normal(size=(6, 2))
    first = load_file(write_csv(tmp_path / "a.csv", ["u", "v"], rows))
    renamed = load_file(write_csv(tmp_path / "b.csv", ["u", "w"], rows))
    assert first.sha256() != renamed.sha256()


def test_the_result_names_the_selected_features_at_an_absolute_path(named_csv, tmp_path,
                                                                     capsys):
    target = tmp_path / "elsewhere" / "kept.json"
    result = run(composed("dataset=file", f"dataset.path={named_csv}",
                          "dataset.nuisance=batch", "schedule=nuisance_adjusted", f"result_file={target}", *FAST),
                 output_dir=tmp_path / "run")
    kept = json.loads(target.read_text())
    names = ["a", "b", "c", "d", "e", "f"]
    assert kept["dataset"]["feature_names"] == names
    assert kept["selected_feature_names"] == [names[f] for f in kept["selected_features"]]
    assert kept["selected_feature_names"] == result["selected_feature_names"]
    printed = capsys.readouterr().out
    assert ", ".join(f"{names[f]} ({f})" for f in kept["selected_features"]) in printed


def _run_with_store(tmp_path, named_csv, *extra):
    return run(composed("dataset=file", f"dataset.path={named_csv}", "store.enabled=true",
                        f"store.dir={tmp_path / 'store'}", *FAST, *extra),
               output_dir=tmp_path / "run")


def test_a_failed_store_write_leaves_result_json_and_no_claim(named_csv, tmp_path,
                                                              monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(ResultStore, "put", refuse)
    with pytest.raises(ResultWriteError, match="could not write the results store entry .*"
                                               "Permission denied.*the result is in .*run"):
        _run_with_store(tmp_path, named_csv)
    assert json.loads((tmp_path / "run" / "result.json").read_text())["scores"]
    assert not list((tmp_path / "store").glob("*.claim"))


def test_a_failed_result_json_leaves_the_store_entry(named_csv, tmp_path, monkeypatch):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "result.json").mkdir()  # a directory where the file goes
    with pytest.raises(ResultWriteError, match="result.json .*the result is in .*store"):
        _run_with_store(tmp_path, named_csv)
    entries = list(ResultStore(tmp_path / "store"))
    assert len(entries) == 1 and entries[0]["selected_feature_names"]
    assert not list((tmp_path / "store").glob("*.claim"))


def test_a_result_no_write_takes_goes_to_the_temporary_directory(named_csv, tmp_path,
                                                                  monkeypatch):
    monkeypatch.setattr(cli.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "result.json").mkdir()
    with pytest.raises(ResultWriteError) as error:
        run(composed("dataset=file", f"dataset.path={named_csv}", *FAST),
            output_dir=tmp_path / "run")
    [kept] = (tmp_path / "tmp").glob("causefs-result-*.json")
    assert str(kept) in str(error.value)
    assert json.loads(kept.read_text())["selected_features"]


TRACE = [
    {"iteration": 0, "kind": "init", "objective": None, "terms": None},
    {"iteration": 0, "kind": "init", "objective": 5.0, "terms": {"r": 4.0, "fusion": 1.0}},
    {"iteration": 1, "kind": "descent", "objective": 3.0, "terms": {"r": 3.5, "fusion": -0.5}},
    {"iteration": 1, "kind": "structural", "objective": 6.0, "terms": {"r": 5.0, "fusion": 1.0}},
    {"iteration": 2, "kind": "descent", "objective": -1.0, "terms": {"r": 1.0, "fusion": -2.0}},
]


def test_objective_by_iteration_keeps_each_iterations_last_value_and_its_structure():
    rows = objective_by_iteration(TRACE)
    assert [(r["iteration"], r["objective"], r["structure_changed"]) for r in rows] == \
        [(0, 5.0, False), (1, 6.0, True), (2, -1.0, False)]
    assert rows[1]["terms"] == {"r": 5.0, "fusion": 1.0}


def test_the_printed_objective_says_why_it_rises_and_why_it_is_negative():
    text = "\n".join(describe_objective(objective_by_iteration(TRACE)))
    assert "1*" in text and "may rise in an iteration marked *" in text
    assert "negative by design" in text
    calm = [{"iteration": 0, "objective": 2.0, "terms": {"r": 2.0}, "structure_changed": False},
            {"iteration": 1, "objective": 1.0, "terms": {"r": 1.0}, "structure_changed": True}]
    assert not any("(the" in line for line in describe_objective(calm))


def test_no_sample_weight_line_without_fitted_weights():
    X = np.random.default_rng(0).normal(size=(30, 5))
    selector = CauseFSSelector(max_iter=2, schedule="full")
    selector.score(X, n_clusters=2, n_features_to_select=2)
    details = selector.details()
    assert any(line.startswith("sample weights") for line in selector.describe(details))
    details["sample_weight"] = [1.0] * 30  # uniform: no block moved them
    assert not any(line.startswith("sample weights") for line in selector.describe(details))
    default = CauseFSSelector(max_iter=2)  # CAUSE-FS-I: no sample-weight block
    default.score(X, n_clusters=2, n_features_to_select=2)
    assert not any(line.startswith("sample weights")
                   for line in default.describe(default.details()))


def _fitted(X, **params):
    from causefs import CauseFS

    return CauseFS(n_clusters=2, n_features_to_select=3, max_iter=3, random_state=0,
                   **params).fit(X)


def test_the_python_report_follows_the_fitted_selector(tmp_path):
    import causefs

    X = np.random.default_rng(0).normal(size=(40, 6))
    selector = _fitted(X)
    summary = causefs.plot.summary(selector)
    assert sorted(summary["selected_features"]) == np.flatnonzero(selector.get_support()).tolist()
    ranks = selector.ranking_[summary["features_best_first"]]
    assert ranks.tolist() == sorted(ranks.tolist())  # best first, as ranking_ says
    text = causefs.plot.markdown(selector)
    best = summary["selected_features"][0]
    assert f"| 1 | {best} | x{best} | {selector.scores_[best]:.4g} |" in text
    rows = summary["details"]["objective_by_iteration"]
    np.testing.assert_allclose([r["objective"] for r in rows], selector.objective_history_)
    pytest.importorskip("matplotlib")
    assert causefs.plot.report(selector, tmp_path / "fit.png").stat().st_size > 0


def test_the_python_report_of_a_fit_with_z_says_which_features_carry_the_clusters():
    import causefs
    from causefs import CauseFS
    from causefs.datasets import make_shifted_clusters

    data = make_shifted_clusters(n_train=200, n_test=10, seed=0)
    selector = CauseFS(n_clusters=4, n_features_to_select=8, random_state=0).fit(
        data.X, nuisance=data.environment)
    summary = causefs.plot.summary(selector)
    assert summary["details"]["carries_clusters"] == selector.carries_clusters_.tolist()
    text = causefs.plot.markdown(selector)
    assert "carries the clusters |" in text
    first = next(line for line in text.splitlines() if line.startswith("| 1 |"))
    best = summary["selected_features"][0]
    assert first.endswith("| yes |" if selector.carries_clusters_[best] else "| no |")


def test_the_python_report_names_a_dataframes_columns():
    pd = pytest.importorskip("pandas")
    import causefs

    X = np.random.default_rng(0).normal(size=(40, 4))
    selector = _fitted(pd.DataFrame(X, columns=["p", "q", "r", "s"]))
    summary = causefs.plot.summary(selector)
    names = [["p", "q", "r", "s"][f] for f in summary["selected_features"]]
    assert sorted(names) == sorted(selector.get_feature_names_out())


def test_a_loaded_files_names_reach_a_fit_on_its_array(tmp_path):
    import causefs

    header = ["p", "q", "r", "s", "t", "u"]
    X = np.random.default_rng(1).normal(size=(40, 6))
    data = load_file(write_csv(tmp_path / "named.csv", header, X))
    selector = _fitted(data.X)  # an array: the selector itself knows no names
    assert not hasattr(selector, "feature_names_in_")
    chosen = np.flatnonzero(selector.get_support())
    assert selector.get_feature_names_out(data.feature_names).tolist() == \
        [header[j] for j in chosen]
    text = causefs.plot.markdown(selector, feature_names=data.feature_names)
    best = int(np.argmin(selector.ranking_))
    assert f"| 1 | {best} | {header[best]} | {selector.scores_[best]:.4g} |" in text
    summary = causefs.plot.summary(selector, feature_names=data.feature_names)
    assert summary["dataset"]["feature_names"] == header
    with pytest.raises(ValueError, match="one name per feature, 6; got shape \\(5,\\)"):
        causefs.plot.summary(selector, feature_names=header[:5])


def test_given_names_must_match_the_names_of_the_fit():
    pd = pytest.importorskip("pandas")
    import causefs

    selector = _fitted(pd.DataFrame(np.random.default_rng(0).normal(size=(40, 4)),
                                    columns=["p", "q", "r", "s"]))
    assert causefs.plot.summary(selector, feature_names=["p", "q", "r", "s"]) \
        == causefs.plot.summary(selector)
    with pytest.raises(ValueError, match="differ from the names the selector was fitted"):
        causefs.plot.summary(selector, feature_names=["a", "b", "c", "d"])


def test_a_non_finite_nuisance_in_a_file_names_the_file_and_the_key(tmp_path):
    Z = np.array([0.0, 1.0, np.inf, 1.0])
    np.savez(tmp_path / "z.npz", X=np.arange(8.0).reshape(4, 2), site=Z)
    with pytest.raises(DatasetError, match=r"z.npz: nuisance 'site', sample 3 \(1-based\) "
                                           r"is \[inf\] \(missing and infinite"):
        load_file(tmp_path / "z.npz", nuisance="site")


@pytest.mark.parametrize("value, shown", [(np.nan, "NaN"), (-np.inf, "-infinity"), (np.inf, "infinity")])
@pytest.mark.parametrize("sparse", [False, True])
def test_a_non_finite_value_gets_the_librarys_own_message(value, shown, sparse):
    import scipy.sparse as sp

    from causefs import CauseFS

    X = np.arange(1.0, 19.0).reshape(6, 3)
    X[4, 2] = value
    with pytest.raises(ValueError, match=rf"X holds {shown} at sample 4, feature 2 \(0-based; "
                                         r"1 non-finite value\(s\) in all\): CAUSE-FS needs "
                                         r"finite data; impute"):
        CauseFS(n_clusters=2).fit(sp.csr_array(X) if sparse else X)


def test_the_long_fit_warning_says_how_to_see_progress_given_verbose_and_logging(caplog):
    import logging

    from causefs.estimator import _how_to_follow

    assert _how_to_follow(False) == "verbose=True shows its progress"
    caplog.set_level(logging.WARNING, logger="causefs")
    assert "logging.basicConfig(level=logging.INFO) shows it" in _how_to_follow(True)
    caplog.set_level(logging.INFO, logger="causefs")
    assert _how_to_follow(True) == "its progress is logged as it runs"


def test_fetch_into_a_file_or_an_unwritable_folder_says_so_before_any_download(tmp_path,
                                                                               monkeypatch):
    import importlib

    fetch_module = importlib.import_module("causefs.datasets.fetch")

    def no_network(*args, **kwargs):
        raise AssertionError("downloaded")

    monkeypatch.setattr(fetch_module, "_download", no_network)
    (tmp_path / "file").write_text("x")
    with pytest.raises(DatasetError, match=r"data directory .*file is a file, not a "
                                           r"directory: choose another with --data-dir"):
        fetch_module.fetch("jaffe", tmp_path / "file")
    monkeypatch.setattr(fetch_module.tempfile, "TemporaryFile",
                        lambda **kw: (_ for _ in ()).throw(PermissionError(13, "Permission denied")))
    with pytest.raises(DatasetError, match=r"is not writable \(Permission denied\)"):
        fetch_module.fetch("jaffe", tmp_path / "ro")


def test_a_schedule_name_the_command_line_reads_as_a_value_is_refused(tmp_path):
    from causefs.app.config_checks import ConfigError

    with pytest.raises(ConfigError, match=r"schedule.name=nan: must be a name \(text\); .*"
                                          r"quote it, schedule.name='nan'"):
        run(composed("schedule.name=nan", "dry_run=true"), output_dir=tmp_path)


def test_faiss_import_chatter_stays_below_info(tmp_path):
    """A fresh neighbour search that loads faiss prints nothing at INFO but ours."""
    import subprocess
    import sys

    pytest.importorskip("faiss")
    code = ("import logging, sys; logging.basicConfig(level=logging.INFO, stream=sys.stdout)\n"
            "import numpy as np\n"
            "from causefs.numerics.neighbors import _hnsw_neighbors\n"
            "_hnsw_neighbors(np.random.default_rng(0).normal(size=(50, 3)), 5)\n"
            "print('faiss loaded:', 'faiss' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert "faiss loaded: True" in done.stdout, done.stderr
    assert "faiss.loader" not in done.stdout + done.stderr


@pytest.mark.parametrize("scale, problem", [(1e200, "overflow"), (1e-300, "vanish")])
def test_unscaled_data_beyond_float64s_squares_is_refused(scale, problem):
    from causefs import CauseFS

    X = np.random.default_rng(0).normal(size=(30, 4)) * scale
    with pytest.raises(ValueError, match=rf"squared distances {problem} in float64 .*"
                                         r"use preprocessing='minmax'"):
        CauseFS(n_clusters=2, preprocessing="none").fit(X)
    # scaled, the same data is fine: the check is for preprocessing='none' only
    assert CauseFS(n_clusters=2, max_iter=1).fit(X).scores_.max() > 0


def test_pandas_missing_levels_in_a_text_nuisance_are_called_missing():
    pd = pytest.importorskip("pandas")
    from causefs import CauseFS

    X = np.random.default_rng(0).normal(size=(6, 3))
    for missing in (pd.NA, pd.NaT):
        Z = np.array(["a", "b", missing, "a", "b", "a"], dtype=object)
        with pytest.raises(ValueError, match=r"nuisance column 0 has missing values .* at "
                                             r"sample 2 \(0-based; 1 in all\)"):
            CauseFS(n_clusters=2).fit(X, nuisance=Z)
