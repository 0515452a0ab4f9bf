"""Default fits with their granular graphs built in parallel or one after another
(``causefs.numerics.threads.PARALLEL_GRAPHS_N``), each setting in its own
process.

    python benchmarks/graph_threads.py [--thresholds 0 1e9] [--repeats 4]
        [--cases dev:scadi dev:lsvt dev:alzheimer jaffe digits:300 digits:500 umist
                 digits:800 synthetic:1000x100:4 digits coil20]

A case is named as in ``bench_scale.load_case`` (``digits``, ``digits:<m>``: m samples of
digits drawn without replacement, a benchmark's name, ``dev:<name>``, ``synthetic:...``).
A threshold of 0 builds every fit's graphs in parallel on the caller's threads (the code
before the constant), 1e9 builds them one after another; the first threshold is the
reference. Every case is fitted ``--repeats`` times in a fresh process per threshold,
20 features, ``random_state=0``, the default schedule; the table gives the least wall
time of the fit and of its graph blocks (the initial granular graphs, the S block and
the regrouping, which rebuilds graphs), their ratios to the reference's, and whether
the final objective and the top 20 are the reference's. Run it on an idle machine of 2
cores or more: the 1-minute load average before and after each process is printed.
"""

from __future__ import annotations

import argparse

from bench_scale import against_first, child_json  # beside this file

CHILD = r"""
import json, sys, time
import numpy as np
import causefs.numerics.threads as threads
threads.PARALLEL_GRAPHS_N = float(sys.argv[1])
sys.path.insert(0, sys.argv[-1])
from bench_scale import load_case  # the benchmarks' cases, beside this file
from causefs import CauseFS
GRAPH_BLOCKS = ("initial_granular_graphs", "granular_graphs", "granularity")
name, repeats = sys.argv[2], int(sys.argv[3])
X, y = load_case(name)
walls, graphs = [], []
for _ in range(repeats):
    start = time.perf_counter()
    est = CauseFS(n_clusters=len(np.unique(y)), n_features_to_select=20, random_state=0,
                  trace=True).fit(X)
    walls.append(time.perf_counter() - start)
    graphs.append(sum(r["seconds"] for r in est.trace_ if r["block"] in GRAPH_BLOCKS))
print(json.dumps({"walls": walls, "graphs": min(graphs), "n": X.shape[0],
                  "objective": float(est.objective_history_[-1]),
                  "top": sorted(est.get_support(indices=True).tolist())}))
"""

CASES = ("dev:scadi", "dev:lsvt", "dev:alzheimer", "jaffe", "digits:300", "digits:500",
         "umist", "digits:800", "synthetic:1000x100:4", "digits", "coil20")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0, 1e9])
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--cases", nargs="+", default=list(CASES))
    args = parser.parse_args(argv)
    print("| case | n | PARALLEL_GRAPHS_N | fit s (least) | / reference | graph blocks s "
          "(least) | / reference | objective and top 20 as the reference | "
          "load before / after |")
    print("|---|---|---|---|---|---|---|---|---|")
    runs = against_first(args.cases, args.thresholds,
                         lambda case, threshold: child_json(CHILD, repr(threshold), case,
                                                            args.repeats))
    for case, threshold, result, reference in runs:
        same = (result["objective"] == reference["objective"]
                and result["top"] == reference["top"])
        print(f"| {case} | {result['n']} | {threshold:g} | {result['wall']:.3f} "
              f"| {result['wall'] / reference['wall']:.2f} | {result['graphs']:.3f} "
              f"| {result['graphs'] / reference['graphs']:.2f} | {'yes' if same else 'no'} "
              f"| {result['load'][0]:.2f} / {result['load'][1]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
