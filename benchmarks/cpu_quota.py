"""Default fits inside a cgroup with a CPU quota (Docker's ``--cpus``, a Kubernetes CPU
limit), with this checkout's code and a reference commit's, each fit in its own process.

    python benchmarks/cpu_quota.py --reference <worktree of another commit>
        [--quota 1] [--repeats 3] [--cases coil20 usps jaffe digits]

Needs root and a cgroup ``cpu`` hierarchy it may write (v1 ``cpu.cfs_quota_us`` or v2
``cpu.max``): it makes a child of its own cgroup with a quota of ``--quota`` CPUs per
100 ms period, runs each case ``--repeats`` times with each code inside it (the codes
in turn) and as many times outside it, and removes the cgroup. A case is named as in
``bench_scale.load_case``. The table gives the least and the median wall time, their
ratios to the reference's in the same place, and whether every fit's final objective
and top 20 are the reference's (its fastest fit's). Run it on an idle machine: the 1-minute load average before and after each
process is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from statistics import median

from causefs.core.cgroups import cgroup_directories

HERE = Path(__file__).resolve().parent
CHILD = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[-1])
from bench_scale import load_case  # the benchmarks' cases, beside this file
import causefs
from causefs import CauseFS
X, y = load_case(sys.argv[1])
start = time.perf_counter()
est = CauseFS(n_clusters=len(np.unique(y)), n_features_to_select=20, random_state=0).fit(X)
print(json.dumps({"wall": time.perf_counter() - start, "package": causefs.__file__,
                  "objective": float(est.objective_history_[-1]),
                  "top": sorted(est.get_support(indices=True).tolist())}))
"""


def quota_cgroup(cpus: float) -> Path:
    """A new child of this process's CPU cgroup with a quota of ``cpus`` CPUs."""
    for fstype, directories in cgroup_directories("cpu"):
        own = Path(directories[0])
        child = own / f"causefs-bench-{os.getpid()}"
        if fstype == "cgroup" and (own / "cpu.cfs_quota_us").exists():
            child.mkdir()
            (child / "cpu.cfs_period_us").write_text("100000")
            (child / "cpu.cfs_quota_us").write_text(str(int(cpus * 100_000)))
            return child
        if fstype == "cgroup2" and (own / "cpu.max").exists():
            child.mkdir()
            (child / "cpu.max").write_text(f"{int(cpus * 100_000)} 100000")
            return child
    sys.exit("no cgroup cpu controller this process may write (root, v1 or v2)")


def fit(case: str, code: Path, cgroup: Path | None) -> dict:
    """One default fit of ``case`` with the package at ``code``, inside ``cgroup``."""
    procs = None if cgroup is None else cgroup / "cgroup.procs"
    load = os.getloadavg()[0]
    # run from / : ``python -c`` puts its working directory first on sys.path, where a
    # checkout's package would shadow the one on PYTHONPATH
    out = subprocess.run(
        [sys.executable, "-c", CHILD, case, str(HERE)], capture_output=True, text=True,
        check=True, cwd="/", env={**os.environ, "PYTHONPATH": str(code)},
        preexec_fn=None if procs is None else lambda: procs.write_text(str(os.getpid())))
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not Path(result["package"]).is_relative_to(code):
        sys.exit(f"the fit imported {result['package']}, not the code at {code}")
    result["load"] = (load, os.getloadavg()[0])
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--quota", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", nargs="+", default=["coil20", "usps", "jaffe", "digits"])
    args = parser.parse_args(argv)
    codes = {"reference": args.reference.resolve(), "this code": HERE.parent}
    cgroup = quota_cgroup(args.quota)
    print(f"quota {args.quota} CPUs on a machine of {os.cpu_count()} (affinity "
          f"{len(os.sched_getaffinity(0))}); reference {codes['reference']}\n")
    print("| case | where | code | fit s (least) | / reference | median s | / reference | "
          "same objective and top 20 | load before / after |\n"
          "|---|---|---|---|---|---|---|---|---|")
    try:
        for case in args.cases:
            for where, group in (("in the quota", cgroup), ("outside", None)):
                runs = {name: [] for name in codes}
                for _ in range(args.repeats):  # the codes in turn
                    for name, code in codes.items():
                        runs[name].append(fit(case, code, group))
                reference = min(runs["reference"], key=lambda run: run["wall"])
                middle = median([run["wall"] for run in runs["reference"]])
                for name in codes:
                    best = min(runs[name], key=lambda run: run["wall"])
                    walls = [run["wall"] for run in runs[name]]
                    same = all(run["objective"] == reference["objective"]
                               and run["top"] == reference["top"] for run in runs[name])
                    if not same:
                        same = "top 20: " + ", ".join(
                            f"{len(set(run['top']) & set(reference['top']))}/20, J "
                            f"{run['objective'] / reference['objective'] - 1:+.1e}"
                            for run in runs[name])
                    print(f"| {case} | {where} | {name} | {best['wall']:.2f} | "
                          f"{best['wall'] / reference['wall']:.2f} | {median(walls):.2f} | "
                          f"{median(walls) / middle:.2f} | {same} | "
                          f"{best['load'][0]:.2f} / {best['load'][1]:.2f} |", flush=True)
    finally:
        cgroup.rmdir()


if __name__ == "__main__":
    main()
