"""causefs-report --choose: a swept grid's setting chosen without labels, from the store.

The report reloads the data each run was fitted on (checked by its content hash), scores
every setting's top features by a criterion of ``causefs.model_selection`` and keeps the
highest; checked against scores computed here from the criterion's definition on data
scaled by scikit-learn, and, through the command line, against ``LabelFreeSearch`` on the
same data and grid.
"""

import json
import subprocess
import sys

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.metrics import silhouette_score
from sklearn.preprocessing import MinMaxScaler

from causefs import CauseFS, LabelFreeSearch
from causefs.app.report import main, report
from causefs.app.store import ResultStore, StoreError, job_key
from causefs.datasets import load_file

N_CLUSTERS = 3
TOP = 4


def clustered_csv(tmp_path, seed=0, labels=False):
    """90 samples: features 0-3 hold 3 well-separated clusters, 4-11 are noise."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(N_CLUSTERS), 30)
    X = rng.normal(size=(90, 12))
    X[:, :4] += 6.0 * y[:, None]
    path = tmp_path / "data.csv"
    columns = [X, y[:, None]] if labels else [X]
    header = ",".join([f"f{i}" for i in range(12)] + (["label"] if labels else []))
    np.savetxt(path, np.hstack(columns), delimiter=",", header=header, comments="")
    return path


def entry(path, alpha, best_first, *, scores=None, eps=1e-8, acc=None):
    """A CAUSE-FS result of ``alpha`` on the file at ``path``, in result.json's layout."""
    data = load_file(path, label_column=-1 if acc is not None else None)
    spec = {"name": "file", "label_column": -1 if acc is not None else None, "nuisance": None}
    job = {"dataset": {**spec, "sha256": data.sha256()}, "method": "causefs",
           "params": {"alpha": alpha}, "n_clusters": N_CLUSTERS, "preprocessing": "minmax",
           "n_features_to_select": TOP, "random_state": 0,
           "evaluation": {"enabled": True, "rhos": [TOP], "n_runs": 2, "seed": 0,
                          "nmi_average": "arithmetic", "all_features": False}}
    if scores is None:  # the order best_first, well above eps
        scores = np.zeros(12)
        scores[list(best_first)] = np.linspace(1.0, 0.5, len(best_first))
    metrics = None if acc is None else {"selected": {str(TOP): {
        "acc_mean": acc, "acc_std": 0.0, "nmi_mean": acc / 2, "nmi_std": 0.0, "n_runs": 2,
        "features": TOP}}}
    return {"job": job, "key": job_key(job), "config": {"dataset": {**spec, "path": str(path)}},
            "scores": list(scores), "features_best_first": list(best_first),
            "selected_features": list(best_first[:TOP]), "metrics": metrics,
            "details": {"settings": {"eps": eps}},
            "dataset": {"name": "data", "source": str(path), "image_shape": None}}


def stored(tmp_path, *entries):
    store = ResultStore(tmp_path / "store")
    for e in entries:
        store.put(e["key"], e)
    return store.root


CLUSTER_FIRST = [0, 1, 2, 3, *range(4, 12)]
NOISE_FIRST = [*range(4, 12), 0, 1, 2, 3]
MIXED = [0, 4, 5, 6, 1, 2, 3, *range(7, 12)]


def silhouette_by_hand(path, features):
    """The silhouette criterion from its definition: the mean silhouette of ten k-means++
    partitions (seeds drawn from seed 0) of the min-max scaled columns."""
    X = MinMaxScaler().fit_transform(np.loadtxt(path, delimiter=",", skiprows=1)[:, :12])
    Xs = X[:, features]
    seeds = np.random.default_rng(0).integers(2**31 - 1, size=10)
    return np.mean([silhouette_score(Xs, KMeans(N_CLUSTERS, n_init=1, random_state=s)
                                     .fit_predict(Xs)) for s in seeds])


def test_the_setting_whose_top_features_separate_clusters_is_chosen(tmp_path):
    path = clustered_csv(tmp_path)
    entries = [entry(path, 0.1, NOISE_FIRST), entry(path, 1.0, CLUSTER_FIRST),
               entry(path, 10.0, MIXED)]
    text = report(stored(tmp_path, *entries), tmp_path / "out", rho=TOP, with_figures=False,
                  tune=("alpha",), choose="silhouette")
    records = json.loads((tmp_path / "out" / "label_free_choice.json").read_text())
    assert len(records) == 1 and records[0]["chosen"] == entries[1]["key"]
    by_key = {r["key"]: r["score"] for r in records[0]["scored"]}
    for e in entries:
        expected = silhouette_by_hand(path, e["features_best_first"][:TOP])
        assert by_key[e["key"]] == pytest.approx(expected, abs=1e-12)
    assert f"alpha=1 ([run](runs/{entries[1]['key']}.md))" in text and "no labels" in text


def test_a_collapsed_fit_is_never_chosen_and_labels_only_measure_the_choice(tmp_path):
    path = clustered_csv(tmp_path, labels=True)
    tiny = np.zeros(12)
    tiny[CLUSTER_FIRST] = np.linspace(1e-5, 1e-6, 12)  # ||W_f||^2 < eps: collapsed
    entries = [entry(path, 0.1, CLUSTER_FIRST, scores=tiny, acc=0.95),
               entry(path, 1.0, MIXED, acc=0.70), entry(path, 10.0, NOISE_FIRST, acc=0.40)]
    text = report(stored(tmp_path, *entries), tmp_path / "out", rho=TOP, with_figures=False,
                  tune=("alpha",), choose="silhouette")
    record = json.loads((tmp_path / "out" / "label_free_choice.json").read_text())[0]
    assert record["chosen"] == entries[1]["key"]
    by_key = {r["key"]: r["score"] for r in record["scored"]}
    assert by_key[entries[0]["key"]] is None  # the collapsed fit
    row = next(line for line in text.splitlines() if "([run]" in line)
    # the chosen setting's ACC/NMI, the label-tuned best over all settings, and the gap
    assert "3 (1 collapsed)" in row and "| 70.00 / 35.00 |" in row
    assert "| 95.00 (alpha=0.1) | 25.00 |" in row


def test_every_fit_collapsed_is_said(tmp_path):
    path = clustered_csv(tmp_path)
    tiny = np.full(12, 1e-6)
    entries = [entry(path, a, CLUSTER_FIRST, scores=tiny) for a in (0.1, 1.0)]
    text = report(stored(tmp_path, *entries), tmp_path / "out", rho=TOP, with_figures=False,
                  tune=("alpha",), choose="silhouette")
    assert "every fit collapsed" in text
    assert json.loads((tmp_path / "out" / "label_free_choice.json").read_text())[0][
        "chosen"] is None


def test_data_that_changed_since_the_runs_is_refused(tmp_path):
    path = clustered_csv(tmp_path)
    entries = [entry(path, a, CLUSTER_FIRST) for a in (0.1, 1.0)]
    root = stored(tmp_path, *entries)
    clustered_csv(tmp_path, seed=1)  # the file rewritten with other values
    with pytest.raises(StoreError, match="content hash differs"):
        report(root, tmp_path / "out", rho=TOP, with_figures=False, tune=("alpha",),
               choose="silhouette")


@pytest.mark.parametrize("args, message", [
    (["--choose", "silhouette"], "--choose needs --tune"),
    (["--tune", "alpha", "--choose", "stability"], "invalid choice: 'stability'"),
])
def test_the_command_refuses_a_choice_it_cannot_make(tmp_path, capsys, args, message):
    path = clustered_csv(tmp_path)
    root = stored(tmp_path, entry(path, 0.1, CLUSTER_FIRST), entry(path, 1.0, NOISE_FIRST))
    with pytest.raises(SystemExit) as exit_:
        main(["--store", str(root), "--out", str(tmp_path / "out"), "--no-figures", *args])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_a_command_line_sweep_chooses_what_label_free_search_chooses(tmp_path):
    """The same data, grid and criterion by the two routes: a sweep of the command line
    and ``causefs-report --choose``, and ``LabelFreeSearch`` in Python (both with the
    default criterion, whose scores are ranks among the settings)."""
    path = clustered_csv(tmp_path)
    store = tmp_path / "store"
    run = subprocess.run(
        [sys.executable, "-m", "causefs.app.cli", "-m", "dataset=file",
         f"dataset.path={path}", f"n_clusters={N_CLUSTERS}", f"n_features_to_select={TOP}",
         f"evaluation.rhos=[{TOP}]", "method.alpha=0.01,1,100",
         "store.enabled=true", f"store.dir={store}", f"hydra.sweep.dir={tmp_path / 'runs'}"],
        capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    report(store, tmp_path / "out", rho=TOP, with_figures=False, tune=("alpha",),
           choose="mean_rank")  # the default criterion of LabelFreeSearch
    record = json.loads((tmp_path / "out" / "label_free_choice.json").read_text())[0]
    X = np.loadtxt(path, delimiter=",", skiprows=1)
    search = LabelFreeSearch(CauseFS(n_clusters=N_CLUSTERS, n_features_to_select=TOP,
                                     random_state=0),
                             {"alpha": [0.01, 1.0, 100.0]}).fit(X)
    from_store = {float(r["setting"].split("=")[1]): r["score"] for r in record["scored"]}
    from_search = {p["alpha"]: None if s == -np.inf else s  # collapsed: None, -inf
                   for p, s in zip(search.results_["params"], search.results_["score"])}
    assert from_store == pytest.approx(from_search, abs=1e-12)
    chosen = next(r for r in record["scored"] if r["key"] == record["chosen"])
    assert float(chosen["setting"].split("=")[1]) == search.best_params_["alpha"]
