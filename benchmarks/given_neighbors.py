"""Fits given neighbours made elsewhere (``fit(X, neighbors=...)``) against the fit's own
search, measured inside real fits.

    python benchmarks/given_neighbors.py [--cases usps synthetic:50000x64]

For every case, default fits with the same seed: the fit's own search (``own``), given
the exact kNN graph of the scaled data (``exact_graph``, scikit-learn's brute force,
made before the fit and timed apart) and given a faiss HNSW index behind the
``NearestNeighbors`` interface (``faiss_hnsw``, fitted inside the fit). Reported: the
wall time of the fit and of its initialization (iteration 0 of the trace; every block's
seconds are stored too), the seconds
spent making the graph outside the fit, the recall of the given candidates (the share of
each sample's exact ``n_neighbors + 1`` nearest among them), the final objective, the
top-20 overlap with the own search's fit and ACC/NMI at 20 features (k-means++ x 20).
Each fit is written atomically to ``--out/<case>__<source>.json``; a re-run skips what is
stored.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import bench_scale  # data of the cases, machine

#: neighbours a sample gets in the given graphs (the fit needs n_neighbors + 1 = 6)
GIVEN_K = 10
SOURCES = ("own", "exact_graph", "faiss_hnsw")


class FaissHNSW:
    """Approximate neighbours by a faiss HNSW index (the user guide's example)."""

    def __init__(self, links=32):
        self.links = links

    def fit(self, X):
        import faiss

        self.index_ = faiss.IndexHNSWFlat(X.shape[1], self.links)
        self.index_.add(np.ascontiguousarray(X, dtype=np.float32))
        return self

    def kneighbors(self, X, n_neighbors, return_distance=False):
        self.index_.hnsw.efSearch = max(64, 4 * n_neighbors)
        _, found = self.index_.search(np.ascontiguousarray(X, dtype=np.float32), n_neighbors)
        return found.astype(np.int64)


def exact_graph(X_scaled):
    from sklearn.neighbors import NearestNeighbors

    return NearestNeighbors(n_neighbors=GIVEN_K, algorithm="brute").fit(
        X_scaled).kneighbors_graph(mode="connectivity")


def hnsw_recall(X_scaled, n_candidates: int = 6) -> float:
    """Share of each sample's exact ``n_candidates`` nearest that the HNSW search finds
    among its ``n_candidates`` (what the fit's closed form then chooses from)."""
    from causefs.numerics.given_neighbors import given_candidates
    from causefs.numerics.neighbors import exact_neighbors

    found = given_candidates(FaissHNSW(), X_scaled, n_candidates)
    truth = exact_neighbors(X_scaled, n_candidates)
    hits = (found[:, :, None] == truth[:, None, :]).any(axis=2).sum()
    return float(hits / truth.size)


def measure(case: str, source: str) -> dict:
    from causefs import CauseFS
    from causefs.app.evaluation import evaluate_ranking
    from causefs.core.loop import seconds_by
    from causefs.numerics.scaling import scale_features
    from causefs.selectors import ranking_from_scores

    X, y = bench_scale.load_case(case)
    scaled = scale_features(X, "minmax")
    clusters = int(np.unique(y).size)
    start = time.perf_counter()
    neighbors = (exact_graph(scaled) if source == "exact_graph"
                 else FaissHNSW() if source == "faiss_hnsw" else None)
    graph_seconds = time.perf_counter() - start
    start = time.perf_counter()
    est = CauseFS(n_clusters=clusters, n_features_to_select=20, random_state=0,
                  memory_limit=None, trace=True).fit(X, neighbors=neighbors)
    seconds = time.perf_counter() - start
    ranking = ranking_from_scores(est.scores_)
    scores = evaluate_ranking(scaled, y, ranking, [20], n_clusters=clusters, n_runs=20,
                              seed=0)[20]
    return {"n_iter": est.n_iter_, "objective": float(est.objective_history_[-1]),
            "top20": ranking[:20].tolist(), "acc": scores["acc_mean"],
            "nmi": scores["nmi_mean"], "fit_seconds": seconds, "graph_seconds": graph_seconds,
            "init_seconds": seconds_by(est.trace_, "iteration").get(0, 0.0),
            "block_seconds": seconds_by(est.trace_),
            "recall": hnsw_recall(scaled) if source == "faiss_hnsw" else None}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", default=["usps", "synthetic:50000x64"])
    parser.add_argument("--sources", nargs="+", default=list(SOURCES), choices=SOURCES)
    parser.add_argument("--out", type=Path, default=Path("results/given_neighbors"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    print("| case | neighbours | iterations | J | top-20 overlap with own | ACC / NMI (%) | "
          "recall of the given candidates | graph s (outside the fit) | initialization s | "
          "fit s |")
    print("|" + "---|" * 10)
    for case in args.cases:
        result = {}
        for source in dict.fromkeys(["own", *args.sources]):
            result[source] = bench_scale.stored_result(
                args.out / f"{case.replace(':', '_')}__{source}.json",
                lambda: measure(case, source))
        own = set(result["own"]["top20"])
        for source, r in result.items():
            given = "-" if r["recall"] is None else f"{r['recall']:.3f}"
            print(f"| {case} | {source} | {r['n_iter']} | {r['objective']:.6g} | "
                  f"{len(set(r['top20']) & own)}/20 | {100 * r['acc']:.2f} / "
                  f"{100 * r['nmi']:.2f} | {given} | {r['graph_seconds']:.1f} | "
                  f"{r['init_seconds']:.1f} | {r['fit_seconds']:.1f} |")


if __name__ == "__main__":
    main()
