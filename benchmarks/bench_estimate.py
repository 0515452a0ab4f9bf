"""The time estimate of a fit against its measured time, block by block, at large n.

    python benchmarks/bench_estimate.py run [--sizes 20000x8,60000x8,...] [--out ...]
    python benchmarks/bench_estimate.py report [--out ...]

Every case fits uniform random data of n x d (10 clusters, the default settings, one BLAS
thread) in a fresh subprocess: the initialization blocks once and the loop blocks for
``--iterations`` iterations, each block timed in CPU seconds (``time.process_time``).
The report sets beside them the seconds :mod:`causefs.budget` estimates for each block
from the parts' cost declarations (:meth:`causefs.core.parts.Part.cost`) of the code it
runs with, so one set of measurements compares the estimates of two checkouts
(``PYTHONPATH=<other checkout> python benchmarks/bench_estimate.py report``), and the
ratio estimate / measured per block and for the whole fit (the loop scaled to
``max_iter``): the estimate is an order of magnitude, and a fit that takes minutes must
be announced as one. Results are written atomically to ``--out/<n>x<d>.json``; a re-run
resumes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

SIZES = ("20000x8", "60000x8", "20000x50", "60000x50")
OUT = Path("results/bench_estimate")

CASE = r"""
import json, sys, time
import numpy as np
from causefs import CauseFS
from causefs.core.state import State
from causefs.engine import build_parts, make_problem

n, d, iterations = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
X = np.random.default_rng(0).random((n, d))
settings = CauseFS(n_clusters=10, random_state=0).settings()
parts = build_parts(settings, seed=0)
state = State(make_problem(X, settings, parts, seed=0))
rows = []
for iteration, blocks in [(0, parts.init)] + [(i, parts.loop) for i in range(1, iterations + 1)]:
    for block in blocks:
        start = time.process_time()
        state = block.step(state)
        rows.append({"iteration": iteration, "block": block.name,
                     "cpu": time.process_time() - start})
print(json.dumps({"n": n, "d": d, "iterations": iterations, "max_iter": settings.max_iter,
                  "blocks": rows}))
"""


def estimates(n: int, d: int) -> tuple[dict, float]:
    """Estimated seconds of one step of every block (by phase and name) of the default
    fit of n x d, and of the whole fit, by the code on the path."""
    from causefs import CauseFS
    from causefs.budget import runtime
    from causefs.engine import build_parts, estimate, fit_size

    settings = CauseFS(n_clusters=10, random_state=0).settings()
    parts = build_parts(settings, seed=0)
    size = fit_size(n, d, parts)
    product = parts.kernel.cost(size)
    seconds = {}
    for loop, blocks in ((False, parts.init), (True, parts.loop)):
        for block in blocks:
            cost = block.cost(size)
            seconds[loop, block.name] = runtime.seconds(
                cost.flops + cost.balance_products * product.flops,
                cost.ops + cost.balance_products * product.ops)
    return seconds, estimate(n, d, settings, parts).seconds


def run(sizes, iterations: int, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    for size in sizes:
        target = out / f"{size}.json"
        if target.exists():
            continue
        n, d = size.split("x")
        proc = subprocess.run([sys.executable, "-c", CASE, n, d, str(iterations)], env=env,
                              capture_output=True, text=True, check=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_text(proc.stdout.strip().splitlines()[-1])
        os.replace(tmp, target)
        print(f"{size} done", flush=True)


def report(out: Path) -> None:
    import causefs

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, python "
          f"{platform.python_version()}; one BLAS thread; CPU seconds; estimates of "
          f"{Path(causefs.__file__).parent.parent}")
    for path in sorted(out.glob("*.json"), key=lambda p: [int(v) for v in p.stem.split("x")]):
        case = json.loads(path.read_text())
        estimated, fit_estimate = estimates(case["n"], case["d"])
        print(f"\n### n = {case['n']}, d = {case['d']}\n")
        print("| block | measured CPU s (init; mean per iteration) | estimated s | "
              "estimate / measured |")
        print("|---|---|---|---|")
        names = list(dict.fromkeys((r["iteration"] > 0, r["block"]) for r in case["blocks"]))
        total = 0.0
        for loop, name in names:
            rows = [r for r in case["blocks"] if r["block"] == name and (r["iteration"] > 0) == loop]
            cpu = sum(r["cpu"] for r in rows) / len(rows)
            total += cpu * (case["max_iter"] if loop else 1)
            ratio = estimated[loop, name] / cpu if cpu > 0.05 else float("nan")
            print(f"| {'loop' if loop else 'init'} {name} | {cpu:.2f} | "
                  f"{estimated[loop, name]:.2f} | {ratio:.2f} |")
        print(f"| whole fit ({case['max_iter']} iterations, extrapolated) | {total:.0f} | "
              f"{fit_estimate:.0f} | {fit_estimate / total:.2f} |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["run", "report"])
    parser.add_argument("--sizes", default=",".join(SIZES))
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.sizes.split(","), args.iterations, args.out)
    report(args.out)


if __name__ == "__main__":
    main()
