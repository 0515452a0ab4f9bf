"""What the default-level run-time checks cost a real fit, measured side by side.

    python benchmarks/bench_checks.py run [--repeats 3] [--out results/bench_checks]
    python benchmarks/bench_checks.py report [--out ...]

Every case is a default CauseFS fit (``max_iter=30``, ``n_features_to_select=20``,
``random_state=0``, one BLAS thread) of a benchmark dataset, in two arms run one after
the other in a fresh subprocess each, alternating which goes first:

* ``checks``: the code as it is: at every block the declared writes and finite values,
  and the descent of every descent block on iterations 1, 2, 4, 8, ...
  (:class:`causefs.core.contracts.Contract`);
* ``bare``: the same fit with the contract reduced to what it checked before (a State of
  the same problem).

CPU time of the fit (``time.process_time``) is the measure; the machine is shared, so wall
time is reported beside it and the ratio is taken per pair. Results are written
atomically to ``--out/<case>__<arm>__<repeat>.json``; a re-run resumes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

CASES = ("jaffe", "coil20")
ARMS = ("checks", "bare")
OUT = Path("results/bench_checks")

FIT = r"""
import json, sys, time, warnings
import numpy as np
from causefs import CauseFS
from causefs.core import contracts
from causefs.datasets import load_benchmark

case, arm = sys.argv[1], sys.argv[2]
if arm == "bare":  # the check of d3c3fc9: a State of the same problem, nothing else
    def bare(self, block, before, prints, after, iteration, cache=None):
        contracts.check_returned_state(block, before, after, iteration)
    contracts.Contract.check = bare
data = load_benchmark(case)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    cpu, wall = time.process_time(), time.perf_counter()
    est = CauseFS(n_clusters=data.n_classes, n_features_to_select=20, random_state=0).fit(data.X)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
descent = [str(w.message)[:200] for w in caught if w.category is contracts.DescentWarning]
print(json.dumps({"cpu": cpu, "wall": wall, "n_iter": int(est.n_iter_),
                  "objective": float(est.objective_history_[-1]),
                  "descent_warnings": descent}))
"""


def run(repeats: int, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    for repeat in range(repeats):
        for case in CASES:
            order = ARMS if repeat % 2 == 0 else ARMS[::-1]
            for arm in order:
                target = out / f"{case}__{arm}__{repeat}.json"
                if target.exists():
                    continue
                proc = subprocess.run([sys.executable, "-c", FIT, case, arm], env=env,
                                      capture_output=True, text=True, check=True)
                result = {"case": case, "arm": arm, "repeat": repeat,
                          **json.loads(proc.stdout.strip().splitlines()[-1])}
                tmp = target.with_suffix(".tmp")
                tmp.write_text(json.dumps(result))
                os.replace(tmp, target)
                print(f"{case:8s} {arm:7s} #{repeat}: cpu {result['cpu']:.2f} s, wall "
                      f"{result['wall']:.2f} s, {len(result['descent_warnings'])} descent "
                      "warnings", flush=True)


def report(out: Path) -> None:
    results = [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.processor() or ''}"
          f" python {platform.python_version()}; one BLAS thread, CPU seconds of the fit")
    print()
    print("| dataset | pairs | CPU s bare (median) | CPU s checks (median) | ratio checks/bare "
          "(median of pairs) | wall s bare / checks | descent warnings |")
    print("|---|---|---|---|---|---|---|")
    for case in CASES:
        pairs = []
        for repeat in sorted({r["repeat"] for r in results if r["case"] == case}):
            arms = {r["arm"]: r for r in results if r["case"] == case and r["repeat"] == repeat}
            if set(arms) == set(ARMS):
                pairs.append(arms)
        if not pairs:
            continue
        median = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
        bare = median([p["bare"]["cpu"] for p in pairs])
        checks = median([p["checks"]["cpu"] for p in pairs])
        ratio = median([p["checks"]["cpu"] / p["bare"]["cpu"] for p in pairs])
        wall = (median([p["bare"]["wall"] for p in pairs]),
                median([p["checks"]["wall"] for p in pairs]))
        warned = sum(len(p["checks"]["descent_warnings"]) for p in pairs)
        same = all(p["checks"]["objective"] == p["bare"]["objective"] for p in pairs)
        print(f"| {case} | {len(pairs)} | {bare:.2f} | {checks:.2f} | {ratio:.3f} | "
              f"{wall[0]:.1f} / {wall[1]:.1f} | {warned} |" + ("" if same else
                                                              " objectives differ!"))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["run", "report"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.repeats, args.out)
    report(args.out)


if __name__ == "__main__":
    main()
