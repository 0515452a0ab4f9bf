"""causefs-report names rows by what ran, says "tuned on labels" only for a grid it is
asked to tune over, and never puts rows of different protocols in one table."""

import json

import numpy as np
import pytest

from causefs.app.report import collect, main, report, row_label
from causefs.app.store import ResultStore, job_key

CODE = {"version": "0.1.0", "source_sha256": "a" * 64, "plugins": {}}


def entry(acc, method="causefs", params=None, n_runs=50, dataset="jaffe", code=CODE, seed=0):
    job = {"dataset": {"name": dataset, "sha256": "0" * 64}, "code": code,
           "n_features_to_select": 20, "method": method, "params": params or {},
           "n_clusters": 10, "preprocessing": "minmax", "random_state": seed,
           "evaluation": {"enabled": True, "rhos": [20], "n_runs": n_runs, "seed": 0,
                          "nmi_average": "arithmetic", "all_features": False}}
    table = {"20": {"acc_mean": acc, "acc_std": 0.01, "nmi_mean": acc / 2, "nmi_std": 0.01,
                    "n_runs": n_runs, "features": 20}}
    return {"job": job, "scores": [], "features_best_first": [], "selected_features": [],
            "metrics": {"selected": table}, "dataset": {"image_shape": None}}


def stored(tmp_path, *entries):
    store = ResultStore(tmp_path / "store")
    for e in entries:
        store.put(job_key(e["job"]), e)
    return store.root


def test_rows_are_named_by_the_settings_that_differ_from_the_defaults():
    assert row_label(entry(0.8)) == "CAUSE-FS"
    assert row_label(entry(0.8, params={"max_iter": 3})) == "CAUSE-FS (max_iter=3)"
    assert row_label(entry(0.8, params={"max_iter": 30, "alpha": 1.0})) == "CAUSE-FS"
    assert (row_label(entry(0.8, params={"alpha": 10.0, "kernel": {"name": "rbf"}}))
            == "CAUSE-FS (alpha=10, kernel=rbf)")
    assert row_label(entry(0.8, "mcfs", {"n_neighbors": 10})) == "MCFS (n_neighbors=10)"
    assert row_label(entry(0.8, "laplacian_score", {"n_neighbors": 5})) == "LapScore"


def test_a_small_sweep_is_not_called_tuned_on_labels(tmp_path):
    root = stored(tmp_path, entry(0.60, params={"max_iter": 3, "alpha": 0.1}),
                  entry(0.70, params={"max_iter": 3, "alpha": 10.0}))
    text = report(root, tmp_path / "out", with_figures=False)
    assert "tuned" not in text
    assert "| CAUSE-FS (alpha=0.1, max_iter=3) |" in text
    assert "| CAUSE-FS (alpha=10, max_iter=3) |" in text


def test_a_grid_asked_for_is_one_row_tuned_on_labels(tmp_path):
    grid = [entry(acc, params={"alpha": a, "lam": l}) for acc, a, l in
            [(0.5, 0.1, 0.1), (0.9, 10.0, 0.1), (0.7, 0.1, 10.0), (0.6, 10.0, 10.0)]]
    other = entry(0.4, params={"alpha": 10.0, "max_iter": 3})
    root = stored(tmp_path, *grid, other)
    text = report(root, tmp_path / "out", with_figures=False, tune=("alpha", "lam"))
    assert "| CAUSE-FS (tuned on labels over alpha, lam: best of 4) | **90.00 ± 1.00** |" in text
    assert "| CAUSE-FS (alpha=10, max_iter=3) | 40.00 ± 1.00 |" in text  # not in the grid
    rows = collect([*grid, other], tune=("alpha", "lam"))
    assert sum(len(per) for table in rows.values() for per in table.values()) == 2


def test_rows_of_another_protocol_go_to_a_table_of_their_own(tmp_path):
    root = stored(tmp_path, entry(0.80), entry(0.95, method="spec", n_runs=5))
    text = report(root, tmp_path / "out", with_figures=False)
    paper, _, other = text.partition("k-means x 5 runs")
    assert "k-means x 50 runs" in paper and "| CAUSE-FS |" in paper
    assert "paper: CAUSE-FS" in paper and "SPEC" not in paper
    assert "| SPEC | **95.00 ± 1.00** |" in other and "paper:" not in other
    assert "| CAUSE-FS |" not in other


def test_results_of_two_code_versions_are_told_apart(tmp_path):
    newer = {**CODE, "source_sha256": "b" * 64}
    root = stored(tmp_path, entry(0.80), entry(0.85, code=newer))
    text = report(root, tmp_path / "out", with_figures=False)
    assert f"| CAUSE-FS [code.source_sha256={'a' * 12}] | 80.00" in text
    assert f"| CAUSE-FS [code.source_sha256={'b' * 12}] | **85.00" in text


def test_the_command_takes_the_grid_to_tune(tmp_path, capsys):
    root = stored(tmp_path, entry(0.5, params={"beta": 1.0}), entry(0.6, params={"beta": 2.0}))
    main(["--store", str(root), "--out", str(tmp_path / "out"), "--no-figures",
          "--tune", "beta"])
    assert "CAUSE-FS (tuned on labels over beta: best of 2) | **60.00" in capsys.readouterr().out
    csv = (tmp_path / "out" / "tables.csv").read_text().splitlines()
    assert csv[0].split(",")[7:10] == ["n_runs", "nmi_average", "preprocessing"]
    assert any(line.startswith("CAUSE-FS (beta=2),jaffe,20,") for line in csv)


def test_a_misspelt_option_to_tune_is_refused(tmp_path, capsys):
    root = stored(tmp_path, entry(0.5, params={"beta": 1.0}), entry(0.6, params={"beta": 2.0}))
    with pytest.raises(SystemExit) as exit_:
        main(["--store", str(root), "--out", str(tmp_path / "out"), "--no-figures",
              "--tune", "beta,bta"])
    assert exit_.value.code == 2
    assert "causefs-report: error: tune=bta: no result in" in capsys.readouterr().err


@pytest.mark.parametrize("tune", [(), ("alpha",)])
def test_a_single_result_keeps_its_full_name(tune):
    rows = collect([entry(0.5, params={"alpha": 3.0})], tune=tune)
    (table,) = rows.values()
    assert list(table) == ["CAUSE-FS (alpha=3)"]


# ---- the report of every run, labels or not (issue 25, item 1) ----

from causefs.app.report import report_result_file  # noqa: E402
from causefs.app.run_report import run_markdown, write_run_report  # noqa: E402


def unlabeled(key_seed=0, **details):
    """A result of a run on data without labels, in result.json's layout."""
    job = {"dataset": {"name": "story", "sha256": f"{key_seed:064d}"}, "method": "causefs",
           "params": {}, "evaluation": {"enabled": True, "rhos": [3]}}
    rows = [{"iteration": 0, "objective": 3.0, "terms": {"regression": 2.0, "fusion": 1.0},
             "structure_changed": False},
            {"iteration": 1, "objective": -1.0, "terms": {"regression": 1.0, "fusion": -2.0},
             "structure_changed": True}]
    return {"job": job, "key": job_key(job), "scores": [0.1, 0.9, 0.5, 0.3],
            "features_best_first": [1, 2, 3, 0], "selected_features": [1, 2, 3],
            "metrics": None, "details": {"objective_by_iteration": rows, **details},
            "dataset": {"name": "story", "n_samples": 30, "n_features": 4, "n_classes": None,
                        "image_shape": None, "feature_names": ["a", "b", "c", "d"]}}


def test_a_store_without_labels_gets_a_report_of_every_run(tmp_path, capsys):
    root = stored(tmp_path, unlabeled(0), unlabeled(1))
    main(["--store", str(root), "--out", str(tmp_path / "out")])
    text = capsys.readouterr().out
    assert "no labels" in text and text.count("](runs/") == 2
    runs = sorted((tmp_path / "out" / "runs").iterdir())
    assert [p.suffix for p in runs] == [".md", ".png", ".md", ".png"]
    markdown = runs[0].read_text()
    assert "| 1 | 1 | b | 0.9 |" in markdown and "| 3 | 3 | d | 0.3 |" in markdown
    assert "| 1* | -1 | 1 | -2 |" in markdown  # the objective by term, structure marked


def test_per_feature_details_are_shown_when_present_and_only_then():
    plain = run_markdown(unlabeled())
    assert "selection frequency" not in plain and "nuisance share" not in plain
    given = run_markdown(unlabeled(selection_frequency=[0.0, 1.0, 0.8, 0.4],
                                   nuisance_share=[0.5, 0.1, 0.2, 0.9],
                                   nuisance_share_adjusted=[0.4, 0.05, 0.1, 0.3],
                                   carries_clusters=[True, True, True, False]))
    assert "| rank | column | name | score | selection frequency | nuisance share | " \
           "nuisance share (adjusted) | carries the clusters |" in given
    assert "| 1 | 1 | b | 0.9 | 1.000 | 0.100 | 0.050 | yes |" in given
    assert "| 3 | 3 | d | 0.3 | 0.400 | 0.900 | 0.300 | no |" in given


def test_the_figure_draws_each_per_feature_detail_and_the_pixels(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib.image

    result = unlabeled(selection_frequency=[0.0, 1.0, 0.8, 0.4])
    result["dataset"]["image_shape"] = [2, 2]
    plain = write_run_report(unlabeled(), tmp_path / "a")[1]
    full = write_run_report(result, tmp_path / "b", X=np.eye(4))[1]
    # one panel per part: scores, objective (+ frequency + pixels): the width says so
    assert matplotlib.image.imread(full).shape[1] == 2 * matplotlib.image.imread(plain).shape[1]


def test_one_result_file_is_reported_and_a_file_that_is_not_one_is_refused(tmp_path,
                                                                           capsys):
    path = tmp_path / "kept.json"
    path.write_text(json.dumps(unlabeled()))
    assert "| 2 | 2 | c | 0.5 |" in report_result_file(path, tmp_path / "out",
                                                      with_figures=False)
    (tmp_path / "other.json").write_text("[1, 2]")
    with pytest.raises(SystemExit) as stop:
        main(["--result", str(tmp_path / "other.json"), "--out", str(tmp_path / "o")])
    assert stop.value.code == 2
    assert "other.json: not a causefs result" in capsys.readouterr().err


def test_figures_without_a_curve_to_draw_have_no_legend_and_no_error(tmp_path):
    """Results with nothing to draw against the number of features (a store of
    unlabeled or one-rho runs) still get their figures; the shared legend is left out
    (an empty one was an error: 'number sections must be larger than 0')."""
    pytest.importorskip("matplotlib")
    from causefs.app.report import figures

    written = figures([], {}, tmp_path)
    assert {p.name for p in written} >= {"acc_vs_features.png", "nmi_vs_features.png"}


def test_a_legend_wider_than_its_panels_is_saved_whole(tmp_path, monkeypatch):
    """One dataset's panel (4 inches) and a tuned row's label longer than that: the saved
    image is at least as wide as the legend (it was cut at the panel's edges)."""
    pytest.importorskip("matplotlib")
    import matplotlib.image

    from causefs.app import report as report_module

    label = ("CAUSE-FS (full) (sample_weights=simplex) (tuned on labels over alpha, beta, "
             "lam: best of 294)")
    selected = {str(k): {"acc_mean": 0.5 + k / 1000, "nmi_mean": 0.4} for k in (20, 40)}
    rows = {label: {"usps": {"metrics": {"selected": selected}}}}
    legend_widths = []
    save = report_module._save

    def measured(fig, path, plt, rect=None):
        renderer = fig.canvas.get_renderer()
        legend_widths.append(fig.legends[0].get_window_extent(renderer).width)
        return save(fig, path, plt, rect)

    monkeypatch.setattr(report_module, "_save", measured)
    written = report_module.figures([], rows, tmp_path)
    curves = [p for p in written if p.name.endswith("_vs_features.png")]
    assert len(curves) == 2 and len(legend_widths) >= 2
    for path, width in zip(curves, legend_widths):
        assert width > 4 * 120  # wider than the panel: the case this test is about
        assert matplotlib.image.imread(path).shape[1] >= width


def test_a_skipped_entry_among_good_ones_is_one_warning_line(tmp_path):
    import subprocess
    import sys

    root = stored(tmp_path, entry(0.5, params={"beta": 1.0}), entry(0.6, params={"beta": 2.0}))
    good = sorted(root.glob("*.json"))[0]
    (root / "00000000000000aa.json").write_text(good.read_text()[:300])
    out = subprocess.run([sys.executable, "-m", "causefs.app.report", "--store", str(root),
                          "--out", str(tmp_path / "out"), "--no-figures"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    assert out.stderr.splitlines() == [
        f"causefs-report: warning: StoreWarning: skipped invalid store entry "
        f"{root / '00000000000000aa.json'}: not valid JSON "
        + out.stderr.split(": not valid JSON ", 1)[1].strip()]
