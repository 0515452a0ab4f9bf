"""A default fit of wide data beside a reference checkout, in the same run: wall time,
peak RSS, the memory the fit estimated, and whether the selection moved.

    python benchmarks/wide_fit.py --reference ../ref --cases synthetic:120x20000:3

Each fit runs in its own subprocess with the checkout first on ``sys.path``, the codes in
turn, ``--repeats`` times; the table keeps each code's least wall time and its peak RSS
(``ru_maxrss``: the interpreter and its libraries included). Cases are
``benchmarks/bench_scale.py``'s (``synthetic:<n>x<d>:<clusters>``, ``text:<n>x<d>``...).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

CHILD = r'''
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
code, case = sys.argv[1], sys.argv[2]
sys.path[:0] = [code, code + "/benchmarks"]
import numpy as np, causefs
assert causefs.__file__.startswith(code), causefs.__file__
import bench_scale
from causefs import CauseFS
X, y = bench_scale.load_case(case)
start = time.perf_counter()
fit = CauseFS(n_clusters=int(np.unique(y).size), n_features_to_select=20,
              random_state=0).fit(X)
print(json.dumps({"wall": time.perf_counter() - start,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "estimate": fit.memory_estimate_, "n_iter": fit.n_iter_,
                  "objective": float(fit.objective_history_[-1]),
                  "top20": np.argsort(fit.ranking_, kind="stable")[:20].tolist()}))
'''


def fit(code: str, case: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, code, case], capture_output=True,
                         text=True, cwd="/", check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", required=True, help="checkout of the reference")
    parser.add_argument("--reference-label", default="reference")
    parser.add_argument("--cases", nargs="+", default=["synthetic:120x20000:3"])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    codes = {"this code": str(HERE), args.reference_label: str(Path(args.reference).resolve())}
    gib = 2.0 ** 30
    print(f"load before: {os.getloadavg()[0]:.2f}")
    print("| case | code | wall s (least) | peak RSS GiB | estimate GiB | iterations | J | "
          "top-20 as the reference's |")
    print("|---|---|---|---|---|---|---|---|")
    for case in args.cases:
        runs = {label: [] for label in codes}
        for _ in range(args.repeats):
            for label, code in codes.items():
                runs[label].append(fit(code, case))
        reference = runs[args.reference_label][0]
        for label, results in runs.items():
            best = min(results, key=lambda r: r["wall"])
            print(f"| {case} | {label} | {best['wall']:.2f} | {max(r['rss'] for r in results) / gib:.2f} "
                  f"| {best['estimate'] / gib:.2f} | {best['n_iter']} | {best['objective']:.10g} "
                  f"| {len(set(best['top20']) & set(reference['top20']))}/20 |")
        new, old = (min(r["wall"] for r in runs[k]) for k in codes)
        print(f"| {case} | ratio | {old / new:.2f}x faster | "
              f"{max(r['rss'] for r in runs[args.reference_label]) / max(r['rss'] for r in runs['this code']):.2f}x less | | | | |")
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
