"""Speed targets of the performance issues, each measured beside a reference commit and
beside NDFS and MCFS in the same run.

    python benchmarks/bench_speed.py run --reference /path/to/checkout-of-4760b8a
    python benchmarks/bench_speed.py report [--write docs/PERFORMANCE.md]

Every fit runs in a fresh subprocess (its peak RSS is its own): for each case, this
checkout's CauseFS, the reference commit's (this interpreter with ``PYTHONPATH`` the
reference checkout, ``git worktree add ../ref4760 4760b8a``; or ``--reference-python``, an
interpreter where it is installed) and the project's NDFS and MCFS (this checkout, on the
data min-max scaled as CauseFS scales it), one after the other, so that every ratio is
measured side by side under the same conditions. The wall time, the CPU time (user +
system, every thread), the peak RSS, the time estimate the fit logged before it started
(``time_estimate_``) and the 1-minute load average before and after each fit are
recorded: a wall time taken while the load was above ``QUIET_LOAD`` outside the fit is
flagged in the table. ``--repeats R`` fits every case and code R times (fresh processes,
the codes in turn: this code, the baselines, the reference, R rounds) and keeps the least
wall time: on two cores one fit's wall time varied by up to 1.8x between runs of the same
code (UMIST 1.85 s and 3.26 s), and the first fits after a quiet spell ran 1.4x slower
than the same code's later ones (digits), which, with the codes one after the other, had
fallen on one code. Results
are written atomically to ``--out/<case>__<code>.json``; a re-run skips what is stored,
so an interrupted run resumes. A case too large to fit
(``ESTIMATE_ONLY``) is reported from the library's cost model (``causefs.engine.estimate``)
and said to be an estimate.

All fits: CauseFS defaults (``max_iter=30``), ``n_features_to_select=20``,
``random_state=0``, no memory limit; synthetic cases are
:func:`causefs.datasets.make_causal` (``synthetic:<n>x<d>``, 10 clusters, or
``synthetic:<n>x<d>:<clusters>[:<seed>]``); ``binary:<n>x<d>:<clusters>``
(:func:`bench_scale.load_case`) are text-like 0/1 features whose rates differ by cluster;
``text:<n>x<d>`` are sparse tf-idf rows of 10 topics, 1 % non-zeros, given to the fit as a
``scipy.sparse`` matrix (:func:`bench_input.text_like`).
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
#: 0 = not run: the reference's fit at a million samples took 36 min, issue 24)
TARGETS = [
    ("digits", 0.5, None, None),
    ("jaffe", 0.5, None, None),
    ("umist", 1.5, None, None),
    ("coil20", 2.5, None, None),
    ("coil20/ablation_I", None, None, None),
    ("coil20/full", None, None, None),  # the paper's loop (the default is CAUSE-FS-I)
    ("usps", 6, 1, None),
    ("synthetic:1000x100:4", 0.5, None, None),
    ("synthetic:100000x256", 60, 3, None),
    ("synthetic:1000000x64", 600, 8, 0),
    ("synthetic:10000000x16", None, None, 0),
]
#: the full schedule's time over its ablation I's (the default's), on COIL20
ABLATION_RATIO = 1.3
#: the shared datasets' time over NDFS's in the same run
NDFS_RATIO = 3.0
SHARED_DATASETS = ("jaffe", "umist", "coil20", "usps")
#: cases run beside NDFS and MCFS (the baselines are not run at large n)
BASELINE_MAX_N = 20_000
#: cases reported from the cost model only (10^7 x 16 holds 1.2 GB of data and its fit
#: would take hours here)
ESTIMATE_ONLY = ("synthetic:10000000x16",)
#: a 1-minute load average above this, less the fit's own threads, flags a wall time
QUIET_LOAD = 0.5
#: the estimate logged before a large fit is judged within this factor of the measured
ESTIMATE_FACTOR = 2.0
LARGE_N = 100_000


def load_case(name: str):
    """Data of a case; ``<case>/<schedule>`` runs another schedule on the same data."""
    return bench_scale.load_case(name.split("/")[0])


def child(spec: dict) -> dict:
    """One measurement in this process: a CauseFS fit, the baselines, or an estimate."""
    if spec["code"] == "estimate":
        return estimate_only(spec)
    X, y = load_case(spec["case"])
    if spec["code"] == "baselines":
        return {"case": spec["case"], "code": "baselines", "n": X.shape[0], "d": X.shape[1],
                **baselines(X, int(np.unique(y).size))}
    return fit_cause_fs(spec, X, y)


def fit_cause_fs(spec: dict, X, y) -> dict:
    """A default CauseFS fit: what it cost and what it found."""
    from causefs import CauseFS

    try:
        from causefs.core.loop import seconds_by
    except ImportError:  # the reference commit's layout
        from causefs.core.scheduler import seconds_by

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
        "memory_estimate": getattr(est, "memory_estimate_", None),
        "top20": np.argsort(est.ranking_)[:20].tolist(),
    }


def baselines(X, n_clusters: int) -> dict:
    """Wall seconds of the project's NDFS and MCFS on the min-max scaled data."""
    from causefs.numerics.scaling import scale_features
    from causefs.selectors import get_selector

    X = scale_features(np.asarray(X, dtype=float), "minmax")
    out = {}
    for method in ("ndfs", "mcfs"):
        selector = get_selector(method)()
        start = time.perf_counter()
        selector.score(X, n_clusters=n_clusters, n_features_to_select=20, random_state=0)
        out[f"{method}_seconds"] = time.perf_counter() - start
    return out


def estimate_only(spec: dict) -> dict:
    """The cost model's time and memory of a default fit of a synthetic case's size."""
    from causefs.engine import estimate
    from causefs.model.settings import Settings

    n, d = (int(v) for v in spec["case"].split(":")[1].split("x"))
    expected = estimate(n, d, Settings(n_clusters=10, n_features_to_select=20,
                                       random_state=0, memory_limit=None))
    return {"case": spec["case"], "code": "estimate", "n": n, "d": d,
            "time_estimate": expected.seconds, "memory_estimate": expected.memory.peak}


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(out: Path, runs: list, repeats: int = 1) -> None:
    """Measure the ``runs`` (``(spec, python, path)``: the code at ``path`` first on the
    import path of ``python``) not yet stored: ``repeats`` rounds, each fitting every one
    of them once in a fresh process, in turn, so that a drift of the machine's speed (the
    first fits after a quiet spell ran up to 1.4x slower here) falls on every code alike;
    each stores the round of least wall time (all the wall times are kept)."""
    from causefs.app.store import write_json_atomic

    def path_of(spec):
        return out / f"{spec['case'].replace(':', '_').replace('/', '-')}__{spec['code']}.json"

    missing = [run for run in runs if not path_of(run[0]).exists()]
    for spec, _, _ in missing:
        print(f"running {spec['case']} with {spec['code']} code", flush=True)
    done: dict = {spec["code"]: [] for spec, _, _ in missing}
    for _ in range(repeats):
        for spec, python, path in missing:
            if done[spec["code"]] is None:  # failed in an earlier round
                continue
            before = os.getloadavg()[0]
            fit = subprocess.run([python, str(Path(__file__).resolve()), "_child",
                                  json.dumps(spec)], capture_output=True, text=True, cwd="/",
                                 env={**os.environ, "PYTHONPATH": path})
            if fit.returncode != 0:
                print(f"  {spec['code']} failed: {fit.stderr[-2000:]}", flush=True)
                done[spec["code"]] = None
                continue
            result = json.loads(fit.stdout.strip().splitlines()[-1])
            result.update(load_before=before, load_after=os.getloadavg()[0])
            done[spec["code"]].append(result)
    for spec, _, _ in missing:
        rounds = done[spec["code"]]
        if not rounds:
            continue
        timed = "fit_seconds" if "fit_seconds" in rounds[0] else "ndfs_seconds"
        result = min(rounds, key=lambda run: run.get(timed, 0.0))
        result.update(machine=bench_scale.machine(), repeats=repeats,
                      all_seconds=[run.get(timed) for run in rounds])
        write_json_atomic(path_of(spec), result)


def cases(args) -> list:
    """The targets named by ``--cases`` (all by default); a case without a target
    (``dev:mushrooms``, any of :func:`bench_scale.load_case`'s names) is measured and
    reported without a verdict."""
    if not args.cases:
        return TARGETS
    known = {target[0]: target for target in TARGETS}
    return [known.get(case, (case, None, None, None)) for case in args.cases]


def run(args):
    """Every case: this code, the baselines beside it and the reference, in turn."""
    here = str(Path(__file__).resolve().parents[1])
    print(f"uptime before: {_uptime()}", flush=True)
    for case, _, _, reference_iterations in cases(args):
        if case in ESTIMATE_ONLY:
            measure(args.out, [({"case": case, "code": "estimate"}, sys.executable, here)])
            continue
        runs = [({"case": case, "code": "new", "max_iter": 30}, sys.executable, here)]
        # the baselines take dense data: none beside the sparse text cases
        if bench_scale_n(case) <= BASELINE_MAX_N and "/" not in case and \
                not case.startswith("text:"):
            runs.append(({"case": case, "code": "baselines"}, sys.executable, here))
        if args.reference and reference_iterations != 0:
            runs.append(({"case": case, "code": "reference",
                          "max_iter": reference_iterations or 30},
                         args.reference_python or sys.executable, args.reference))
        measure(args.out, runs, args.repeats)
    print(f"uptime after: {_uptime()}", flush=True)


def bench_scale_n(case: str) -> int:
    """The number of samples of a case, read from its name where it says it."""
    name = case.split("/")[0]
    return int(name.split(":")[1].split("x")[0]) if name.startswith("synthetic:") else 0


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def gib(value):
    return value / (1 << 30)


def report(args):
    label = args.reference_label
    print(f"| case | n | d | target | iterations (stop) | wall s | CPU s | peak GiB | "
          f"wall s {label} | peak GiB {label} | speed-up | top-20 overlap with {label} | "
          "NDFS s | MCFS s | CauseFS / NDFS | estimate logged s (measured / estimate) | "
          "load before / after | verdict |")
    print("|" + "---|" * 18)
    stored = {p.stem: json.loads(p.read_text()) for p in sorted(args.out.glob("*.json"))}
    for case, target, memory, _ in cases(args):
        key = case.replace(":", "_").replace("/", "-")
        found = {code: stored.get(f"{key}__{code}")
                 for code in ("new", "reference", "baselines", "estimate")}
        if found["estimate"] is not None:
            print("| " + " | ".join(_estimate_row(case, found["estimate"])) + " |")
        elif found["new"] is not None:
            print("| " + " | ".join(str(c) for c in _row(
                case, target, memory, found, stored.get("coil20-ablation_I__new"))) + " |")
    machines = {json.dumps(r["machine"], sort_keys=True) for r in stored.values()}
    print("\nmachine: " + "; ".join(sorted(machines)))


def _estimate_row(case, result) -> list:
    cells = [case, str(result["n"]), str(result["d"]), "-",
             "not run: an estimate from the cost model", "-", "-",
             f"{gib(result['memory_estimate']):.1f} (estimated)"]
    return cells + ["-"] * 7 + [f"{result['time_estimate']:.0f} (estimated)", "-", "-"]


def _row(case, target, memory, found, ablation) -> list:
    """A table row: the new fit, the reference, the baselines and the verdict (on the
    wall time)."""
    new, ref, base = found["new"], found["reference"], found["baselines"]
    seconds = new["fit_seconds"]
    verdict = []
    if target is not None:
        verdict.append(("met" if seconds <= target else f"missed {seconds / target:.1f}x")
                       + f" (≤ {target} s)")
    if memory is not None:
        verdict.append(("met" if gib(new["peak_rss"]) <= memory else "missed")
                       + f" (≤ {memory} GB)")
    if case == "coil20/full" and ablation is not None:
        ratio = seconds / ablation["fit_seconds"]
        verdict.append(f"full / ablation_I = {ratio:.2f} "
                       + ("met" if ratio <= ABLATION_RATIO else "missed")
                       + f" (≤ {ABLATION_RATIO})")
    ndfs = seconds / base["ndfs_seconds"] if base else None
    if ndfs is not None and case in SHARED_DATASETS:
        verdict.append(("met" if ndfs <= NDFS_RATIO else "missed") + f" (≤ {NDFS_RATIO:g}x NDFS)")
    estimate = new.get("time_estimate")
    if estimate and new["n"] >= LARGE_N:
        verdict.append(("met" if 1 / ESTIMATE_FACTOR <= seconds / estimate <= ESTIMATE_FACTOR
                        else "missed") + f" (estimate within {ESTIMATE_FACTOR:g}x)")
    load = (f"{new['load_before']:.2f} / {new['load_after']:.2f}"
            if "load_before" in new else "-")
    cells = [case, new["n"], new["d"], ", ".join(filter(None, [
                 f"{target} s" if target else "", f"{memory} GB" if memory else ""])) or "-",
             f"{new['n_iter']} ({new.get('stop_reason') or '-'})",
             f"{seconds:.2f}", f"{new['cpu_seconds']:.2f}", f"{gib(new['peak_rss']):.2f}"]
    cells += _reference_cells(new, ref)
    cells += ([f"{base['ndfs_seconds']:.2f}", f"{base['mcfs_seconds']:.2f}", f"{ndfs:.1f}"]
              if base else ["-"] * 3)
    cells.append(f"{estimate:.0f} ({seconds / estimate:.2f})" if estimate else "-")
    return cells + [load, "; ".join(verdict) or "-"]


def _reference_cells(new, ref) -> list:
    """Wall time, peak memory, speed-up and top-20 overlap of the reference's fit."""
    if ref is None:
        return ["-"] * 4
    full = ref["max_iter"] == 30
    per = 1.0 if full else new["n_iter"] / max(ref["n_iter"], 1)
    return [f"{ref['fit_seconds']:.2f}" + ("" if full else f" ({ref['n_iter']} it.)"),
            f"{gib(ref['peak_rss']):.2f}",
            f"{ref['fit_seconds'] * per / new['fit_seconds']:.1f}x"
            + ("" if full else " per iteration"),
            f"{len(set(new['top20']) & set(ref['top20']))}/20" if full else "-"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["run", "report", "_child"])
    parser.add_argument("spec", nargs="?")
    parser.add_argument("--cases", nargs="+", help="only these cases (default: TARGETS)")
    parser.add_argument("--reference", help="checkout of the reference commit (put first "
                                            "on PYTHONPATH of its fits)")
    parser.add_argument("--reference-python", help="interpreter for the reference's fits "
                                                   "(default: this one)")
    parser.add_argument("--reference-label", default="4760b8a",
                        help="the reference's name in the table")
    parser.add_argument("--repeats", type=int, default=1,
                        help="fits of every case and code, each in a fresh process; the "
                             "least wall time is kept (all are stored)")
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
