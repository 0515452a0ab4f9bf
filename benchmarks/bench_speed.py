"""Speed targets of the performance issues, each measured beside a reference commit.

    python benchmarks/bench_speed.py run --reference-python /path/to/venv-f6e88d4/bin/python
    python benchmarks/bench_speed.py report [--write docs/PERFORMANCE.md]

Every case runs in a fresh subprocess (its peak RSS is its own), first with this checkout's
code, then with the reference interpreter (an environment where the reference commit,
f6e88d4 for the convergence and speed issue, is installed: ``git worktree add ../ref
f6e88d4 && python -m venv ../venv-ref && ../venv-ref/bin/pip install ../ref``), one case
after the other, so that each ratio is measured side by side under the same conditions.
Both the wall time and the CPU time (user + system, every thread) of the fit are
recorded. Results are written atomically to ``--out/<case>__<code>.json``; a re-run skips
what is stored, so an interrupted run resumes. A reference fit too slow to finish runs a
few iterations instead, and its time is compared per iteration; the table says so.

All fits: CauseFS defaults (``max_iter=30``), ``n_features_to_select=20``,
``random_state=0``; synthetic cases are :func:`causefs.datasets.make_causal`
(``synthetic:<n>x<d>``, 10 clusters, or ``synthetic:<n>x<d>:<clusters>``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import bench_scale  # the scale benchmark beside this file: data, machine, generated tables

#: (case, target seconds, target GiB or None, reference iterations: None = a full fit,
#: 0 = not run: a reference iteration at a million samples takes far longer than the
#: whole target)
TARGETS = [
    ("digits", 1, None, None),
    ("jaffe", 0.5, None, None),
    ("umist", 1.5, None, None),
    ("coil20", 3, None, None),
    ("coil20/ablation_I", None, None, None),
    ("usps", 12, 1, None),
    ("synthetic:1000x100:4", 1, None, None),
    ("synthetic:200x10000", 15, None, None),
    ("synthetic:100000x256", 240, 4, 2),
    ("synthetic:1000000x64", 1800, 12, 0),
]
#: the full schedule's time over its ablation I's, on COIL20
ABLATION_RATIO = 1.3

def load_case(name: str):
    """Data of a case; ``<case>/<schedule>`` runs another schedule on the same data."""
    return bench_scale.load_case(name.split("/")[0])


def child(spec: dict) -> dict:
    """One fit in this process: what it cost and what it found."""
    from causefs import CauseFS

    try:
        from causefs.core.loop import seconds_by
    except ImportError:  # the reference commit's layout
        from causefs.scheduler import seconds_by

    X, y = load_case(spec["case"])
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    params = dict(n_clusters=int(np.unique(y).size), n_features_to_select=20, random_state=0,
                  max_iter=spec["max_iter"], memory_limit=None)
    if "/" in spec["case"]:
        params["schedule"] = spec["case"].split("/")[1]
    start, cpu = time.perf_counter(), _cpu_seconds()
    est = CauseFS(**params).fit(X)
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    per_iteration = seconds_by(est.trace_, "iteration")
    init = per_iteration.pop(0, 0.0)
    return {
        "case": spec["case"], "code": spec["code"], "n": X.shape[0], "d": X.shape[1],
        "max_iter": spec["max_iter"], "n_iter": est.n_iter_, "fit_seconds": seconds,
        "cpu_seconds": cpu, "stop_reason": getattr(est, "stop_reason_", None),
        "init_seconds": init,
        "seconds_per_iteration": (seconds - init) / max(est.n_iter_, 1),
        "block_seconds": seconds_by(est.trace_),
        "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "baseline_rss": baseline, "objective": float(est.objective_history_[-1]),
        "time_estimate": getattr(est, "time_estimate_", None),
        "top20": np.argsort(est.ranking_)[:20].tolist(),
    }


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(out: Path, spec: dict, python: str) -> dict | None:
    """The stored result of a case, measured first if missing."""
    from causefs.app.store import write_json_atomic

    path = out / f"{spec['case'].replace(':', '_').replace('/', '-')}__{spec['code']}.json"
    if path.exists():
        return json.loads(path.read_text())
    print(f"running {spec['case']} with {spec['code']} code ({spec['max_iter']} iterations)",
          flush=True)
    # the reference interpreter must import its installed causefs, not this checkout
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])
           if spec["code"] == "new" else ""}
    done = subprocess.run([python, str(Path(__file__).resolve()), "_child", json.dumps(spec)],
                          capture_output=True, text=True, env=env, cwd="/")
    if done.returncode != 0:
        print(f"  failed: {done.stderr[-2000:]}", flush=True)
        return None
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["machine"] = bench_scale.machine()
    write_json_atomic(path, result)
    return result


def cases(args) -> list:
    specs = []
    for case, target, memory, reference_iterations in TARGETS:
        if args.cases and case not in args.cases:
            continue
        specs.append((case, target, memory, reference_iterations))
    return specs


def run(args):
    for case, _, _, reference_iterations in cases(args):
        measure(args.out, {"case": case, "code": "new", "max_iter": 30}, sys.executable)
        if args.reference_python and reference_iterations != 0:
            measure(args.out, {"case": case, "code": "reference",
                               "max_iter": reference_iterations or 30},
                    args.reference_python)


def gib(value):
    return value / (1 << 30)


def report(args):
    print("| case | n | d | target | iterations (stop) | wall s | CPU s | wall s f6e88d4 | "
          "CPU s f6e88d4 | speed-up wall / CPU | peak RSS GiB new / ref | top-20 overlap | "
          "estimated s | verdict |")
    print("|" + "---|" * 14)
    stored = {p.stem: json.loads(p.read_text()) for p in sorted(args.out.glob("*.json"))}
    coil = stored.get("coil20__new")
    for case, target, memory, reference_iterations in cases(args):
        key = case.replace(":", "_").replace("/", "-")
        new, ref = stored.get(f"{key}__new"), stored.get(f"{key}__reference")
        if new is not None:
            print("| " + " | ".join(str(c) for c in _row(case, target, memory, new, ref, coil,
                                                          args.judge)) + " |")
    machines = {json.dumps(r["machine"], sort_keys=True) for r in stored.values()}
    print("\nmachine: " + "; ".join(sorted(machines)))


def _row(case, target, memory, new, ref, coil, judged="wall") -> list:
    """A table row: the new fit, the reference beside it, and the verdict (on the wall
    time, or on the CPU time where the machine was shared)."""
    verdict = []
    seconds = new["fit_seconds"] if judged == "wall" else new["cpu_seconds"]
    if target is not None:
        verdict.append(("met" if seconds <= target else f"missed {seconds / target:.1f}x")
                       + f" ({judged} ≤ {target} s)")
    if memory is not None:
        verdict.append(("met" if gib(new["peak_rss"]) <= memory else "missed")
                       + f" (≤ {memory} GB)")
    if case == "coil20/ablation_I" and coil is not None:
        key = "fit_seconds" if judged == "wall" else "cpu_seconds"
        ratio = coil[key] / new[key]
        verdict.append(f"full / ablation_I = {ratio:.2f} "
                       + ("met" if ratio <= ABLATION_RATIO else "missed")
                       + f" (≤ {ABLATION_RATIO})")
    cells = [case, new["n"], new["d"], ", ".join(filter(None, [
                 f"{target} s" if target else "", f"{memory} GB" if memory else ""])) or "-",
             f"{new['n_iter']} ({new.get('stop_reason') or '-'})",
             f"{new['fit_seconds']:.2f}", f"{new.get('cpu_seconds', float('nan')):.2f}"]
    if ref is not None:
        full = ref["n_iter"] == ref["max_iter"] == 30
        per = 1.0 if full else new["n_iter"] / max(ref["n_iter"], 1)
        wall = ref["fit_seconds"] * per / new["fit_seconds"]
        cpu = ref.get("cpu_seconds", float("nan")) * per / new.get("cpu_seconds", float("nan"))
        cells += [f"{ref['fit_seconds']:.2f}" + ("" if full else f" ({ref['n_iter']} it.)"),
                  f"{ref.get('cpu_seconds', float('nan')):.2f}",
                  f"{wall:.1f}x / {cpu:.1f}x" + ("" if full else " per iteration"),
                  f"{gib(new['peak_rss']):.2f} / {gib(ref['peak_rss']):.2f}",
                  f"{len(set(new['top20']) & set(ref['top20']))}/20" if full else "-"]
    else:
        cells += ["-", "-", "-", f"{gib(new['peak_rss']):.2f} / -", "-"]
    estimate = new.get("time_estimate")
    return cells + [f"{estimate:.0f}" if estimate else "-", "; ".join(verdict) or "-"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["run", "report", "_child"])
    parser.add_argument("spec", nargs="?")
    parser.add_argument("--cases", nargs="+", help="only these cases (names of TARGETS)")
    parser.add_argument("--judge", choices=["wall", "cpu"], default="wall",
                        help="the time the verdict compares with the target: the wall time "
                        "(a quiet machine), or the CPU time (a shared machine: with one BLAS "
                        "thread a fit's CPU time is its wall time alone on the machine)")
    parser.add_argument("--reference-python", help="interpreter with the reference commit "
                                                   "installed")
    parser.add_argument("--out", type=Path, default=Path("results/bench_speed"))
    parser.add_argument("--write", type=Path, help="report into this Markdown file between "
                        "<!-- speed:begin --> and <!-- speed:end -->")
    args = parser.parse_args()
    if args.what == "_child":
        print(json.dumps(child(json.loads(args.spec))))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    if args.what == "run":
        run(args)
        return
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        report(args)
    if args.write:
        bench_scale.write_generated(args.write, buffer.getvalue(), marker="speed")
    print(buffer.getvalue())


if __name__ == "__main__":
    main()
