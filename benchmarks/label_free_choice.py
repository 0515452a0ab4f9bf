"""Choose CAUSE-FS's hyperparameters without labels, and compare with the label-tuned best.

    export CAUSEFS_DATA=../shared/datasets
    python benchmarks/label_free_choice.py --store results/store --datasets jaffe umist

Reads the paper grid's results (``benchmarks/paper_grid.py``: ``+experiment=paper_grid``
entries of the results store, ``sample_weights=simplex``) and, per dataset, picks the
setting by a criterion that uses no labels:

    silhouette: k-means++ (c clusters, seeds 0..9) on the setting's top 20 features
    (min-max scaled data); the mean silhouette of the 10 partitions.

A fit whose W collapsed to the eps floor (every ||W_f||^2 < eps: its ranking is eps's,
not the model's) is not a candidate; that test reads W, not labels. The table gives the
label-tuned best (the paper's practice: the best ACC at 20 features, chosen with the
labels), the label-free choice and the gap, in ACC points, over the settings stored.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import silhouette_score

from causefs.datasets import load_dataset
from causefs.numerics.scaling import scale_features

ROOT = Path(__file__).resolve().parents[1]
TOP = 20
N_PARTITIONS = 10
GRID_KEYS = ("alpha", "lam", "beta")


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


def silhouette(X, features, n_clusters: int) -> float:
    """Mean silhouette of :data:`N_PARTITIONS` seeded k-means++ partitions of
    ``X[:, features]`` (-1 where k-means finds fewer than 2 clusters)."""
    Xs = X[:, features]
    values = []
    for seed in range(N_PARTITIONS):
        labels = KMeans(n_clusters=n_clusters, n_init=1, random_state=seed).fit_predict(Xs)
        values.append(silhouette_score(Xs, labels) if np.unique(labels).size > 1 else -1.0)
    return float(np.mean(values))


def collapsed(entry) -> bool:
    scores = np.asarray(entry["scores"], dtype=float)
    eps = entry["job"]["params"].get("eps", 1e-8)
    return bool(np.max(scores) ** 2 < eps)


def choose(store: Path, dataset: str) -> dict | None:
    data = load_dataset(dataset)
    X = scale_features(np.asarray(data.X, dtype=float))
    n_clusters = int(np.unique(data.y).size)
    entries = grid_entries(store, dataset)
    if not entries:
        return None
    rows = []
    for entry in entries:
        acc = entry["metrics"]["selected"][str(TOP)]["acc_mean"]
        criterion = (-np.inf if collapsed(entry)
                     else silhouette(X, entry["features_best_first"][:TOP], n_clusters))
        rows.append({"setting": {k: entry["job"]["params"][k] for k in GRID_KEYS},
                     "acc": acc, "nmi": entry["metrics"]["selected"][str(TOP)]["nmi_mean"],
                     "criterion": criterion})
    tuned = max(rows, key=lambda r: r["acc"])
    chosen = max(rows, key=lambda r: r["criterion"])
    return {"dataset": dataset, "settings": len(rows), "tuned": tuned, "chosen": chosen,
            "median_acc": float(np.median([r["acc"] for r in rows]))}


def fmt(setting: dict) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in setting.items())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, default=ROOT / "results" / "store")
    parser.add_argument("--datasets", nargs="+", default=["jaffe", "umist", "coil20", "usps"])
    args = parser.parse_args()
    print("| dataset | settings stored | label-tuned best ACC / NMI (setting) | "
          "label-free choice ACC / NMI (setting) | gap (ACC points) | median ACC |")
    print("|---|---|---|---|---|---|")
    for dataset in args.datasets:
        result = choose(args.store, dataset)
        if result is None:
            print(f"| {dataset} | 0 | | | | |")
            continue
        tuned, chosen = result["tuned"], result["chosen"]
        print(f"| {dataset} | {result['settings']} | {100 * tuned['acc']:.2f} / "
              f"{100 * tuned['nmi']:.2f} ({fmt(tuned['setting'])}) | {100 * chosen['acc']:.2f}"
              f" / {100 * chosen['nmi']:.2f} ({fmt(chosen['setting'])}) | "
              f"{100 * (tuned['acc'] - chosen['acc']):.2f} | {100 * result['median_acc']:.2f} |")


if __name__ == "__main__":
    main()
