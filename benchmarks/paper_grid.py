"""Run the paper's label-tuned grid (294 settings a dataset) in resumable pieces.

    python benchmarks/paper_grid.py --datasets jaffe umist coil20 usps \
        --store results/store --lock /work/locks/cpu.lock

Each piece is one value of alpha (42 settings: 7 lambdas x 6 betas), run as one Hydra
multirun of ``+experiment=paper_grid`` into the results store; a piece already stored is
skipped job by job, so stopping and re-running the same command resumes. With ``--lock``
every piece holds that file's lock (``flock``) while it runs, so a shared machine's other
jobs can run between pieces. The wall time of every piece is appended to
``<store>/../paper_grid_times.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the paper's alpha values (section 6); lambda and beta are swept inside each piece
ALPHAS = ("1e-3", "1e-2", "1e-1", "1", "1e1", "1e2", "1e3")


def piece_command(dataset: str, alpha: str, store: Path, lock: Path | None) -> list:
    command = [sys.executable, "-m", "causefs.app.cli", "-m", "+experiment=paper_grid",
               f"dataset={dataset}", f"method.alpha={alpha}", f"store.dir={store}",
               f"hydra.sweep.dir={store.parent / 'multirun' / 'paper_grid' / dataset}"]
    return (["flock", str(lock)] if lock else []) + command


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["jaffe", "umist", "coil20", "usps"])
    parser.add_argument("--alphas", nargs="+", default=list(ALPHAS))
    parser.add_argument("--store", type=Path, default=ROOT / "results" / "store")
    parser.add_argument("--lock", type=Path, default=None,
                        help="hold this file's flock while each piece runs")
    args = parser.parse_args()
    store = args.store.resolve()
    times = store.parent / "paper_grid_times.jsonl"
    for dataset in args.datasets:
        for alpha in args.alphas:
            start = time.time()
            subprocess.run(piece_command(dataset, alpha, store, args.lock), check=True,
                           stdout=subprocess.DEVNULL)
            record = {"dataset": dataset, "alpha": alpha, "started": start,
                      "wall_seconds": time.time() - start}
            with times.open("a") as handle:  # one line a piece: a log, not a result
                handle.write(json.dumps(record) + "\n")
            print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
