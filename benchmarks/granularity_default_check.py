"""CAUSE-FS's default fit at several ``max_granularity``, ranking 20 features as a default
fit does, on the development benchmark's datasets and resamples.

    python benchmarks/granularity_default_check.py [--values 10 3] [--datasets ...]

Each fit ranks ``n_features_to_select=20`` features (the development benchmark's cells
rank 50 and score the top 20) on the whole dataset and three seeded 80 % subsamples
(``dev_benchmark.resample``); k-means++ x 20 on its top 20. Prints each dataset's mean
ACC per value, the mean over the datasets, and on how many datasets each value beats the
random-features row of docs/RESULTS.md. docs/MODEL.md, "The number of granularities",
quotes its output (the second check).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dev_benchmark  # noqa: E402

from causefs import CauseFS  # noqa: E402
from causefs.app.metrics import kmeans_scores  # noqa: E402

#: ACC (%) at 20 of 20 random features, the development benchmark's table (mean of 20
#: draws and of the four resamples)
RANDOM_FEATURES = {"semeion": 34.9, "binalpha": 25.3, "lsvt": 58.4, "pdspeech": 59.5,
                   "alzheimer": 68.6, "scadi": 57.8, "splice": 44.8, "mushrooms": 69.8,
                   "jaffe": 75.3, "umist": 40.9, "coil20": 55.3, "usps": 46.0,
                   "digits": 59.9}
RESAMPLES = 4


def mean_acc(name: str, max_granularity: int) -> float:
    """ACC (%) of the top 20, the mean over the resamples."""
    X_all, y_all = dev_benchmark.load(name)
    accs = []
    for number in range(RESAMPLES):
        X, y = dev_benchmark.resample(X_all, y_all, number)
        fit = CauseFS(n_clusters=int(np.unique(y).size), n_features_to_select=20,
                      max_granularity=max_granularity, random_state=0).fit(X)
        top = np.argsort(fit.ranking_, kind="stable")[:20]
        accs.append(kmeans_scores(X[:, top], y, n_runs=dev_benchmark.N_RUNS)["acc_mean"])
    return 100 * float(np.mean(accs))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, nargs="+", default=[10, 3])
    parser.add_argument("--datasets", nargs="+", default=list(dev_benchmark.DATASETS))
    args = parser.parse_args(argv)
    table = {value: {name: mean_acc(name, value) for name in args.datasets}
             for value in args.values}
    print("dataset".ljust(10) + "".join(f"{value:>8}" for value in args.values) + "  random")
    for name in args.datasets:
        print(name.ljust(10) + "".join(f"{table[v][name]:8.1f}" for v in args.values)
              + f"{RANDOM_FEATURES[name]:8.1f}")
    for value in args.values:
        wins = sum(table[value][name] >= RANDOM_FEATURES[name] for name in args.datasets)
        print(f"max_granularity={value}: mean {np.mean(list(table[value].values())):.2f}, "
              f">= random features on {wins} of {len(args.datasets)}")


if __name__ == "__main__":
    main()
