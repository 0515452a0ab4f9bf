"""Quality of the default fit against docs/RESULTS.md's default CAUSE-FS row.

    python benchmarks/check_quality.py [--datasets jaffe umist coil20 usps]
    python benchmarks/check_quality.py --write docs/RESULTS.md   # between quality markers

The paper's protocol at 20 features (k-means++ 50 times on the selected columns, ACC with
the Hungarian map, NMI arithmetic), the CLI's settings (``random_state=0``), each dataset
in its own subprocess; results are written atomically to ``--out/<dataset>.json`` and a
re-run skips what is stored. The check: ACC and NMI stay within one k-means standard
deviation of the default row, or above it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import bench_scale  # the generated-table helper beside this file

#: docs/RESULTS.md, CAUSE-FS default row at 20 features (commit 40b2e41): mean, std
DEFAULT_ROW = {
    "jaffe": {"acc": (86.26, 5.37), "nmi": (87.60, 2.00)},
    "umist": {"acc": (59.06, 3.25), "nmi": (75.91, 1.36)},
    "coil20": {"acc": (57.56, 2.08), "nmi": (68.04, 1.06)},
    "usps": {"acc": (46.63, 1.52), "nmi": (42.88, 0.78)},
}


def child(name: str) -> dict:
    import numpy as np

    from causefs import CauseFS
    from causefs.datasets import load_dataset
    from causefs.app.evaluation import evaluate_ranking
    from causefs.numerics.scaling import scale_features
    from causefs.selectors import ranking_from_scores

    data = load_dataset(name)
    X = np.asarray(data.X, dtype=float)
    n_clusters = int(np.unique(data.y).size)
    start = time.perf_counter()
    est = CauseFS(n_clusters=n_clusters, n_features_to_select=20, random_state=0).fit(X)
    seconds = time.perf_counter() - start
    # as the CLI evaluates: k-means on the min-max scaled data, the best 20 features
    scores = evaluate_ranking(scale_features(X), data.y, ranking_from_scores(est.scores_),
                              [20], n_clusters=n_clusters, n_runs=50, seed=0)
    return {"dataset": name, "fit_seconds": seconds, "scores": scores[20]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", nargs="?", default="run", choices=["run", "_child"])
    parser.add_argument("name", nargs="?")
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_ROW))
    parser.add_argument("--out", type=Path, default=Path("results/quality"))
    parser.add_argument("--write", type=Path, help="also into this Markdown file between "
                        "<!-- quality:begin --> and <!-- quality:end -->")
    args = parser.parse_args()
    if args.what == "_child":
        print(json.dumps(child(args.name), default=float))
        return
    from causefs.app.store import write_json_atomic

    args.out.mkdir(parents=True, exist_ok=True)
    lines = ["| dataset | ACC | NMI | default row ACC | default row NMI | fit s | verdict |",
             "|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for name in args.datasets:
        path = args.out / f"{name}.json"
        if not path.exists():
            done = subprocess.run([sys.executable, __file__, "_child", name],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                lines.append(f"| {name} | failed: {done.stderr[-500:]} |")
                print(lines[-1], flush=True)
                continue
            write_json_atomic(path, json.loads(done.stdout.strip().splitlines()[-1]))
        result = json.loads(path.read_text())
        row = DEFAULT_ROW[name]
        got = _at_20(result["scores"])
        verdicts = [f"{metric.upper()} " + ("ok" if got[metric][0] >= row[metric][0]
                                              - row[metric][1] else "below")
                    for metric in ("acc", "nmi")]
        lines.append(f"| {name} | {got['acc'][0]:.2f} ± {got['acc'][1]:.2f} | "
                     f"{got['nmi'][0]:.2f} ± {got['nmi'][1]:.2f} | "
                     f"{row['acc'][0]:.2f} ± {row['acc'][1]:.2f} | "
                     f"{row['nmi'][0]:.2f} ± {row['nmi'][1]:.2f} | "
                     f"{result['fit_seconds']:.1f} | {', '.join(verdicts)} |")
        print(lines[-1], flush=True)
    if args.write:
        bench_scale.write_generated(args.write, "\n".join(lines) + "\n", marker="quality")


def _at_20(entry) -> dict:
    """(mean, std) in % of ACC and NMI at 20 features."""
    return {m: (100 * entry[f"{m}_mean"], 100 * entry[f"{m}_std"]) for m in ("acc", "nmi")}


if __name__ == "__main__":
    main()
