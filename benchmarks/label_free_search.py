"""The default's own hyperparameters chosen without labels, on the development benchmark.

    export CAUSEFS_DATA=../shared/datasets
    python benchmarks/label_free_search.py --store results/label_free_search
    python benchmarks/label_free_search.py --store results/label_free_search --report-only

Per dataset of ``dev_benchmark.py`` (its loader: min-max scaled), one
:class:`causefs.model_selection.LabelFreeSearch` over the default CauseFS (``ablation_I``)
with the grid :data:`GRID` (alpha and the number of neighbours; the default, alpha = 1
with 5 neighbours, is one of its settings), fixed before the run; the criterion reads the
top 20 features. Every setting's top 20 is then scored with the labels by the benchmark's
protocol (k-means++ 20 times, ACC/NMI), which gives the label-tuned best over the same
grid. The table: the default, the label-free choice (``embedding_fit``, the library's
default criterion), the silhouette's choice (computed from the same stored selections),
the label-tuned best, and the gap in ACC points.

One JSON file per dataset under ``--store``, written atomically (a finished dataset is
skipped: the run resumes).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from causefs import CauseFS
from causefs.app.metrics import kmeans_scores
from causefs.app.provenance import source_sha256, vcs_revision
from causefs.app.store import write_json_atomic
from causefs.model_selection import LabelFreeSearch, silhouette

from dev_benchmark import DATASETS, N_RUNS, load

ROOT = Path(__file__).resolve().parents[1]
GRID = {"alpha": [0.1, 1.0, 10.0, 100.0], "n_neighbors": [5, 10]}
DEFAULT = {"alpha": 1.0, "n_neighbors": 5}
TOP = 20


def run_dataset(dataset: str) -> dict:
    X, y = load(dataset)
    n_clusters = int(np.unique(y).size)
    k = min(TOP, X.shape[1])
    search = LabelFreeSearch(CauseFS(n_clusters=n_clusters, n_features_to_select=k),
                             GRID, n_features_to_select=k).fit(X)
    settings = []
    for index, params in enumerate(search.results_["params"]):
        features = search.results_["features"][index]
        settings.append({
            "params": params, "embedding_fit": search.results_["score"][index],
            "collapsed": search.results_["collapsed"][index],
            "silhouette": (-math.inf if search.results_["collapsed"][index]
                           else silhouette(X, features, n_clusters)),
            "fit_seconds": search.results_["fit_seconds"][index],
            "features": features.tolist(),
            "scores": kmeans_scores(X[:, features], y, n_runs=N_RUNS)})
    return {"dataset": dataset, "grid": GRID, "top": k, "best_index": search.best_index_,
            "settings": settings, "source_sha256": source_sha256(),
            "vcs_revision": vcs_revision()}


def row(result: dict) -> dict:
    settings = result["settings"]
    acc = [s["scores"]["acc_mean"] for s in settings]
    default = next(i for i, s in enumerate(settings) if s["params"] == DEFAULT)
    chosen = int(np.argmax([s["embedding_fit"] for s in settings]))
    by_silhouette = int(np.argmax([s["silhouette"] for s in settings]))
    tuned = int(np.argmax(acc))
    return {"default": acc[default], "chosen": acc[chosen], "silhouette": acc[by_silhouette],
            "tuned": acc[tuned], "chosen_params": settings[chosen]["params"],
            "tuned_params": settings[tuned]["params"],
            "seconds": sum(s["fit_seconds"] for s in settings)}


def fmt(params: dict) -> str:
    return ", ".join(f"{key}={value:g}" for key, value in params.items())


def report(store: Path, datasets) -> str:
    lines = ["| dataset | default | label-free choice (embedding fit) | silhouette's choice "
             "| label-tuned best | gap to tuned | choice - default | fits (s) |",
             "|---|---|---|---|---|---|---|---|"]
    rows = {}
    for dataset in datasets:
        path = store / f"{dataset}.json"
        if not path.exists():
            continue
        r = rows[dataset] = row(json.loads(path.read_text()))
        lines.append(
            f"| {dataset} | {100 * r['default']:.2f} | {100 * r['chosen']:.2f} "
            f"({fmt(r['chosen_params'])}) | {100 * r['silhouette']:.2f} | "
            f"{100 * r['tuned']:.2f} ({fmt(r['tuned_params'])}) | "
            f"{100 * (r['tuned'] - r['chosen']):.2f} | {100 * (r['chosen'] - r['default']):+.2f}"
            f" | {r['seconds']:.0f} |")
    if rows:
        gap = np.array([r["tuned"] - r["chosen"] for r in rows.values()]) * 100
        gain = np.array([r["chosen"] - r["default"] for r in rows.values()]) * 100
        sil_gap = np.array([r["tuned"] - r["silhouette"] for r in rows.values()]) * 100
        lines.append("")
        lines.append(f"{len(rows)} datasets: the label-free choice within 2 ACC points of "
                     f"the label-tuned best on {int((gap <= 2).sum())}, mean gap "
                     f"{gap.mean():.2f} (silhouette's choice: {int((sil_gap <= 2).sum())}, "
                     f"{sil_gap.mean():.2f}); against the default: "
                     f"{int((gain > 0).sum())} better, {int((gain < 0).sum())} worse, mean "
                     f"{gain.mean():+.2f} points.")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, default=ROOT / "results" / "label_free_search")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    args.store.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        for dataset in args.datasets:
            path = args.store / f"{dataset}.json"
            if not path.exists():
                write_json_atomic(path, run_dataset(dataset))
                print(f"{dataset}: done", flush=True)
    print(report(args.store, args.datasets))


if __name__ == "__main__":
    main()
