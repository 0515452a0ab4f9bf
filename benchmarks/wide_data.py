"""Selectors on data with many more features than samples (issue 23, item 3: d >> n).

    export CAUSEFS_DATA=../shared/datasets
    python benchmarks/wide_data.py                       # the table (quality only)
    python benchmarks/wide_data.py --cases genes --seeds 0 1 2

Cases from ``benchmarks/feature_groups_sampled.py``: ``jaffe_up`` (JAFFE, 100 images
upscaled to 100 x 6084 pixels, like the face sets of 100 x 10,000) and ``genes`` (120 x
6000: 3 groups differing in 60 genes among 30 class-free co-expression modules of 100
genes and 3840 noise genes). Printed: k-means ACC (%) on each method's top 20 features (20
runs), the share of the top 20 that are the informative genes (``genes``), the fit's wall
time, and 20 random features (mean of 10 draws) and all features as rows.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

from causefs.app.metrics import kmeans_scores
from causefs.numerics.scaling import scale_features

from dev_benchmark import selector  # "name:key=value" specs, as the dev benchmark reads them
from feature_groups_sampled import CASES, informative_genes

METHODS = ("causefs", "causefs:schedule=full", "causefs:schedule=ablation_II", "variance",
           "laplacian_score", "mcfs", "fsdk", "vcsdfs")


def evaluate(X, y, method: str, seed: int, informative):
    if method in ("random_features", "all_features"):
        draws = [np.random.default_rng(s).choice(X.shape[1], 20, replace=False)
                 for s in range(10)] if method == "random_features" else [slice(None)]
        return (float(np.mean([kmeans_scores(X[:, cols], y, n_runs=20)["acc_mean"]
                               for cols in draws])), None, 0.0)
    start = time.perf_counter()
    ranking = selector(method).ranking(
        X, n_clusters=np.unique(y).size, n_features_to_select=20, random_state=seed)
    seconds = time.perf_counter() - start
    top = ranking[:20]
    precision = None if informative is None else float(np.isin(top, informative).mean())
    return kmeans_scores(X[:, top], y, n_runs=20)["acc_mean"], precision, seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", default=["jaffe_up", "genes"],
                        choices=["jaffe_up", "genes"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--methods", nargs="+",
                        default=[*METHODS, "random_features", "all_features"])
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # short fits warn about convergence; measured anyway
    print("| case | seed | method | ACC (%) | informative in top 20 | fit (s) |")
    print("|---|---|---|---|---|---|")
    for case in args.cases:
        for seed in args.seeds:
            X, y = CASES[case](seed)
            informative = informative_genes(seed) if case == "genes" else None
            X = scale_features(X, "minmax")
            for method in args.methods:
                acc, precision, seconds = evaluate(X, y, method, seed, informative)
                shown = "" if precision is None else f"{precision:.2f}"
                print(f"| {case} | {seed} | {method} | {100 * acc:.1f} | {shown} "
                      f"| {seconds:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
