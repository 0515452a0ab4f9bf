"""Conjugate gradients on dense data a third non-zero (``CG_DENSITY``), measured inside
real fits: each configuration is fitted by the default on dense 0-1 data with
``CG_DENSITY`` at the old 0.1 and at the current value, each fit in a fresh process.

    python benchmarks/cg_density.py run                 # resumes: stored fits are kept
    python benchmarks/cg_density.py report

A configuration is ``<n>x<d>@<share of non-zeros>:<clusters>:<seed>``: ``clusters`` groups
of samples whose rate of ones differs by feature (drawn uniformly up to twice the share).
Printed per configuration: wall time at both settings, iterations, final objective, top-20
overlap and k-means ACC (10 runs) on the top 20 against the groups. Results are written
atomically under ``--out``, one JSON file a fit.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

CONFIGS = ("2000x3000@0.12:3:1", "2000x3000@0.3:5:2", "3000x5000@0.2:2:3",
           "3000x5000@0.25:6:4", "1500x8000@0.15:4:5", "5000x4000@0.2:3:6",
           "7000x5000@0.13:2:0", "3000x5000@0.15:4:0")
#: the value before the change, and the current one (None: the module's)
SETTINGS = {"old": 0.1, "new": None}


def binary(config: str):
    """The 0-1 data and groups of ``config``."""
    shape, _, rest = config.partition("@")
    share, clusters, seed = rest.split(":")
    n, d = (int(v) for v in shape.split("x"))
    rng = np.random.default_rng(int(seed))
    y = rng.integers(int(clusters), size=n)
    rates = 2 * float(share) * rng.random((int(clusters), d))
    return (rng.random((n, d)) < rates[y]).astype(float), y


def child(config: str, setting: str) -> dict:
    """One fit in this process."""
    import causefs.model.subproblems as subproblems
    from causefs import CauseFS
    from causefs.app.evaluation import evaluate_ranking

    if SETTINGS[setting] is not None:
        subproblems.CG_DENSITY = SETTINGS[setting]
    X, y = binary(config)
    clusters = int(config.split(":")[1])
    start = time.perf_counter()
    est = CauseFS(n_clusters=clusters, n_features_to_select=20, random_state=0,
                  memory_limit=None).fit(X)
    seconds = time.perf_counter() - start
    order = np.argsort(est.ranking_, kind="stable")
    scores = evaluate_ranking(X, y, order, rhos=[20], n_runs=10)[20]
    return {"config": config, "setting": setting, "cg_density": subproblems.CG_DENSITY,
            "density": float(X.mean()), "seconds": seconds, "iterations": int(est.n_iter_),
            "J": float(est.objective_history_[-1]), "top20": sorted(order[:20].tolist()),
            "acc": 100 * scores["acc_mean"], "acc_std": 100 * scores["acc_std"]}


def run(args) -> None:
    from causefs.app.store import write_json_atomic

    args.out.mkdir(parents=True, exist_ok=True)
    for config in args.configs:
        for setting in SETTINGS:
            path = args.out / f"{config.replace(':', '_').replace('@', '_')}__{setting}.json"
            if path.exists():
                continue
            print(f"fitting {config} with CG_DENSITY {setting}", flush=True)
            done = subprocess.run([sys.executable, __file__, "_child", config, setting],
                                  capture_output=True, text=True, check=True)
            write_json_atomic(path, json.loads(done.stdout.strip().splitlines()[-1]))


def report(args) -> None:
    stored = {(r["config"], r["setting"]): r for r in
              (json.loads(p.read_text()) for p in sorted(args.out.glob("*.json")))}
    print("| n x d @ non-zeros : clusters : seed | s at 0.1 | s now | speed-up | iterations "
          "| J (0.1 / now) | top-20 overlap | ACC % (0.1 / now) |")
    print("|---|---|---|---|---|---|---|---|")
    for config in args.configs:
        if (config, "old") not in stored or (config, "new") not in stored:
            continue
        a, b = stored[config, "old"], stored[config, "new"]
        print(f"| {config} | {a['seconds']:.2f} | {b['seconds']:.2f} | "
              f"{a['seconds'] / b['seconds']:.2f}x | {a['iterations']} / {b['iterations']} | "
              f"{a['J']:.6g} / {b['J']:.6g} | {len(set(a['top20']) & set(b['top20']))}/20 | "
              f"{a['acc']:.1f} ± {a['acc_std']:.1f} / {b['acc']:.1f} ± {b['acc_std']:.1f} |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("run", "report", "_child"))
    parser.add_argument("spec", nargs="*")
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS))
    parser.add_argument("--out", type=Path, default=Path("results/cg_density"))
    args = parser.parse_args(argv)
    if args.command == "_child":
        print(json.dumps(child(*args.spec)))
        return
    {"run": run, "report": report}[args.command](args)


if __name__ == "__main__":
    main()
