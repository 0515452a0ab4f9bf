"""Record, or compare, the objective trace and the ranking of a set of fits.

A refactoring that claims to change nothing numerical is checked with it: record the
fits with one version of the code, then compare with another (same seed, same data)::

    python benchmarks/trace_equivalence.py record traces.json      # with the old code
    python benchmarks/trace_equivalence.py compare traces.json     # with the new code

``compare`` prints, per case, the largest relative difference of the objective trace,
whether the rankings are identical and the top-20 overlap, and exits 1 on any difference.
The paper's datasets are read from ``$CAUSEFS_DATA``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import scipy.sparse as sp

from causefs import CauseFS
from causefs.datasets import load_dataset, make_causal, make_digits_border, \
    make_shifted_clusters

#: name -> (dataset, CauseFS keywords besides n_clusters and random_state)
CASES = {
    "jaffe": ("jaffe", {}),
    "coil20": ("coil20", {}),
    "digits": ("digits", {}),
    "jaffe_ablation_I": ("jaffe", {"schedule": "ablation_I", "max_iter": 8}),
    "jaffe_ablation_II": ("jaffe", {"schedule": "ablation_II", "max_iter": 8}),
    "jaffe_dwr": ("jaffe", {"schedule": "dwr", "max_iter": 5}),
    "jaffe_srdo": ("jaffe", {"schedule": "srdo", "max_iter": 5}),
    "jaffe_rbf_pg": ("jaffe", {"kernel": "rbf", "qp": "projected_gradient", "max_iter": 5}),
    "synthetic_1500": ("synthetic", {"max_iter": 6}),
    "digits_paper": ("digits", {"schedule": "paper", "max_iter": 6}),
    "umist_monotone": ("umist", {"schedule": {
        "name": "monotone", "init": ["uniform_weights", "correlation_groups",
                                     "initial_fused_graph", "initial_granular_graphs",
                                     "spectral_embedding", "initial_selection",
                                     "initial_confounders"],
        "loop": ["selection_matrix",
                 {"name": "granular_graphs", "adaptive_update": "monotone"},
                 {"name": "fused_graph", "adaptive_update": "monotone"},
                 "embedding", "sample_weights"]}, "max_iter": 5}),
    # known nuisance variables Z: every schedule that reads them
    "shifted_adjusted": ("shifted", {}),
    "shifted_centered": ("shifted", {"schedule": "nuisance_centered", "max_iter": 6}),
    "shifted_balanced": ("shifted", {"schedule": "nuisance_balanced", "max_iter": 6}),
    "digits_border_adjusted": ("digits_border", {"max_iter": 6}),
    # the W system's n x n (Woodbury) form, and data kept sparse
    "jaffe_dual": ("jaffe", {"max_iter": 4, "schedule": {
        "name": "dual", "init": ["uniform_weights", "correlation_groups",
                                 "initial_fused_graph", "initial_granular_graphs",
                                 "spectral_embedding",
                                 {"name": "initial_selection", "system": "dual"},
                                 "initial_confounders"],
        "loop": [{"name": "selection_matrix", "system": "dual"}, "granular_graphs",
                 "fused_graph", "embedding", "sample_weights", "granularity",
                 "confounders"]}}),
    "sparse_counts": ("sparse", {"max_iter": 4}),
}


def _data(name):
    """X, the number of clusters, and the nuisance variables Z (None for most cases)."""
    nuisance = None
    if name == "synthetic":
        data = make_causal(n_samples=1500, n_features=40, seed=3)
    elif name == "sparse":  # non-negative counts, most of them 0: kept sparse by the fit
        rng = np.random.default_rng(5)
        counts = rng.poisson(0.3, (400, 60)) * (rng.random((400, 60)) < 0.4)
        counts[:, :10] += 3 * (np.arange(400)[:, None] % 4 == np.arange(10) % 4)
        return sp.csr_array(counts.astype(float)), 4, None
    elif name in ("shifted", "digits_border"):
        make = make_shifted_clusters if name == "shifted" else make_digits_border
        data = make(seed=1)
        nuisance = data.environment
    else:
        data = load_dataset(name)
    return np.asarray(data.X, dtype=float), int(len(np.unique(data.y))), nuisance


def run_case(name):
    dataset, params = CASES[name]
    X, n_clusters, nuisance = _data(dataset)
    start = time.perf_counter()
    est = CauseFS(n_clusters=n_clusters, n_features_to_select=20, random_state=0,
                  **params).fit(X, nuisance=nuisance)
    return {"history": [float(v) for v in est.objective_history_],
            "ranking": np.argsort(est.ranking_).tolist(),
            "seconds": time.perf_counter() - start}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("record", "compare"))
    parser.add_argument("path")
    parser.add_argument("--cases", nargs="*", default=list(CASES))
    args = parser.parse_args(argv)
    if args.mode == "record":
        out = {name: run_case(name) for name in args.cases}
        with open(args.path, "w") as f:
            json.dump(out, f)
        return 0
    with open(args.path) as f:
        reference = json.load(f)
    failed = False
    print(f"{'case':<20} {'iters':>5} {'max rel diff J':>15} {'ranking':>9} {'top-20':>7}")
    for name in args.cases:
        new, old = run_case(name), reference[name]
        a, b = np.array(new["history"]), np.array(old["history"])
        diff = (np.inf if a.shape != b.shape
                else float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))))
        same = new["ranking"] == old["ranking"]
        top = len(set(new["ranking"][:20]) & set(old["ranking"][:20]))
        failed |= not (diff == 0.0 and same)
        print(f"{name:<20} {a.size - 1:>5} {diff:>15.3g} {'same' if same else 'DIFFERS':>9} "
              f"{top:>4}/20")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
