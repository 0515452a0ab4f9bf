"""The quality of the selections a speed benchmark stored, code beside code.

    python benchmarks/bench_quality.py --out results/bench_fresh [--runs 20]

``bench_speed.py run`` stores every fit's top 20 (``--out/<case>__<code>.json``); this
scores each with k-means++ ``--runs`` times on the selected columns of the case's data,
min-max scaled as the fit scaled it (ACC with the Hungarian map, NMI arithmetic, the
labels the case's loader gives), and prints one row per case and code with the top-20
overlap between the codes. A faster path is only worth having if these stay within one
k-means standard deviation of the reference's.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

import bench_scale  # the cases' data


def score(case: str, top20: list, runs: int) -> dict:
    from causefs.app.metrics import kmeans_scores
    from causefs.numerics.scaling import scale_features

    X, y = bench_scale.load_case(case.split("/")[0])
    return kmeans_scores(scale_features(np.asarray(X, dtype=float))[:, top20], y, n_runs=runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    fits: dict = {}
    for path in sorted(args.out.glob("*.json")):
        result = json.loads(path.read_text())
        if "top20" in result:
            fits.setdefault(result["case"], {})[result["code"]] = result
    print(f"| case | code | wall s | final J | top-20 overlap with {'/'.join(sorted({c for f in fits.values() for c in f} - {'new'}))} "
          f"| ACC % | NMI % |")
    print("|---|---|---|---|---|---|---|")
    for case, codes in fits.items():
        new = set(codes.get("new", {}).get("top20", []))
        for code, result in sorted(codes.items(), key=lambda item: item[0] != "new"):
            quality = score(case, result["top20"], args.runs)
            overlap = f"{len(new & set(result['top20']))}/20" if code != "new" else "-"
            print(f"| {case} | {code} | {result['fit_seconds']:.2f} | {result['objective']:.6g} "
                  f"| {overlap} | {100 * quality['acc_mean']:.2f} ± {100 * quality['acc_std']:.2f} "
                  f"| {100 * quality['nmi_mean']:.2f} ± {100 * quality['nmi_std']:.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
