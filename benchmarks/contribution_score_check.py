"""Would ranking by each feature's contribution, ||W_f|| sd(x_f), beat ||W_f||?

    export CAUSEFS_DATA=../shared/datasets
    python benchmarks/contribution_score_check.py --out results/contribution_score
    python benchmarks/contribution_score_check.py --out results/contribution_score --report

The paper ranks features by ``||W_f||``, whose size is in units of ``1 / x_f``: a feature
of small spread needs a large row to count. Its contribution to ``X W`` is ``x_f W_f``, of
size ``sd(x_f) ||W_f||`` (centred). Both rankings are read from the same default fits
(``CauseFS(n_clusters=<classes>, n_features_to_select=20, random_state=0)``, as a user
calls it: its min-max scaling scales each subsample again, where the development
benchmark hands its methods the whole dataset's scaling), on the development
benchmark's 13 datasets, whole and on its three
seeded 80 % subsamples (``benchmarks/dev_benchmark.py``'s loader and subsamples), and on
the wide stand-ins of ``benchmarks/wide_data.py`` (seeds 0 and 1); k-means x 20 on each
top 20, ACC in %. Every job is one JSON file written atomically, so a re-run resumes.

The rule for adopting it, written before the first run (2026-11-29): on the development
benchmark a higher mean ACC over the datasets, as many datasets at or above random
features and at or above the best of the five strong selectors (their stored means), a
mean rank among the selectors no worse; and no wide stand-in lower by more than 2 points.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from causefs import CauseFS
from causefs.app.metrics import kmeans_scores
from causefs.numerics.scaling import scale_features

import dev_benchmark
from feature_groups_sampled import CASES

RANKINGS = ("norm", "contribution")
WIDE = ("jaffe_up", "genes")


def rankings(X, n_clusters: int, seed: int) -> dict:
    """The top 20 of one default fit by ``||W_f||`` and by ``||W_f|| sd(x_f)``."""
    fitted = CauseFS(n_clusters=n_clusters, n_features_to_select=20, random_state=seed).fit(X)
    norms = np.linalg.norm(fitted.W_, axis=1)
    scores = {"norm": norms, "contribution": norms * X.std(axis=0)}
    return {name: np.argsort(-s, kind="stable")[:20].tolist() for name, s in scores.items()}


def job(path: Path, X, y, seed: int) -> dict:
    if path.exists():
        return json.loads(path.read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a fit that reaches max_iter is measured anyway
        tops = rankings(X, int(np.unique(y).size), seed)
    result = {name: {"top": top, "acc": 100 * kmeans_scores(X[:, top], y, n_runs=20)[
        "acc_mean"]} for name, top in tops.items()}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result))
    os.replace(tmp, path)
    return result


def run(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in dev_benchmark.DATASETS:
        data = dev_benchmark.load(name)
        for number in range(4):
            result = job(out / f"{name}__{number}.json", *dev_benchmark.resample(*data, number),
                         seed=0)
            print(name, number, {k: round(v["acc"], 1) for k, v in result.items()}, flush=True)
    for case in WIDE:
        for seed in (0, 1):
            X, y = CASES[case](seed)
            result = job(out / f"wide_{case}__{seed}.json", scale_features(X, "minmax"), y,
                         seed=seed)
            print(case, seed, {k: round(v["acc"], 1) for k, v in result.items()}, flush=True)


def report(out: Path) -> None:
    print("| dataset | ||W_f|| | ||W_f|| sd(x_f) | difference |")
    print("|---|---|---|---|")
    differences = []
    for name in dev_benchmark.DATASETS:
        found = [json.loads(p.read_text()) for p in sorted(out.glob(f"{name}__*.json"))]
        if len(found) < 4:
            continue
        means = [np.mean([f[r]["acc"] for f in found]) for r in RANKINGS]
        differences.append(means[1] - means[0])
        print(f"| {name} | {means[0]:.1f} | {means[1]:.1f} | {means[1] - means[0]:+.1f} |")
    print(f"\nmean difference over {len(differences)} datasets: "
          f"{np.mean(differences):+.2f} ACC points\n")
    for path in sorted(out.glob("wide_*.json")):
        found = json.loads(path.read_text())
        print(f"| {path.stem[5:]} | {found['norm']['acc']:.1f} | "
              f"{found['contribution']['acc']:.1f} | "
              f"{found['contribution']['acc'] - found['norm']['acc']:+.1f} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("results/contribution_score"))
    parser.add_argument("--report", action="store_true", help="print the tables only")
    args = parser.parse_args(argv)
    if not args.report:
        run(args.out)
    report(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
