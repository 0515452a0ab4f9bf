"""A fresh approximate neighbour search (no graph to start from): one HNSW index and its
round of local join against the indexes of interleaved shards, each search in its own
process.

    python benchmarks/fresh_search.py [--repeats 1] [--features all 0:15 10:55]
        [--cases synthetic:100000x64 usps]

A case is named as in ``bench_scale.load_case``; its features scaled to [0, 1] (as a
fit's ``X_adjusted`` without nuisance variables), ``--features`` slices of them (``all``,
or ``start:stop``: a feature group's columns, as the initial granular graphs search). The
search is ``causefs.numerics.neighbors.nearest_candidates(Y, 6, "approximate")`` (6
candidates: the default's 5 neighbours and one) inside ``fit_threads()`` on the caller's
threads, with ``SHARDED_N`` set so that the same code runs one index (``one_index``, the
reference) or its shards (``shards``). The table gives the least wall time of
``--repeats`` searches, its ratio to the reference's, and the recall: the share of the
candidates of 2000 sampled points (seed 1) as near as their exact 6th nearest (the exact
search of the same module). Run it on an idle machine: the 1-minute load average before
and after each process is printed beside it.
"""

from __future__ import annotations

import argparse

from bench_scale import against_first, child_json  # beside this file

CHILD = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[-1])
from bench_scale import load_case  # the benchmarks' cases, beside this file
from causefs.numerics import neighbors
from causefs.numerics.scaling import scale_features
from causefs.numerics.threads import fit_threads
name, columns, path, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
X, _ = load_case(name)
Y = scale_features(np.asarray(X, dtype=float))
if columns != "all":
    start, stop = (int(v) for v in columns.split(":"))
    Y = np.ascontiguousarray(Y[:, start:stop])
neighbors.SHARDED_N = Y.shape[0] if path == "one_index" else 0
c = 6
walls = []
with fit_threads():
    time.sleep(0.5)  # the interval the cores busy elsewhere are judged over, as in a fit
    for _ in range(repeats):
        start = time.perf_counter()
        found = neighbors.nearest_candidates(Y, c, "approximate")
        walls.append(time.perf_counter() - start)
queries = np.sort(np.random.default_rng(1).choice(Y.shape[0], 2000, replace=False))
exact = neighbors.exact_neighbors(Y, c, queries)
kth = neighbors.half_squared_distances(Y, exact, queries).max(axis=1)
near = neighbors.half_squared_distances(Y, found[queries], queries) <= kth[:, None]
print(json.dumps({"walls": walls, "n": Y.shape[0], "dims": Y.shape[1],
                  "recall": float(near.sum(axis=1).mean() / c)}))
"""

CASES = ("synthetic:100000x64", "usps")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--features", nargs="+", default=["all"])
    parser.add_argument("--cases", nargs="+", default=list(CASES))
    args = parser.parse_args(argv)
    print("| case | features | n x dims | search | wall s (least) | / one index | recall "
          "| load before / after |")
    print("|---|---|---|---|---|---|---|---|")
    cases = [(case, columns) for case in args.cases for columns in args.features]
    runs = against_first(cases, ["one_index", "shards"], lambda case, path: child_json(
        CHILD, case[0], case[1], path, args.repeats))
    for (case, columns), path, result, reference in runs:
        print(f"| {case} | {columns} | {result['n']:,} x {result['dims']} | {path} "
              f"| {result['wall']:.2f} | {result['wall'] / reference['wall']:.2f} "
              f"| {result['recall']:.4f} "
              f"| {result['load'][0]:.2f} / {result['load'][1]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
