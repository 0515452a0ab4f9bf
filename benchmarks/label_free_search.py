"""The default's own hyperparameters chosen without labels, on the development benchmark.

    export CAUSEFS_DATA=../shared/datasets
    python benchmarks/label_free_search.py --store results/label_free_search
    python benchmarks/label_free_search.py --store results/label_free_search --report-only
    python benchmarks/label_free_search.py --store results/label_free_search --resamples 4

Per dataset of ``dev_benchmark.py`` (its loader: min-max scaled), one
:class:`causefs.model_selection.LabelFreeSearch` over the default CauseFS (``ablation_I``)
with the grid :data:`GRID` (alpha and the number of neighbours; the default, alpha = 1
with 5 neighbours, is one of its settings), fixed before the run; the criterion reads the
top 20 features. Every setting's top 20 is then scored with the labels by the benchmark's
protocol (k-means++ 20 times, ACC/NMI), which gives the label-tuned best over the same
grid. The search runs with the library's default criterion (``mean_rank``), which
measures every setting's top 20 by the silhouette and by the embedding fit, so one run
gives the choice of every criterion of :data:`causefs.model_selection.CRITERIA`
(:func:`~causefs.model_selection.criterion_scores` on the stored measures). The table:
the default, each criterion's choice, the label-tuned best, and the gaps in ACC points.

``--resamples R`` repeats every dataset on the development benchmark's seeded 80 %
subsamples 1..R-1 (``dev_benchmark.resample``, the same rows as its tables; resample 0 is
the whole dataset), and the table gains a summary per resample: a criterion's choice
checked where the grid's settings were not looked at. ``mean_rank`` was fixed before
the subsamples were run (from the whole datasets and the paper grids of JAFFE, UMIST and
COIL20, where it is not evidence); docs/RESULTS.md tells the order of events.

One JSON file per dataset and resample under ``--store``, written atomically (a finished
one is skipped: the run resumes).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from causefs import CauseFS
from causefs.app.metrics import kmeans_scores
from causefs.app.provenance import source_sha256, vcs_revision
from causefs.app.store import write_json_atomic
from causefs.model_selection import MEASURES, LabelFreeSearch, criterion_scores

from dev_benchmark import DATASETS, N_RUNS, load, resample

ROOT = Path(__file__).resolve().parents[1]
GRID = {"alpha": [0.1, 1.0, 10.0, 100.0], "n_neighbors": [5, 10]}
DEFAULT = {"alpha": 1.0, "n_neighbors": 5}
TOP = 20
#: the criteria compared and their labels in the table
LABELS = {"mean_rank": "mean rank's choice (the default criterion)",
          "silhouette": "silhouette's choice", "embedding_fit": "embedding fit's choice"}


def run_dataset(dataset: str, number: int = 0) -> dict:
    X, y = resample(*load(dataset), number)
    n_clusters = int(np.unique(y).size)
    k = min(TOP, X.shape[1])
    search = LabelFreeSearch(CauseFS(n_clusters=n_clusters, n_features_to_select=k),
                             GRID, n_features_to_select=k).fit(X)
    settings = []
    for index, params in enumerate(search.results_["params"]):
        features = search.results_["features"][index]
        settings.append({
            "params": params, "collapsed": search.results_["collapsed"][index],
            **{name: search.results_[name][index] for name in MEASURES["mean_rank"]},
            "fit_seconds": search.results_["fit_seconds"][index],
            "features": features.tolist(),
            "scores": kmeans_scores(X[:, features], y, n_runs=N_RUNS)})
    return {"dataset": dataset, "resample": number, "grid": GRID, "top": k,
            "best_index": search.best_index_, "settings": settings,
            "source_sha256": source_sha256(), "vcs_revision": vcs_revision()}


def store_path(store: Path, dataset: str, number: int) -> Path:
    return store / (f"{dataset}.json" if number == 0 else f"{dataset}__resample{number}.json")


def row(result: dict) -> dict:
    settings = result["settings"]
    acc = [s["scores"]["acc_mean"] for s in settings]
    default = next(i for i, s in enumerate(settings) if s["params"] == DEFAULT)
    tuned = int(np.argmax(acc))
    measured = [None if s["collapsed"] else s for s in settings]
    picks = {name: int(np.argmax(criterion_scores(name, measured))) for name in LABELS}
    return {"default": acc[default], "tuned": acc[tuned],
            "tuned_params": settings[tuned]["params"],
            "picks": {name: (acc[i], settings[i]["params"]) for name, i in picks.items()},
            "seconds": sum(s["fit_seconds"] for s in settings)}


def fmt(params: dict) -> str:
    return ", ".join(f"{key}={value:g}" for key, value in params.items())


def report(store: Path, datasets, resamples: int = 1) -> str:
    parts, pooled = [], {}
    for number in range(resamples):
        rows = {}
        for dataset in datasets:
            path = store_path(store, dataset, number)
            if path.exists():
                rows[dataset] = row(json.loads(path.read_text()))
        title = ("the whole datasets" if number == 0
                 else f"resample {number} (a seeded 80 % subsample)")
        parts += [f"### {title}\n", table(rows), "", summary(rows), ""]
        if number:
            pooled.update({f"{dataset} #{number}": r for dataset, r in rows.items()})
    if resamples > 2:
        parts += [f"### the subsamples together ({len(pooled)} comparisons)\n",
                  summary(pooled), ""]
    return "\n".join(parts)


def table(rows: dict) -> str:
    lines = ["| dataset | default | " + " | ".join(f"{label} (setting) | gap to tuned"
                                                   for label in LABELS.values())
             + " | label-tuned best (setting) | fits (s) |",
             "|---|---|" + "---|---|" * len(LABELS) + "---|---|"]
    for dataset, r in rows.items():
        cells = []
        for name in LABELS:
            acc, params = r["picks"][name]
            cells += [f"{100 * acc:.2f} ({fmt(params)})", f"{100 * (r['tuned'] - acc):.2f}"]
        lines.append(f"| {dataset} | {100 * r['default']:.2f} | " + " | ".join(cells)
                     + f" | {100 * r['tuned']:.2f} ({fmt(r['tuned_params'])}) | "
                     f"{r['seconds']:.0f} |")
    return "\n".join(lines)


def summary(rows: dict) -> str:
    if not rows:
        return "(nothing stored)"
    lines = []
    for name, label in LABELS.items():
        gap = 100 * np.array([r["tuned"] - r["picks"][name][0] for r in rows.values()])
        gain = 100 * np.array([r["picks"][name][0] - r["default"] for r in rows.values()])
        lines.append(f"- {label}: within 2 ACC points of the label-tuned best on "
                     f"{int((gap <= 2).sum())} of {len(rows)}, mean gap {gap.mean():.2f}, "
                     f"median {np.median(gap):.2f}; against the default "
                     f"{int((gain > 0).sum())} better, {int((gain < 0).sum())} worse, "
                     f"mean {gain.mean():+.2f} points.")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, default=ROOT / "results" / "label_free_search")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--resamples", type=int, default=1,
                        help="the whole datasets and resamples 1..R-1 (dev_benchmark's)")
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    args.store.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        for number in range(args.resamples):
            for dataset in args.datasets:
                path = store_path(args.store, dataset, number)
                if not path.exists():
                    write_json_atomic(path, run_dataset(dataset, number))
                    print(f"{dataset} resample {number}: done", flush=True)
    print(report(args.store, args.datasets, args.resamples))


if __name__ == "__main__":
    main()
