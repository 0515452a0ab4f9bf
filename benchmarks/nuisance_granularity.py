"""The known-nuisance benchmark at two values of ``max_granularity``.

    python benchmarks/nuisance_granularity.py [--values 10 3] [--store results/nuisance_m]

Runs the jobs of ``nuisance_shift.py``'s 8 regimes and 3 held-out ones (seeds 0-4) for
the default with Z (``schedule=nuisance_adjusted``) and without it (``ablation_I``), once
per value, into a results store (a re-run skips stored jobs), and prints each regime's
mean OOD ACC (the mean over its test environments at the benchmark's k) per value.
docs/MODEL.md, "The number of granularities", quotes its output.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nuisance_shift  # noqa: E402
from causal_shift import run_job  # noqa: E402

from causefs.app.store import ResultStore  # noqa: E402

SCHEDULES = ("nuisance_adjusted", "ablation_I")


def cells() -> list[tuple[str, list[str]]]:
    """(regime, dataset overrides) of every regime and seed, seed-major."""
    regimes = nuisance_shift.sweep_params("nuisance")["dataset"]
    out = []
    for seed in nuisance_shift.SEEDS:
        out += [(name, [f"dataset={name}", f"dataset.seed={seed}"]) for name in regimes]
        out += [(name, ["dataset=shifted_environments", f"dataset.seed={seed}", *overrides])
                for name, overrides in nuisance_shift.HELD_OUT.items()]
    return out


def ood_acc(result: dict) -> float:
    k = str(nuisance_shift.k_of(result["job"]))
    return float(np.mean([env[k]["acc_mean"]
                          for env in result["metrics"]["test_environments"].values()]))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, nargs="+", default=[10, 3])
    parser.add_argument("--store", type=Path,
                        default=nuisance_shift.ROOT / "results" / "nuisance_granularity")
    args = parser.parse_args(argv)
    store = ResultStore(args.store)
    acc: dict = {}
    for regime, cell in cells():
        for schedule in SCHEDULES:
            z = [] if schedule == "nuisance_adjusted" else ["dataset.nuisance=null"]
            for value in args.values:
                key = run_job([*cell, "method=causefs", f"schedule={schedule}",
                               f"method.max_granularity={value}", *z], args.store, "nuisance")
                acc.setdefault((regime, schedule, value), []).append(
                    ood_acc(store.read(key)))
    for regime in dict.fromkeys(name for name, _ in cells()):
        for schedule in SCHEDULES:
            row = [f"{value}: {100 * np.mean(acc[regime, schedule, value]):.2f} ± "
                   f"{100 * np.std(acc[regime, schedule, value]):.2f}"
                   for value in args.values]
            print(f"{regime:36s} {schedule:18s} " + "   ".join(row))


if __name__ == "__main__":
    main()
