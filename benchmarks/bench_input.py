"""Input benchmarks: sparse text-like data against the same data dense, and the CSV reader.

    python benchmarks/bench_input.py sparse                  # n = 5000, d = 20,000, 1%
    python benchmarks/bench_input.py sparse --n 2000 --d 5000 --max-iter 2
    python benchmarks/bench_input.py csv                     # 5000 x 500 file
    python benchmarks/bench_input.py report                  # tables from stored results
    python benchmarks/bench_input.py report --write docs/guide/sparse.md   # ... into the doc

``sparse`` fits CAUSE-FS (defaults, ``max_iter`` iterations, 10 clusters) on text-like
data twice, as a ``scipy.sparse`` matrix and as the same matrix dense, each in a fresh
subprocess (so its peak RSS is its own); a result is written atomically under ``--out``
and a re-run skips what is stored. The data: ``n`` documents of 10 topics, each document
about ``density * d`` distinct words drawn from its topic's 200-word vocabulary (20%) and
a Zipf background over all d words (80%), as tf-idf rows of unit norm.

``csv`` times, in this process and side by side, the reader of :func:`load_file` (NumPy's
parser, the cell-by-cell reader only for an error), the cell-by-cell reader alone (the
reader before issue 16) and ``np.loadtxt``, on a written file of random numbers; and
the error path's message for a bad cell near the end.
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
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import gib, machine, write_generated  # noqa: E402  (helpers beside this file)

OUT = Path("results/bench_input")


def text_like(n: int, d: int, density: float, seed: int = 0, n_topics: int = 10):
    """Sparse tf-idf rows of ``n`` documents of ``n_topics`` topics, (n, d), and the topics."""
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfTransformer

    rng = np.random.default_rng(seed)
    topics = rng.integers(n_topics, size=n)
    vocabularies = rng.permutation(d)[: n_topics * 200].reshape(n_topics, 200)
    background = 1.0 / np.arange(1, d + 1) ** 1.1
    background = rng.permutation(background / background.sum())
    words = int(round(density * d * 1.1))  # draws with repeats: about density * d distinct
    rows, cols = [], []
    for i, topic in enumerate(topics):
        own = rng.choice(vocabularies[topic], size=words // 5)
        rest = rng.choice(d, size=words - own.size, p=background)
        cols.append(np.concatenate([own, rest]))
        rows.append(np.full(words, i))
    counts = sp.csr_array((np.ones(n * words), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(n, d))
    counts.sum_duplicates()
    return TfidfTransformer().fit_transform(counts), topics


def child(spec: dict) -> dict:
    """One fit in this process: what it cost."""
    from causefs import CauseFS
    from causefs.core.loop import seconds_by

    X, _ = text_like(spec["n"], spec["d"], spec["density"])
    density = X.nnz / (X.shape[0] * X.shape[1])
    if spec["format"] == "dense":
        X = X.toarray()
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    cpu, wall = time.process_time(), time.perf_counter()
    est = CauseFS(n_clusters=10, max_iter=spec["max_iter"], tol=0.0, random_state=0,
                  memory_limit=None).fit(X)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    per_iteration = seconds_by(est.trace_, "iteration")
    init = per_iteration.pop(0, 0.0)
    return {**spec, "density": density, "fit_seconds": wall, "cpu_seconds": cpu,
            "init_seconds": init, "seconds_per_iteration": (wall - init) / max(est.n_iter_, 1),
            "n_iter": est.n_iter_, "block_seconds": seconds_by(est.trace_),
            "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "baseline_rss": baseline, "objective": float(est.objective_history_[-1]),
            "top20": np.argsort(est.ranking_)[:20].tolist()}


def run_sparse(out: Path, n: int, d: int, density: float, max_iter: int) -> list:
    from causefs.app.store import write_json_atomic

    results = []
    for fmt in ("sparse", "dense"):
        spec = {"n": n, "d": d, "density": density, "max_iter": max_iter, "format": fmt}
        path = out / f"sparse_{n}x{d}_{density:g}_{max_iter}_{fmt}.json"
        if not path.exists():
            print(f"running {fmt} {n} x {d} ({max_iter} iterations)", flush=True)
            done = subprocess.run([sys.executable, __file__, "_child", json.dumps(spec)],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"{spec} failed:\n{done.stderr[-3000:]}")
            write_json_atomic(path, {**json.loads(done.stdout.strip().splitlines()[-1]),
                                     "machine": machine()})
        results.append(json.loads(path.read_text()))
    return results


def table_sparse(results: list) -> None:
    print("| format | n | d | non-zeros | iterations | init s | s/iter | fit s | CPU s | "
          "peak RSS GiB | fit's own GiB | J | top-20 shared with dense |")
    print("|---" * 13 + "|")
    dense = next((r for r in results if r["format"] == "dense"), None)
    for r in results:
        shared = len(set(r["top20"]) & set(dense["top20"])) if dense else "-"
        print(f"| {r['format']} | {r['n']} | {r['d']} | {100 * r['density']:.2f}% | "
              f"{r['n_iter']} | {r['init_seconds']:.1f} | {r['seconds_per_iteration']:.1f} | "
              f"{r['fit_seconds']:.1f} | {r['cpu_seconds']:.1f} | {gib(r['peak_rss'])} | "
              f"{gib(r['peak_rss'] - r['baseline_rss'])} | {r['objective']:.8g} | {shared}/20 |")
    if dense and len(results) == 2:
        sparse = next(r for r in results if r["format"] == "sparse")
        print(f"\ndense / sparse: fit {dense['fit_seconds'] / sparse['fit_seconds']:.2f}x, "
              f"CPU {dense['cpu_seconds'] / sparse['cpu_seconds']:.2f}x, initialization "
              f"{dense['init_seconds'] / sparse['init_seconds']:.2f}x, per iteration "
              f"{dense['seconds_per_iteration'] / sparse['seconds_per_iteration']:.2f}x, "
              f"peak RSS {dense['peak_rss'] / sparse['peak_rss']:.2f}x")
        blocks = sorted(dense["block_seconds"], key=dense["block_seconds"].get, reverse=True)
        print("\n| block | sparse s | dense s |\n|---|---|---|")
        for b in blocks:
            print(f"| {b} | {sparse['block_seconds'].get(b, 0):.1f} | "
                  f"{dense['block_seconds'][b]:.1f} |")
    print(f"\nmachine: {json.dumps(results[0]['machine'])}")


def _best_cpu(function, repeats: int = 3) -> float:
    best = np.inf
    for _ in range(repeats):
        start = time.process_time()
        function()
        best = min(best, time.process_time() - start)
    return best


def run_csv(rows: int, columns: int) -> None:
    from causefs.datasets import DatasetError, load_file
    from causefs.datasets.files import _read_csv_cells

    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.csv"
        np.savetxt(path, rng.random((rows, columns)), delimiter=",", fmt="%.17g")
        times = {"load_file (NumPy parser)": _best_cpu(lambda: load_file(path)),
                 "cell-by-cell reader (before)": _best_cpu(lambda: _read_csv_cells(path, 0)),
                 "np.loadtxt": _best_cpu(lambda: np.loadtxt(path, delimiter=","))}
        lines = path.read_text().splitlines()
        lines[-10] = lines[-10].replace(",", ",x", 1)
        path.write_text("\n".join(lines) + "\n")
        start = time.process_time()
        try:
            load_file(path)
        except DatasetError as error:
            message = str(error).replace(str(path), "data.csv")
        error_seconds = time.process_time() - start
    print(f"| reader | CPU s, {rows} x {columns} (best of 3) | ratio to load_file |")
    print("|---|---|---|")
    for name, seconds in times.items():
        print(f"| {name} | {seconds:.2f} | {seconds / times['load_file (NumPy parser)']:.1f} |")
    print(f"\na bad cell near the end: {message!r} after {error_seconds:.2f} s CPU")
    print(f"\nmachine: {json.dumps(machine())}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["sparse", "csv", "report", "_child"])
    parser.add_argument("spec", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--d", type=int, default=20000)
    parser.add_argument("--density", type=float, default=0.01)
    parser.add_argument("--max-iter", type=int, default=2)
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--columns", type=int, default=500)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--write", type=Path, help="with report: rewrite the text between "
                        "<!-- sparse-benchmark:begin --> and <!-- sparse-benchmark:end --> "
                        "of this Markdown file")
    args = parser.parse_args()
    if args.what == "_child":
        print(json.dumps(child(json.loads(args.spec))))
    elif args.what == "csv":
        run_csv(args.rows, args.columns)
    elif args.what == "sparse":
        table_sparse(run_sparse(args.out, args.n, args.d, args.density, args.max_iter))
    else:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            for path in sorted(args.out.glob("sparse_*_sparse.json")):
                pair = [json.loads(path.read_text())]
                dense = path.with_name(path.name.replace("_sparse.json", "_dense.json"))
                if dense.exists():
                    pair.append(json.loads(dense.read_text()))
                table_sparse(pair)
                print()
        print(buffer.getvalue())
        if args.write:
            write_generated(args.write, buffer.getvalue().strip(), marker="sparse-benchmark")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
