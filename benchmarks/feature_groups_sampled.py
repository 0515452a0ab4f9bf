"""The sampled feature groups (``correlation_groups``'s ``max_exact_features``) measured
inside real fits against the exact path, on data with many more features than samples.

    export CAUSEFS_DATA=../shared/datasets
    python benchmarks/feature_groups_sampled.py                  # the table
    python benchmarks/feature_groups_sampled.py --cases genes_20000 --seeds 0

Cases: ``jaffe_up`` (JAFFE, 10 images per person drawn with the seed, upscaled 3x:
100 x 6084, like the 100 x 10,000 face sets), ``genes``
(120 x 6000: 3 groups of 50/40/30 samples differing in 60 genes, 30 co-expression modules
of 100 genes driven by class-free factors, gene-specific spreads) and ``genes_20000``
(120 x 20,000). Each is fitted by the default (``schedule="auto"``) with the exact groups
(``max_exact_features=None``) and with the sampled ones (the default, 3000), same seed.
Printed per fit: wall time, the final groups' adjusted Rand index between the two,
top-20 overlap, k-means ACC on the top 20 (20 runs) and the final objective of each.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from scipy.ndimage import zoom
from sklearn.metrics import adjusted_rand_score

from causefs import CauseFS
from causefs.app.metrics import kmeans_scores
from causefs.datasets import load_dataset
from causefs.engine import resolve_schedule
from causefs.numerics.scaling import scale_features


def jaffe_up(seed: int, per_person: int = 10, factor: int = 3):
    data = load_dataset("jaffe")
    X, y = np.asarray(data.X, float), np.asarray(data.y)
    rng = np.random.default_rng(seed)
    rows = np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), per_person,
                                              replace=False) for c in np.unique(y)]))
    side = int(round(np.sqrt(X.shape[1])))
    images = X[rows].reshape(-1, side, side)
    return np.stack([zoom(image, factor, order=1) for image in images]).reshape(
        len(rows), -1), y[rows]


def genes_with_truth(seed: int, d: int = 6000, sizes=(50, 40, 30), informative: int = 60,
                     modules: int = 30, module_size: int = 100, effect: float = 1.0):
    """The genes-like data ``(X, y)`` and the indices of its informative genes."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(sizes)), sizes)
    n = y.size
    X = rng.normal(size=(n, d))
    order = rng.permutation(d)  # order[:informative] are the informative genes
    for members in order[informative:informative + modules * module_size].reshape(modules, -1):
        X[:, members] += np.outer(rng.normal(size=n), rng.uniform(1.0, 2.5, module_size))
    X[:, order[:informative]] += rng.normal(0, effect, (len(sizes), informative))[y]
    return X * np.exp(rng.normal(0, 0.7, d)), y, order[:informative]


def genes(seed: int, d: int = 6000):
    return genes_with_truth(seed, d)[:2]


def informative_genes(seed: int, d: int = 6000) -> np.ndarray:
    """The informative genes of :func:`genes`."""
    return genes_with_truth(seed, d)[2]


CASES = {"jaffe_up": jaffe_up, "genes": genes,
         "genes_20000": lambda seed: genes(seed, d=20000)}


def schedule_with(max_exact_features):
    """The default schedule without Z, its correlation_groups given the limit."""
    base = resolve_schedule("auto")
    init = [{"name": "correlation_groups", "max_exact_features": max_exact_features}
            if getattr(entry, "name", entry) == "correlation_groups" else entry
            for entry in base.init]
    return {"name": f"{base.name}_groups_{max_exact_features}", "init": init,
            "loop": list(base.loop), "terms": list(base.terms)}


def fit(X, y, seed, max_exact_features):
    start = time.perf_counter()
    model = CauseFS(n_clusters=np.unique(y).size, n_features_to_select=20, random_state=seed,
                    schedule=schedule_with(max_exact_features)).fit(X)
    seconds = time.perf_counter() - start
    top = np.argsort(model.ranking_)[:20]
    return {"seconds": seconds, "groups": model.groups_, "top": top,
            "acc": kmeans_scores(X[:, top], y, n_runs=20)["acc_mean"],
            "objective": model.objective_history_[-1]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", default=["jaffe_up", "genes", "genes_20000"],
                        choices=CASES)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    args = parser.parse_args(argv)
    print("| case | seed | n x d | exact s | sampled s | ratio | groups ARI | top-20 overlap "
          "| ACC exact | ACC sampled | objective exact | objective sampled |")
    print("|---" * 12 + "|")
    for case in args.cases:
        for seed in args.seeds:
            X, y = CASES[case](seed)
            X = scale_features(X, "minmax")
            exact, sampled = fit(X, y, seed, None), fit(X, y, seed, 3000)
            print(f"| {case} | {seed} | {X.shape[0]} x {X.shape[1]} | {exact['seconds']:.1f} "
                  f"| {sampled['seconds']:.1f} | {exact['seconds'] / sampled['seconds']:.1f} "
                  f"| {adjusted_rand_score(exact['groups'], sampled['groups']):.2f} "
                  f"| {np.intersect1d(exact['top'], sampled['top']).size}/20 "
                  f"| {100 * exact['acc']:.1f} | {100 * sampled['acc']:.1f} "
                  f"| {exact['objective']:.4g} | {sampled['objective']:.4g} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
