"""Sweep CauseFS hyperparameters on the benchmarks to choose one default for all datasets.

    python benchmarks/choose_defaults.py --datasets jaffe umist --out results/defaults
    python benchmarks/choose_defaults.py --datasets coil20 usps:2000 --grid top:8 --out ...

Every (dataset, setting) result is written atomically to its own JSON file under --out, so
an interrupted sweep resumes where it stopped. ``usps:2000`` is a class-stratified random
subsample of 2000 samples (seed 0). The table printed at the end ranks settings by mean ACC
and NMI (k-means on the top 20 features, --runs runs) averaged over datasets.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np

from causefs import CauseFS
from causefs.app.store import write_json_atomic
from causefs.datasets import load_dataset
from causefs.app.metrics import kmeans_scores
from causefs.numerics.scaling import scale_features

GRID = {
    "alpha": [0.1, 1.0, 10.0],
    "lam": [0.01, 0.1, 1.0, 10.0],
    "beta": [0.0, 1e-6, 1e-5, 1e-4],
}


def load(spec: str):
    name, _, size = spec.partition(":")
    data = load_dataset(name)
    X, y = data.X, data.y
    if size:
        rng = np.random.default_rng(0)
        classes = np.unique(y)
        per_class = int(size) // classes.size
        keep = np.concatenate([rng.choice(np.flatnonzero(y == c), per_class, replace=False)
                               for c in classes])
        X, y = X[keep], y[keep]
    return spec, X, y


def settings_from(grid: str, out: Path) -> list[dict]:
    if grid == "full":
        return [dict(zip(GRID, values)) for values in itertools.product(*GRID.values())]
    count = int(grid.split(":")[1])  # top:N of the settings already measured
    ranked = summarize(out, quiet=True)
    return [row["setting"] for row in ranked[:count]]


def key(spec: str, setting: dict) -> str:
    return spec.replace(":", "-") + "__" + "_".join(f"{k}={v:g}" for k, v in setting.items())


def run_one(spec, X, y, setting, runs):
    n_clusters = int(np.unique(y).size)
    start = time.perf_counter()
    est = CauseFS(n_clusters=n_clusters, n_features_to_select=20, random_state=0,
                  **setting).fit(X)
    seconds = time.perf_counter() - start
    Xs = scale_features(X)
    scores = kmeans_scores(Xs[:, est.support_], y, n_runs=runs)
    return {"dataset": spec, "setting": setting, "fit_seconds": seconds, **scores,
            "n_iter": est.n_iter_, "selected": np.flatnonzero(est.support_).tolist()}


def summarize(out: Path, quiet=False) -> list[dict]:
    rows = [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))]
    datasets = sorted({r["dataset"] for r in rows})
    by_setting: dict = {}
    for r in rows:
        by_setting.setdefault(json.dumps(r["setting"], sort_keys=True), {})[r["dataset"]] = r
    table = []
    for setting, per in by_setting.items():
        if len(per) < len(datasets):
            continue
        score = np.mean([(per[d]["acc_mean"] + per[d]["nmi_mean"]) / 2 for d in datasets])
        table.append({"setting": json.loads(setting), "score": score, "per": per})
    table.sort(key=lambda row: -row["score"])
    if not quiet:
        header = "| alpha | lam | beta | " + " | ".join(f"{d} ACC / NMI" for d in datasets)
        print(header + " | mean (ACC+NMI)/2 | fit s |")
        print("|" + "---|" * (4 + len(datasets) + 1))
        for row in table:
            s = row["setting"]
            cells = [f"{100 * row['per'][d]['acc_mean']:.1f} / {100 * row['per'][d]['nmi_mean']:.1f}"
                     for d in datasets]
            seconds = sum(row["per"][d]["fit_seconds"] for d in datasets)
            print(f"| {s['alpha']:g} | {s['lam']:g} | {s['beta']:g} | " + " | ".join(cells)
                  + f" | {100 * row['score']:.2f} | {seconds:.0f} |")
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["jaffe", "umist"])
    parser.add_argument("--grid", default="full", help="'full' or 'top:N'")
    parser.add_argument("--runs", type=int, default=20, help="k-means runs per evaluation")
    parser.add_argument("--out", type=Path, default=Path("results/defaults"))
    parser.add_argument("--summary-only", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.summary_only:
        settings = settings_from(args.grid, args.out)
        for spec in args.datasets:
            spec, X, y = load(spec)
            for setting in settings:
                path = args.out / f"{key(spec, setting)}.json"
                if path.exists():
                    continue
                result = run_one(spec, X, y, setting, args.runs)
                write_json_atomic(path, result)
                print(f"{spec} {setting}: ACC {result['acc_mean']:.3f} NMI "
                      f"{result['nmi_mean']:.3f} ({result['fit_seconds']:.1f} s)", flush=True)
    summarize(args.out)


if __name__ == "__main__":
    main()
