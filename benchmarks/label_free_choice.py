"""Choose CAUSE-FS's hyperparameters without labels, and compare with the label-tuned best.

    export CAUSEFS_DATA=../shared/datasets
    python benchmarks/label_free_choice.py --store results/store --datasets jaffe umist

Reads the paper grid's results (``benchmarks/paper_grid.py``: ``+experiment=paper_grid``
entries of the results store, ``sample_weights=simplex``) and, per dataset, picks the
setting by each label-free criterion of :mod:`causefs.model_selection` on the setting's
top 20 features (min-max scaled data):

    mean_rank (the library's default): the mean of the setting's ranks among the
    grid's settings under the two measures below;
    silhouette: mean silhouette of 10 seeded k-means++ partitions of the top 20;
    embedding_fit: R^2 of the fit of the cluster embedding (the c - 1 non-trivial
    Laplacian eigenvectors of the 5-NN heat-kernel graph of all features) on the top 20.

A fit whose W collapsed to the eps floor (every ||W_f||^2 < eps: its ranking is eps's,
not the model's) is not a candidate; that test reads W, not labels. The table gives the
label-tuned best (the paper's practice: the best ACC at 20 features, chosen with the
labels), each criterion's choice and its gap, in ACC points, over the settings stored.

``--measures DIR`` keeps every setting's measures in DIR (one JSON file per dataset and
top 20, written atomically), so that a run over a grid that is still growing, or one
that was stopped, measures only what it has not measured: about 6 s a setting on USPS,
one thread (the silhouettes of 9298 samples). The files belong to one version of
:mod:`causefs.model_selection`: clear DIR when it changes.

``--dev-store`` asks the same of the development benchmark's fits instead
(``benchmarks/dev_benchmark.py``'s store, the whole datasets): per dataset, which of the
selectors :data:`SELECTORS` (their default options) each criterion would pick, against
the best of them by ACC at 20 features.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np

from causefs.app.label_free import collapsed
from causefs.app.store import write_json_atomic
from causefs.datasets import load_dataset
from dev_benchmark import DATASETS, job_path, load
from causefs.model_selection import CRITERIA, LabelFreeCriterion, criterion_scores

ROOT = Path(__file__).resolve().parents[1]
TOP = 20
GRID_KEYS = ("alpha", "lam", "beta")


#: the selectors the development-benchmark check chooses among (default options each)
SELECTORS = ("causefs", "causefs:schedule=full", "variance", "laplacian_score", "mcfs",
             "ndfs", "fsdk", "vcsdfs", "cnafs")


def grid_entries(store: Path, dataset: str) -> list:
    """The stored paper-grid fits of CAUSE-FS on ``dataset`` (one per setting)."""
    entries = {}
    for path in sorted(store.glob("*.json")):
        entry = json.loads(path.read_text())
        job = entry.get("job", {})
        params = job.get("params", {})
        if (job.get("method") == "causefs" and entry["dataset"]["name"] == dataset
                and params.get("sample_weights") == "simplex" and "metrics" in entry):
            entries[tuple(params[k] for k in GRID_KEYS)] = entry
    return list(entries.values())


def measure(criterion: LabelFreeCriterion, top, kept: tuple | None) -> dict:
    """``criterion.measure(top)``, read from (or written to) the folder of ``kept`` =
    ``(folder, dataset)`` when given."""
    if kept is None:
        return criterion.measure(top)
    folder, dataset = kept
    features = [int(f) for f in top]
    key = hashlib.sha256(json.dumps([dataset, criterion.n_clusters, features])
                         .encode()).hexdigest()[:16]
    path = folder / f"{dataset}__{key}.json"
    if path.exists():
        return json.loads(path.read_text())["measures"]
    values = criterion.measure(top)
    write_json_atomic(path, {"dataset": dataset, "n_clusters": criterion.n_clusters,
                             "features": features, "measures": values})
    return values


def picks(criterion: LabelFreeCriterion, rows: list, tops: list, collapsed_rows,
          kept: tuple | None = None) -> dict:
    """Each criterion's pick among ``rows`` from the measures of their top features
    (one measuring pass: ``criterion`` is the library's ``mean_rank``, which reads both;
    ``kept``: see :func:`measure`)."""
    measured = [None if gone else measure(criterion, top, kept)
                for top, gone in zip(tops, collapsed_rows)]
    for row, values in zip(rows, measured):
        row.update(values or {})
    chosen = {}
    for name in CRITERIA:
        scores = criterion_scores(name, measured)
        chosen[name] = None if np.all(scores == -np.inf) else rows[int(np.argmax(scores))]
    return chosen


def choose(store: Path, dataset: str, measures: Path | None = None) -> dict | None:
    data = load_dataset(dataset)
    entries = grid_entries(store, dataset)
    if not entries:
        return None
    criterion = LabelFreeCriterion(data.X, int(np.unique(data.y).size))
    rows = []
    for entry in entries:
        selected = entry["metrics"]["selected"][str(TOP)]
        rows.append({"setting": {k: entry["job"]["params"][k] for k in GRID_KEYS},
                     "acc": selected["acc_mean"], "nmi": selected["nmi_mean"]})
    chosen = picks(criterion, rows, [e["features_best_first"][:TOP] for e in entries],
                   [collapsed(e) for e in entries],
                   None if measures is None else (measures, dataset))
    return {"dataset": dataset, "settings": len(rows),
            "tuned": max(rows, key=lambda r: r["acc"]), "chosen": chosen,
            "median_acc": float(np.median([r["acc"] for r in rows]))}


def among_selectors(dev_store: Path, dataset: str) -> dict | None:
    """Each criterion's pick among the stored fits of :data:`SELECTORS` on ``dataset``."""
    X, y = load(dataset)
    criterion = LabelFreeCriterion(X, int(np.unique(y).size))
    rows, tops = [], []
    for method in SELECTORS:
        path = job_path(dev_store, dataset, method, 0)
        if not path.exists():
            continue
        entry = json.loads(path.read_text())
        tops.append(entry["ranking"][:TOP])
        rows.append({"method": method, "acc": entry["scores"][str(TOP)]["acc_mean"]})
    if not rows:
        return None
    return {"best": max(rows, key=lambda r: r["acc"]), "selectors": len(rows),
            "chosen": picks(criterion, rows, tops, [False] * len(rows)),
            "median_acc": float(np.median([r["acc"] for r in rows]))}


def print_among_selectors(dev_store: Path) -> None:
    print("| dataset | selectors stored | best by ACC | "
          + " | ".join(f"{name} pick | gap" for name in CRITERIA) + " | median ACC |")
    print("|---|---|---|" + "---|---|" * len(CRITERIA) + "---|")
    gaps = {name: [] for name in CRITERIA}
    for dataset in DATASETS:
        result = among_selectors(dev_store, dataset)
        if result is None:
            continue
        best = result["best"]
        cells = [f"{best['method']} {100 * best['acc']:.2f}"]
        for name in CRITERIA:
            chosen = result["chosen"][name]
            gaps[name].append(100 * (best["acc"] - chosen["acc"]))
            cells += [f"{chosen['method']} {100 * chosen['acc']:.2f}", f"{gaps[name][-1]:.2f}"]
        print(f"| {dataset} | {result['selectors']} | " + " | ".join(cells)
              + f" | {100 * result['median_acc']:.2f} |")
    print("\nmean gap: " + ", ".join(f"{name} {np.mean(g):.2f}" for name, g in gaps.items()
                                      if g))


def fmt(setting: dict) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in setting.items())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, default=ROOT / "results" / "store")
    parser.add_argument("--datasets", nargs="+", default=["jaffe", "umist", "coil20", "usps"])
    parser.add_argument("--dev-store", type=Path, default=None,
                        help="choose among the development benchmark's selectors instead")
    parser.add_argument("--measures", type=Path, default=None,
                        help="a folder that keeps every setting's measures (resumable)")
    args = parser.parse_args()
    if args.measures is not None:
        args.measures.mkdir(parents=True, exist_ok=True)
    if args.dev_store is not None:
        print_among_selectors(args.dev_store)
        return
    print("| dataset | settings stored | label-tuned best ACC / NMI (setting) | "
          + " | ".join(f"{name} choice ACC / NMI (setting) | gap" for name in CRITERIA)
          + " | median ACC |")
    print("|---|---|---|" + "---|---|" * len(CRITERIA) + "---|")
    for dataset in args.datasets:
        result = choose(args.store, dataset, args.measures)
        if result is None:
            print(f"| {dataset} | 0 |" + " |" * (2 * len(CRITERIA) + 2))
            continue
        tuned = result["tuned"]
        cells = [f"{100 * tuned['acc']:.2f} / {100 * tuned['nmi']:.2f} ({fmt(tuned['setting'])})"]
        for name in CRITERIA:
            chosen = result["chosen"][name]
            if chosen is None:  # nothing to choose from
                cells += ["every stored fit collapsed", ""]
                continue
            cells += [f"{100 * chosen['acc']:.2f} / {100 * chosen['nmi']:.2f} "
                      f"({fmt(chosen['setting'])})",
                      f"{100 * (tuned['acc'] - chosen['acc']):.2f}"]
        print(f"| {dataset} | {result['settings']} | " + " | ".join(cells)
              + f" | {100 * result['median_acc']:.2f} |")


if __name__ == "__main__":
    main()
