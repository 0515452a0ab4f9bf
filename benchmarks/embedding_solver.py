"""Default fits with the embedding block's two solvers of the F subproblem (GPI, the
paper's, and the preconditioned subspace descent), each fit in its own process.

    python benchmarks/embedding_solver.py [--solvers gpi subspace] [--repeats 1]
        [--cases digits jaffe umist coil20 usps synthetic:20000x64 synthetic:50000x64]

A case is named as in ``bench_scale.load_case`` (``digits``, a benchmark's name,
``synthetic:<n>x<d>:<clusters>``, ...). The fit is the default (``CauseFS()``'s
schedule) with its ``embedding`` entry given ``solver=<solver>``, 20 features,
``random_state=0``, ``trace=True``; the first solver is the reference. The table gives
the least wall time of ``--repeats`` fits, its ratio to the reference's, the embedding
block's own seconds (over the fit) and its ratio, the iterations, the final objective,
the top-20 overlap with the reference and ACC / NMI of k-means (k-means++, 10 runs,
seeds 0-9) on the selected features scaled to [0, 1]. Run it on an idle machine: the
1-minute load average before and after each process is printed beside it.
"""

from __future__ import annotations

import argparse

from bench_scale import against_first, child_json  # beside this file

CHILD = r"""
import json, sys, time
import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.metrics import normalized_mutual_info_score
sys.path.insert(0, sys.argv[-1])
from bench_scale import load_case  # the benchmarks' cases, beside this file
from causefs import CauseFS
from causefs.plugins.registry import get_schedule
name, solver, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
X, y = load_case(name)
labels = np.unique(y, return_inverse=True)[1]
clusters = labels.max() + 1
schedule = dict(get_schedule("ablation_I"))  # the default without nuisance variables
schedule["loop"] = [{"name": "embedding", "solver": solver} if entry == "embedding"
                    else entry for entry in schedule["loop"]]
walls = []
for _ in range(repeats):
    start = time.perf_counter()
    est = CauseFS(n_clusters=clusters, n_features_to_select=20, random_state=0,
                  schedule=schedule, trace=True).fit(X)
    walls.append(time.perf_counter() - start)
selected = est.get_support(indices=True)
Z = X[:, selected].astype(float)
Z = (Z - Z.min(0)) / np.where(np.ptp(Z, 0) > 0, np.ptp(Z, 0), 1.0)
acc, nmi = [], []
for seed in range(10):
    found = KMeans(clusters, n_init=1, random_state=seed).fit_predict(Z)
    table = np.zeros((clusters, clusters))
    np.add.at(table, (found, labels), 1)
    rows, cols = linear_sum_assignment(-table)
    acc.append(table[rows, cols].sum() / labels.size)
    nmi.append(normalized_mutual_info_score(labels, found))
print(json.dumps({"walls": walls, "iterations": est.n_iter_,
                  "embedding": sum(r["seconds"] for r in est.trace_ if r["block"] == "embedding"),
                  "objective": float(est.objective_history_[-1]),
                  "top": sorted(selected.tolist()),
                  "acc": 100 * float(np.mean(acc)), "nmi": 100 * float(np.mean(nmi))}))
"""

CASES = ("digits", "jaffe", "umist", "coil20", "usps", "synthetic:20000x64",
         "synthetic:50000x64")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solvers", nargs="+", default=["gpi", "subspace"])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--cases", nargs="+", default=list(CASES))
    args = parser.parse_args(argv)
    print("| case | solver | wall s (least) | / reference | embedding s | / reference "
          "| iterations | objective | top-20 overlap | ACC / NMI % | load before / after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    runs = against_first(args.cases, args.solvers,
                         lambda case, solver: child_json(CHILD, case, solver, args.repeats))
    for case, solver, result, reference in runs:
        overlap = len(set(result["top"]) & set(reference["top"]))
        print(f"| {case} | {solver} | {result['wall']:.2f} "
              f"| {result['wall'] / reference['wall']:.2f} | {result['embedding']:.2f} "
              f"| {result['embedding'] / reference['embedding']:.2f} "
              f"| {result['iterations']} | {result['objective']:.9g} | {overlap}/20 "
              f"| {result['acc']:.2f} / {result['nmi']:.2f} "
              f"| {result['load'][0]:.2f} / {result['load'][1]:.2f} |", flush=True)

if __name__ == "__main__":
    main()
