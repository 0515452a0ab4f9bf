"""Where a default fit's time and memory go at large n, block by block.

    python benchmarks/large_n_profile.py run --cases synthetic:50000x64 synthetic:100000x64
    python benchmarks/large_n_profile.py report [--reference main]

Each case is one default ``CauseFS`` fit (``trace=True``: block times; the generator of
``bench_speed.py``, :func:`causefs.datasets.make_causal` with 10 clusters) in a fresh
subprocess, so its peak RSS is its own. ``--params`` adds settings (JSON) and ``--label``
names the variant. Results are written atomically to ``--out/<case>__<label>.json``; a
re-run skips what is stored. ``report`` prints, per case, every block's measured seconds
(the initialization's once, the loop's per iteration) beside the seconds the cost model
(:mod:`causefs.budget`, of the code it runs with) gives it, peak RSS, the comparison with
the fits labelled ``--reference`` on the same case (time, top-20 overlap, objective),
then a cost line ``seconds = a n^b`` per block fitted over the cases of one label and d
(b above about 1.1 grows faster than n k).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import bench_scale  # data of the cases and the machine's description


def child(spec: dict) -> dict:
    """One traced default fit in this process: block times, peak RSS, what it found."""
    from causefs import CauseFS

    X, y = bench_scale.load_case(spec["case"])
    params = dict(n_clusters=int(np.unique(y).size), n_features_to_select=20,
                  random_state=0, memory_limit=None, trace=True, **spec.get("params", {}))
    start = time.perf_counter()
    est = CauseFS(**params).fit(X)
    seconds = time.perf_counter() - start
    init: dict = {}
    loop: dict = {}
    quality = {}
    if spec.get("quality"):  # ACC/NMI of the top 20 (k-means++ x 20), outside the timing
        from causefs.app.evaluation import evaluate_ranking
        from causefs.numerics.scaling import scale_features
        from causefs.selectors import ranking_from_scores

        scores = evaluate_ranking(scale_features(np.asarray(X, dtype=float)), y,
                                  ranking_from_scores(est.scores_), [20],
                                  n_clusters=params["n_clusters"], n_runs=20, seed=0)[20]
        quality = {"acc": scores["acc_mean"], "nmi": scores["nmi_mean"]}
    for record in est.trace_:
        table = init if record["iteration"] == 0 else loop
        table[record["block"]] = table.get(record["block"], 0.0) + record["seconds"]
    return {
        "case": spec["case"], "label": spec["label"], "params": spec.get("params", {}),
        "n": X.shape[0], "d": X.shape[1], "n_iter": est.n_iter_, "fit_seconds": seconds,
        "stop_reason": getattr(est, "stop_reason_", None), "init_blocks": init,
        "loop_blocks_per_iteration": {b: s / max(est.n_iter_, 1) for b, s in loop.items()},
        "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "time_estimate": getattr(est, "time_estimate_", None),
        "objective": float(est.objective_history_[-1]),
        "ranking": np.asarray(est.ranking_).tolist(), **quality,
    }


def model_seconds(n: int, d: int, params: dict) -> dict:
    """The cost model's seconds of every block (one run of it), by block name."""
    from causefs.budget import runtime
    from causefs.engine import build_parts, fit_size
    from causefs.model.settings import Settings

    parts = build_parts(Settings(n_clusters=10, n_features_to_select=20, random_state=0,
                                 memory_limit=None, **params))
    size = fit_size(n, d, parts)
    costs = {block.name: block.cost(size) for block in (*parts.init, *parts.loop)}
    return {name: runtime.seconds(c.flops, c.ops) for name, c in costs.items()}


def run(args):
    from causefs.app.store import write_json_atomic

    for case in args.cases:
        path = args.out / f"{case.replace(':', '_')}__{args.label}.json"
        if path.exists():
            continue
        print(f"running {case} ({args.label}); load {os.getloadavg()[0]:.2f}", flush=True)
        spec = {"case": case, "label": args.label, "params": json.loads(args.params),
                "quality": args.quality}
        before = os.getloadavg()[0]
        done = subprocess.run([sys.executable, __file__, "_child", json.dumps(spec)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{case} failed:\n{done.stderr[-3000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        result.update(machine=bench_scale.machine(), load_before=before,
                      load_after=os.getloadavg()[0])
        write_json_atomic(path, result)


def report(args):
    results = [json.loads(p.read_text()) for p in sorted(args.out.glob("*.json"))]
    results.sort(key=lambda r: (r["label"], r["d"], r["n"]))
    for r in results:
        quality = f", ACC {r['acc']:.2f} NMI {r['nmi']:.2f}" if "acc" in r else ""
        print(f"\n{r['case']} [{r['label']}] fit {r['fit_seconds']:.1f} s, "
              f"{r['n_iter']} iterations, peak {r['peak_rss'] / 2**30:.2f} GiB, "
              f"estimate {r['time_estimate'] or 0:.0f} s, load {r['load_before']:.2f} / "
              f"{r['load_after']:.2f}, objective {r['objective']:.6g}{quality}")
        model = model_seconds(r["n"], r["d"], r.get("params", {}))
        for part in ("init_blocks", "loop_blocks_per_iteration"):
            print(f"  {part.split('_')[0]} (measured s / cost model s): " + ", ".join(
                f"{b} {v:.2f} / {model.get(b, 0.0):.2f}" for b, v in r[part].items()
                if v >= 0.005))
    print(f"\nagainst --reference {args.reference!r} (same case):")
    reference = {r["case"]: r for r in results if r["label"] == args.reference}
    for r in results:
        ref = reference.get(r["case"])
        if ref is None or r is ref:
            continue
        top = set(np.argsort(r["ranking"])[:20]) & set(np.argsort(ref["ranking"])[:20])
        print(f"  {r['case']} [{r['label']}]: fit time {r['fit_seconds'] / ref['fit_seconds']:.2f}"
              f"x, initialization {sum(r['init_blocks'].values()) / sum(ref['init_blocks'].values()):.2f}x,"
              f" top-20 overlap {len(top)}/20, objective {r['objective']:.6g} against "
              f"{ref['objective']:.6g}")
    print("\ncost lines (seconds = a n^b over the cases of one label and d):")
    groups: dict = {}
    for r in results:
        groups.setdefault((r["label"], r["d"]), []).append(r)
    for (label, d), rows in groups.items():
        if len({r["n"] for r in rows}) < 2:
            continue
        for part in ("init_blocks", "loop_blocks_per_iteration"):
            for block in rows[0][part]:
                n = np.array([r["n"] for r in rows], dtype=float)
                s = np.array([r[part].get(block, np.nan) for r in rows])
                if np.all(s > 0):
                    b, log_a = np.polyfit(np.log(n), np.log(s), 1)
                    print(f"  {label} d={d} {part.split('_')[0]} {block}: b = {b:.2f} "
                          f"({', '.join(f'{v:.2f}' for v in s)} s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("run", "report", "_child"))
    parser.add_argument("spec", nargs="?")
    parser.add_argument("--cases", nargs="+", default=["synthetic:50000x64"])
    parser.add_argument("--label", default="default")
    parser.add_argument("--params", default="{}")
    parser.add_argument("--reference", default="main", help="label compared against")
    parser.add_argument("--quality", action="store_true",
                        help="also ACC/NMI of the top 20 (k-means++ x 20)")
    parser.add_argument("--out", type=Path, default=Path("results/large_n_profile"))
    args = parser.parse_args()
    if args.command == "_child":
        print(json.dumps(child(json.loads(args.spec))))
    elif args.command == "run":
        run(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
