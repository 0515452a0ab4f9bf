"""Fits of the full schedule with the balance products widened from different flop counts
(``causefs.kernels.linear.PRODUCT_WIDE_FLOPS``), each setting in its own process.

    python benchmarks/balance_threads.py [--thresholds 2e8 5e7 1e7] [--repeats 3]
        [--cases digits/full jaffe/full umist/full coil20/full usps/full coil20/ablation_I]

A case is ``<data>/<schedule>``, the data named as in ``bench_scale.load_case``
(``digits``, a benchmark's name, ``synthetic:<n>x<d>:<clusters>``, ...).

The first threshold is the reference (2e8: every operation's ``WIDE_FLOPS``, the code
before the balance products got their own). Every case is fitted ``--repeats`` times in
a fresh process per threshold (USPS once), 20 features, ``random_state=0``; the table
gives the least wall time, its ratio to the reference's, the iterations, the final
objective and whether the top 20 is the reference's. Run it on an idle machine: the
1-minute load average before and after each process is printed beside it.
"""

from __future__ import annotations

import argparse

from bench_scale import against_first, child_json  # beside this file

CHILD = r"""
import json, sys, time
import numpy as np
import causefs.kernels.linear as linear
linear.PRODUCT_WIDE_FLOPS = float(sys.argv[1])
sys.path.insert(0, sys.argv[-1])
from bench_scale import load_case  # the benchmarks' cases, beside this file
from causefs import CauseFS
name, schedule, repeats = sys.argv[2], sys.argv[3], int(sys.argv[4])
X, y = load_case(name)
clusters = len(np.unique(y))
walls = []
for _ in range(repeats):
    start = time.perf_counter()
    est = CauseFS(n_clusters=clusters, n_features_to_select=20, random_state=0,
                  schedule=schedule).fit(X)
    walls.append(time.perf_counter() - start)
print(json.dumps({"walls": walls, "iterations": est.n_iter_,
                  "objective": float(est.objective_history_[-1]),
                  "top": sorted(est.get_support(indices=True).tolist())}))
"""

CASES = ("digits/full", "jaffe/full", "umist/full", "coil20/full", "usps/full",
         "coil20/ablation_I")


def measure(case: str, threshold: float, repeats: int) -> dict:
    name, schedule = case.split("/")
    return child_json(CHILD, repr(threshold), name, schedule, 1 if name == "usps" else repeats)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--thresholds", type=float, nargs="+", default=[2e8, 5e7, 1e7])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", nargs="+", default=list(CASES))
    args = parser.parse_args(argv)
    print("| case | threshold | wall s (least) | / reference | iterations | objective "
          "| top 20 as the reference | load before / after |")
    print("|---|---|---|---|---|---|---|---|")
    runs = against_first(args.cases, args.thresholds,
                         lambda case, threshold: measure(case, threshold, args.repeats))
    for case, threshold, result, reference in runs:
        print(f"| {case} | {threshold:.0e} | {result['wall']:.2f} "
              f"| {result['wall'] / reference['wall']:.2f} "
              f"| {result['iterations']} | {result['objective']:.12g} "
              f"| {'yes' if result['top'] == reference['top'] else 'no'} "
              f"| {result['load'][0]:.2f} / {result['load'][1]:.2f} |", flush=True)

if __name__ == "__main__":
    main()
