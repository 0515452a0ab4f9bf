"""Label-tuned rows from a results store of the paper's grid (docs/RESULTS.md).

    python benchmarks/grid_summary.py --store results/grid_store [--write docs/RESULTS.md]

For every dataset in the store: how many grid settings ran, the setting with the best
ACC at 20 features (chosen with the labels: the paper's practice), its ACC and NMI, and
the fitting time of the whole grid (sum of the fits' seconds) with the median fit.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from collections import defaultdict
from pathlib import Path

import numpy as np

import bench_scale  # the generated-table helper beside this file

from causefs.app.store import ResultStore


def summarize(store: Path) -> None:
    runs = defaultdict(list)
    for entry in ResultStore(store).entries():
        job = entry["job"]
        if job["method"] != "causefs" or not entry.get("metrics"):
            continue
        runs[job["dataset"]["name"]].append(entry)
    print("| dataset | settings run | best setting (alpha, lambda, beta) | ACC at 20 | "
          "NMI at 20 | grid fitting time | median fit |")
    print("|---|---|---|---|---|---|---|")
    for name, entries in sorted(runs.items()):
        def acc(entry):
            return entry["metrics"]["selected"]["20"]["acc_mean"]

        best = max(entries, key=acc)
        params = best["job"]["params"]
        scores = best["metrics"]["selected"]["20"]
        seconds = [e["fit_seconds"] for e in entries]
        print(f"| {name} | {len(entries)} | {params['alpha']:g}, {params['lam']:g}, "
              f"{params['beta']:g} | {100 * scores['acc_mean']:.2f} ± "
              f"{100 * scores['acc_std']:.2f} | {100 * scores['nmi_mean']:.2f} ± "
              f"{100 * scores['nmi_std']:.2f} | {sum(seconds):.0f} s | "
              f"{np.median(seconds):.1f} s |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, default=Path("results/grid_store"))
    parser.add_argument("--write", type=Path, help="into this Markdown file between "
                        "<!-- grid:begin --> and <!-- grid:end -->")
    args = parser.parse_args()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        summarize(args.store)
    if args.write:
        bench_scale.write_generated(args.write, buffer.getvalue(), marker="grid")
    print(buffer.getvalue())


if __name__ == "__main__":
    main()
