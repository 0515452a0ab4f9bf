"""Anchor graphs against the graphs among all samples, measured inside real fits.

    python benchmarks/anchor_graphs.py [--cases usps synthetic:50000x64 ...]
                                       [--anchors 500 1000 2000] [--out DIR]

For every case, default fits (``CauseFS(n_clusters=<classes>, n_features_to_select=20,
random_state=0)``) with ``n_anchors=None`` (every sample a candidate neighbour: the
paper's graphs, searched as ``neighbor_algorithm="auto"`` searches them) and with each
number of anchors of ``--anchors``, one after the other in this process. Reported: wall
time, iterations, the final objective (the same function J of each fit's own graphs: an
anchor fit's feasible set is smaller, so its J is not expected lower), the top-20
overlap with the fit without anchors, ACC/NMI at 20 features (k-means++ x 20). Cases:
``benchmarks/bench_scale.py``'s names (``synthetic:<n>x<d>[:<clusters>[:<seed>]]`` is
``make_causal`` with that generator seed). Each fit is written atomically to
``--out/<case>__<anchors>.json``; a re-run skips what is stored. Time them on an idle
machine (the table prints the load before and after each fit).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import bench_scale  # data of the cases, machine, atomic writes through causefs

DEFAULT_CASES = ("usps", "synthetic:20000x64", "synthetic:50000x64",
                 "synthetic:50000x64:5:1", "synthetic:50000x32:20:2")


def measure(case: str, anchors: int | None) -> dict:
    from causefs import CauseFS
    from causefs.app.evaluation import evaluate_ranking
    from causefs.numerics.scaling import scale_features
    from causefs.selectors import ranking_from_scores

    X, y = bench_scale.load_case(case)
    classes = int(np.unique(y).size)
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    est = CauseFS(n_clusters=classes, n_features_to_select=20, random_state=0,
                  n_anchors=anchors, memory_limit=None).fit(X)
    seconds = time.perf_counter() - start
    load_after = os.getloadavg()[0]
    ranking = ranking_from_scores(est.scores_)
    scores = evaluate_ranking(scale_features(X), y, ranking, [20], n_clusters=classes,
                              n_runs=20, seed=0)[20]
    return {"n_iter": est.n_iter_, "objective": float(est.objective_history_[-1]),
            "top20": ranking[:20].tolist(), "acc": scores["acc_mean"],
            "acc_std": scores["acc_std"], "nmi": scores["nmi_mean"],
            "wall_seconds": seconds, "load": [load_before, load_after]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", default=list(DEFAULT_CASES))
    parser.add_argument("--anchors", nargs="+", type=int, default=[1000])
    parser.add_argument("--out", type=Path, default=Path("results/anchor_graphs"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    print("| case | anchors | wall s | iterations | J | top-20 overlap with none | "
          "ACC (std) / NMI (%) | load before / after |")
    print("|---|---|---|---|---|---|---|---|")
    for case in args.cases:
        result = {}
        for anchors in [None, *args.anchors]:
            label = "none" if anchors is None else str(anchors)
            result[label] = bench_scale.stored_result(
                args.out / f"{case.replace(':', '_')}__{label}.json",
                lambda: measure(case, anchors))
        reference = set(result["none"]["top20"])
        for label, r in result.items():
            print(f"| {case} | {label} | {r['wall_seconds']:.1f} | {r['n_iter']} | "
                  f"{r['objective']:.6g} | {len(set(r['top20']) & reference)}/20 | "
                  f"{100 * r['acc']:.2f} ({100 * r['acc_std']:.2f}) / {100 * r['nmi']:.2f} | "
                  f"{r['load'][0]:.2f} / {r['load'][1]:.2f} |")


if __name__ == "__main__":
    main()
