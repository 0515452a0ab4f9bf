"""The default neighbour search against the exact one, measured inside real fits.

    python benchmarks/neighbor_accuracy.py [--cases coil20 usps:3000 synthetic:20000x64]

For every case, fits with the same seed: the default search (``neighbor_algorithm=
"auto"``: exact below 5000 samples, or 10,000 for few dimensions), the approximate one
forced (``"approximate"``: what ``auto`` does beyond) and the exact one (``"exact"``, NumPy
brute force). Reported: the iterations, the final objective, the top-20 overlap with the
exact fit, ACC/NMI at 20 features (k-means++ x 20), and the recall of each non-exact
search inside its own fit: at every graph it builds, the share of its candidates that are
as near as the exact search's k-th (computed beside it; ties count, as an exact search
could return either of two equidistant points). Each fit is written
atomically to ``--out/<case>__<search>.json``; a re-run skips what is stored.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import bench_scale  # data of the cases, machine, atomic writes through causefs


def _recording_search(recalls: list):
    """Wrap the candidate search so that every call records its recall."""
    from causefs.numerics import adaptive_graphs, neighbors

    search = neighbors.nearest_candidates

    def recorded(Y, n_candidates, algorithm, warm=None):
        found = search(Y, n_candidates, algorithm, warm)
        # tie-aware: a candidate counts when it is as near as the exact k-th neighbour
        # (embeddings of near-constant feature groups have many equidistant points)
        kth = neighbors.half_squared_distances(
            Y, neighbors.exact_neighbors(Y, n_candidates)).max(axis=1)
        near = neighbors.half_squared_distances(Y, found) <= kth[:, None] * (1 + 1e-9) + 1e-12
        hits = np.minimum(near.sum(axis=1), n_candidates)
        recalls.append(float(hits.sum() / (n_candidates * Y.shape[0])))
        return found

    adaptive_graphs.nearest_candidates = recorded


def measure(case: str, algorithm: str) -> dict:
    from causefs import CauseFS
    from causefs.app.evaluation import evaluate_ranking
    from causefs.numerics.scaling import scale_features
    from causefs.selectors import ranking_from_scores

    X, y = bench_scale.load_case(case)
    recalls: list = []
    if algorithm != "exact":
        _recording_search(recalls)
    start = time.process_time()
    est = CauseFS(n_clusters=int(np.unique(y).size), n_features_to_select=20, random_state=0,
                  neighbor_algorithm=algorithm, memory_limit=None).fit(X)
    seconds = time.process_time() - start
    ranking = ranking_from_scores(est.scores_)
    scores = evaluate_ranking(scale_features(X), y, ranking, [20],
                              n_clusters=int(np.unique(y).size), n_runs=20, seed=0)[20]
    return {"n_iter": est.n_iter_, "objective": float(est.objective_history_[-1]),
            "top20": ranking[:20].tolist(), "acc": scores["acc_mean"],
            "nmi": scores["nmi_mean"], "cpu_seconds": seconds,
            "recall_min": min(recalls, default=None),
            "recall_mean": float(np.mean(recalls)) if recalls else None}


SEARCHES = ("auto", "approximate", "exact")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", default=["coil20", "usps:3000"])
    parser.add_argument("--searches", nargs="+", default=list(SEARCHES), choices=SEARCHES)
    parser.add_argument("--out", type=Path, default=Path("results/neighbor_accuracy"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    print("| case | search | iterations | J | top-20 overlap with exact | ACC / NMI (%) | "
          "recall inside the fit (mean, min) | CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    for case in args.cases:
        result = {}
        for algorithm in dict.fromkeys([*args.searches, "exact"]):
            result[algorithm] = bench_scale.stored_result(
                args.out / f"{case.replace(':', '_')}__{algorithm}.json",
                lambda: measure(case, algorithm))
        exact = set(result["exact"]["top20"])
        for algorithm, r in result.items():
            recall = ("-" if r["recall_mean"] is None
                      else f"{r['recall_mean']:.3f}, {r['recall_min']:.3f}")
            print(f"| {case} | {algorithm} | {r['n_iter']} | {r['objective']:.6g} | "
                  f"{len(set(r['top20']) & exact)}/20 | {100 * r['acc']:.2f} / "
                  f"{100 * r['nmi']:.2f} | {recall} | {r['cpu_seconds']:.1f} |")


if __name__ == "__main__":
    main()
