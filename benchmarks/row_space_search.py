"""One granular-graph update per feature group at large n: the group's points searched
in all their columns (as before ``row_space``) and in the coordinates of their row space.

    python benchmarks/row_space_search.py [--n 1000000] [--out results/row_space_search]

The points of group m are ``X_m W_m`` (10 columns, as a fit with 10 clusters has) on
``bench_speed.py``'s data (``make_causal(n, 64, n_clusters=10, seed=0)``, min-max
scaled); the group sizes are those of the final groups of the 50,000 x 64 default fit
(1, 2, 2, 2, 3, 3, 6, 6, 7 and 32 features) on a seeded permutation of the features.
``W`` is random and the update's is 5 % away from it; the exact graph of the first
points is the previous graph that seeds the local search, as in a fit. "Before" is the
same ``adaptive_graph`` call with ``row_space`` replaced by the identity (10 columns:
above 10,000 points the warm-started local search); "now" is the library's. Both on
the caller's threads (``fit_threads``). Printed per group: the seconds of each, their
ratio, and whether the two graphs list the same neighbours. Each group is written
atomically to ``--out/<n>_<group>.json``; a re-run skips what is stored. A group whose
points span more than 6 dimensions is searched the same way by both (``--groups``
chooses the groups; by default the eight of at most 6 features).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import causefs.numerics.adaptive_graphs as adaptive_graphs
from bench_scale import stored_result  # atomic, resumable, with the machine
from causefs.datasets import make_causal
from causefs.numerics.threads import fit_threads

SIZES = (1, 2, 2, 2, 3, 3, 6, 6, 7, 32)
CLUSTERS = 10
NEIGHBORS = 5


def points(n: int):
    """The scaled data, each group's columns and the two W."""
    X = make_causal(n, 64, n_clusters=CLUSTERS, seed=0).X
    X = (X - X.min(axis=0)) / np.ptp(X, axis=0)
    rng = np.random.default_rng(0)
    bounds = np.cumsum((0,) + SIZES)
    order = rng.permutation(X.shape[1])
    groups = [order[bounds[m]:bounds[m + 1]] for m in range(len(SIZES))]
    W = rng.normal(size=(X.shape[1], CLUSTERS))
    return X, groups, W, W + 0.05 * rng.normal(size=W.shape)


def one_group(X, cols, W_old, W_new) -> dict:
    n = X.shape[0]
    row_space = adaptive_graphs.row_space
    previous = X[:, cols] @ W_old[cols] / n
    current = X[:, cols] @ W_new[cols] / n
    warm, _ = adaptive_graphs.adaptive_graph(previous, NEIGHBORS)
    graphs, seconds = {}, {}
    for label in ("before", "now"):
        adaptive_graphs.row_space = (lambda Y: Y) if label == "before" else row_space
        try:
            start = time.perf_counter()
            graphs[label], _ = adaptive_graphs.adaptive_graph(current, NEIGHBORS, warm=[warm])
            seconds[label] = time.perf_counter() - start
        finally:
            adaptive_graphs.row_space = row_space
    # columns list their rows in order: the same supports have the same index arrays
    same = all(np.array_equal(getattr(graphs["before"], part), getattr(graphs["now"], part))
               for part in ("indptr", "indices"))
    return {"features": int(cols.size), "before_seconds": seconds["before"],
            "now_seconds": seconds["now"], "same_neighbors": same}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--groups", type=int, nargs="+",
                        default=[m for m, size in enumerate(SIZES) if size <= 6])
    parser.add_argument("--out", type=Path, default=Path("results/row_space_search"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    X, groups, W_old, W_new = points(args.n)
    print("| group | features | before s | now s | now / before | the same neighbours |")
    print("|---|---|---|---|---|---|")
    with fit_threads():
        for m in args.groups:
            record = stored_result(args.out / f"{args.n}_{m}.json",
                                   lambda: one_group(X, groups[m], W_old, W_new))
            print(f"| {m} | {record['features']} | {record['before_seconds']:.1f} | "
                  f"{record['now_seconds']:.1f} | "
                  f"{record['now_seconds'] / record['before_seconds']:.3f} | "
                  f"{'yes' if record['same_neighbors'] else 'no'} |", flush=True)


if __name__ == "__main__":
    main()
