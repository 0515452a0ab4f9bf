"""Speed targets of the performance issue, each measured beside a reference commit.

    python benchmarks/bench_speed.py run --reference-python /path/to/venv-40b2e41/bin/python
    python benchmarks/bench_speed.py report [--write docs/PERFORMANCE.md]

Every case runs in a fresh subprocess (its peak RSS is its own), first with this checkout's
code, then with the reference interpreter (an environment where commit 40b2e41 is
installed: ``git worktree add ../ref 40b2e41 && python -m venv ../venv-ref &&
../venv-ref/bin/pip install ../ref``), one case after the other, so that each ratio is
measured side by side under the same conditions. Results are written atomically to
``--out/<case>__<code>.json``; a re-run skips what is stored, so an interrupted run
resumes. A reference fit too slow to finish (the large cases: hours at 40b2e41) runs
``--reference-iterations`` iterations instead, and its time is compared per iteration;
the table says so.

All fits: CauseFS defaults, ``max_iter=30``, ``n_features_to_select=20``,
``random_state=0``; synthetic cases are :func:`causefs.datasets.make_causal` with 10
clusters (``synthetic:<n>x<d>``).
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
#: 0 = not run (at 40b2e41 one iteration takes more than 20 minutes: 21 exact O(n^2) kNN
#: searches at n = 100,000; 25 M confounder pairs a balance product at d = 5000))
TARGETS = [
    ("jaffe", 1, None, None),
    ("umist", 4, None, None),
    ("coil20", 10, None, None),
    ("coil20/ablation_I", None, None, None),
    ("usps", 45, 2, None),
    ("synthetic:200x10000", 60, 4, 2),
    ("synthetic:60x10000", 30, 4, 2),
    ("synthetic:2000x5000", 180, None, 2),
    ("synthetic:7000x5000", 900, 8, 0),
    ("synthetic:100000x256", 900, 4, 0),
]
#: time per iteration against n at d = 256 (target exponent <= 1.15 from 2k to 64k)
EXPONENT_SIZES = [2000, 4000, 8000, 16000, 32000, 64000]


def load_case(name: str):
    """Data of a case; ``<case>/<schedule>`` runs another schedule on the same data."""
    return bench_scale.load_case(name.split("/")[0])


def child(spec: dict) -> dict:
    """One fit in this process: what it cost and what it found."""
    from causefs import CauseFS
    from causefs.core.scheduler import seconds_by

    X, y = load_case(spec["case"])
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    params = dict(n_clusters=int(np.unique(y).size), n_features_to_select=20, random_state=0,
                  max_iter=spec["max_iter"], memory_limit=None)
    if "/" in spec["case"]:
        params["schedule"] = spec["case"].split("/")[1]
    captured = _capture_final_state() if spec["code"] == "new" else None
    start = time.perf_counter()
    est = CauseFS(**params).fit(X)
    seconds = time.perf_counter() - start
    full_objective = None
    if captured:
        full_objective = uncapped_objective(captured[0], est.sigma)
    per_iteration = seconds_by(est.trace_, "iteration")
    init = per_iteration.pop(0, 0.0)
    return {
        "case": spec["case"], "code": spec["code"], "n": X.shape[0], "d": X.shape[1],
        "max_iter": spec["max_iter"], "n_iter": est.n_iter_, "fit_seconds": seconds,
        "init_seconds": init,
        "seconds_per_iteration": (seconds - init) / max(est.n_iter_, 1),
        "block_seconds": seconds_by(est.trace_),
        "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "baseline_rss": baseline, "objective": float(est.objective_history_[-1]),
        "time_estimate": getattr(est, "time_estimate_", None),
        "objective_uncapped": full_objective,
        "top20": np.argsort(est.ranking_)[:20].tolist(),
    }


def _capture_final_state() -> list:
    """Keep the final state of the next fit (the estimator stores W, mu, not S, G, F)."""
    import causefs.estimator

    captured = []
    run = causefs.estimator.run_cause_fs

    def wrapper(*args, **kwargs):
        result = run(*args, **kwargs)
        captured.append(result.state)
        return result

    causefs.estimator.run_cause_fs = wrapper
    return captured


def uncapped_objective(state, sigma: float) -> float:
    """J at ``state`` with every treatment's confounder set (``max_treatments=None``).

    A bounded treatment set makes the balance term, and so J, smaller by construction;
    the reference commit balances every treatment. Comparing J of both final states under
    the same function takes the new K rule on all treatments (the rule 40b2e41 used).
    """
    from causefs.blocks import ConfoundersBlock
    from causefs.model.objective import objective

    if state.K is None or state.problem.beta == 0:
        return float(objective(state).total)
    K = ConfoundersBlock(sigma=sigma, max_treatments=None).step(state).K
    return float(objective(state.replace(K=K)).total)


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
    if args.exponent:
        specs += [(f"synthetic:{n}x256", None, None, 1 if n <= 16000 else 0)
                  for n in EXPONENT_SIZES]
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
    print("| case | n | d | target | fit s (new) | s/iter new | s/iter 40b2e41 | speed-up "
          "(per iteration) | fit s 40b2e41 | peak RSS GiB new / ref | J new | J 40b2e41 | "
          "J rel. diff (all treatments) | top-20 overlap | estimated s | verdict |")
    print("|" + "---|" * 16)
    stored = {p.stem: json.loads(p.read_text()) for p in sorted(args.out.glob("*.json"))}
    coil = stored.get("coil20__new")
    for case, target, memory, reference_iterations in cases(args):
        key = case.replace(":", "_").replace("/", "-")
        new, ref = stored.get(f"{key}__new"), stored.get(f"{key}__reference")
        if new is None:
            continue
        verdict = []
        if target is not None:
            verdict.append(("met" if new["fit_seconds"] <= target else
                            f"missed {new['fit_seconds'] / target:.1f}x") + f" (≤ {target} s)")
        if memory is not None:
            verdict.append(("met" if gib(new["peak_rss"]) <= memory else "missed")
                           + f" (≤ {memory} GB)")
        if case == "coil20/ablation_I" and coil is not None:
            ratio = coil["fit_seconds"] / new["fit_seconds"]
            verdict.append(f"full / ablation_I = {ratio:.2f} "
                           + ("met" if ratio <= 1.5 else "missed") + " (≤ 1.5)")
        cells = [case, new["n"], new["d"], ", ".join(filter(None, [
                     f"{target} s" if target else "", f"{memory} GB" if memory else ""])) or "-",
                 f"{new['fit_seconds']:.1f}", f"{new['seconds_per_iteration']:.3f}"]
        if ref is not None:
            full = ref["max_iter"] == 30
            cells += [f"{ref['seconds_per_iteration']:.3f}",
                      f"{ref['seconds_per_iteration'] / new['seconds_per_iteration']:.1f}x",
                      f"{ref['fit_seconds']:.1f}" if full else
                      f"({ref['n_iter']} iteration{'s' if ref['n_iter'] > 1 else ''} only)",
                      f"{gib(new['peak_rss']):.2f} / {gib(ref['peak_rss']):.2f}",
                      _objective_cell(new),
                      f"{ref['objective']:.8g}" if full else "-",
                      f"{(_full_j(new) - ref['objective']) / abs(ref['objective']):+.2%}"
                      if full else "-",
                      f"{len(set(new['top20']) & set(ref['top20'])) / 20:.0%}" if full else "-"]
        else:
            cells += ["-"] * 3 + [f"{gib(new['peak_rss']):.2f} / -", _objective_cell(new),
                                  "-", "-", "-"]
        estimate = new.get("time_estimate")
        cells += [f"{estimate:.0f}" if estimate else "-", "; ".join(verdict) or "-"]
        print("| " + " | ".join(str(c) for c in cells) + " |")
    sizes = [stored.get(f"synthetic_{n}x256__new") for n in EXPONENT_SIZES]
    sizes = [r for r in sizes if r is not None]
    if len(sizes) >= 2:
        n = np.array([r["n"] for r in sizes], dtype=float)
        t = np.array([r["seconds_per_iteration"] for r in sizes])
        slope = np.polyfit(np.log(n), np.log(t), 1)[0]
        local = np.diff(np.log(t)) / np.diff(np.log(n))
        print("\ntime per iteration against n (d = 256): "
              + ", ".join(f"{int(a)}: {b:.3f} s" for a, b in zip(n, t))
              + f"; fitted exponent {slope:.2f} (target ≤ 1.15; between sizes: "
              + ", ".join(f"{v:.2f}" for v in local) + ")")
    machines = {json.dumps(r["machine"], sort_keys=True) for r in stored.values()}
    print("\nmachine: " + "; ".join(sorted(machines)))


def _full_j(result: dict) -> float:
    value = result.get("objective_uncapped")
    return result["objective"] if value is None else value


def _objective_cell(result: dict) -> str:
    """J as optimized, and J with every treatment balanced where the two differ."""
    value = result.get("objective_uncapped")
    if value is None or abs(value - result["objective"]) <= 1e-12 * abs(value):
        return f"{result['objective']:.8g}"
    return f"{result['objective']:.8g} ({value:.8g} all treatments)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["run", "report", "_child"])
    parser.add_argument("spec", nargs="?")
    parser.add_argument("--cases", nargs="+", help="only these cases (names of TARGETS)")
    parser.add_argument("--exponent", action="store_true",
                        help="also the n series at d = 256 (2k .. 64k)")
    parser.add_argument("--reference-python", help="interpreter with commit 40b2e41 installed")
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
