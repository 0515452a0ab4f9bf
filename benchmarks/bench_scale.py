"""Scale benchmarks for causefs: time per block, peak memory, dense reference vs fast path.

    python benchmarks/bench_scale.py blocks      # (a) per-block time and peak memory
    python benchmarks/bench_scale.py reference   # (b) paper-literal dense path vs fast path
    python benchmarks/bench_scale.py exponent    # (c) time per iteration against n, fitted
    python benchmarks/bench_scale.py report      # print every table from stored results
    python benchmarks/bench_scale.py report --write docs/PERFORMANCE.md   # ... into the doc

Each case runs in a fresh subprocess (so its peak RSS is its own) and its result is
written atomically to ``--out/<table>/<case>.json``; a re-run skips cases that have a
result, so an interrupted run resumes. Synthetic cases are ``synthetic:<n>x<d>``
(:func:`causefs.datasets.make_causal`, 10 clusters). All fits: default settings,
``max_iter=30`` (``--max-iter`` for cases too slow for 30; the label then says so),
``n_features_to_select=20``, ``random_state=0``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BLOCK_CASES = ["jaffe", "umist", "coil20", "usps", "synthetic:1000x256", "synthetic:2000x256",
               "synthetic:4000x256", "synthetic:8000x256", "synthetic:16000x256",
               "synthetic:7000x5000"]
REFERENCE_CASES = ["jaffe", "umist", "coil20"]
EXPONENT_SIZES = [1000, 2000, 4000, 8000, 16000]
REFERENCE = {"qp": "cvxpy", "neighbor_algorithm": "all", "memory_limit": None}


def load_case(name: str):
    from causefs.datasets import load_dataset, make_causal

    if name.startswith("synthetic:"):
        shape, _, clusters = name.split(":", 1)[1].partition(":")
        clusters, _, seed = clusters.partition(":")  # synthetic:<n>x<d>[:<c>[:<seed>]]
        n, d = (int(v) for v in shape.split("x"))
        data = make_causal(n, d, n_clusters=int(clusters or 10), n_causal=min(20, d // 4),
                           n_spurious=min(20, d // 4), seed=int(seed or 0))
    elif name.startswith("binary:"):  # text-like: 0/1 features, rates differing by cluster
        shape, _, clusters = name.split(":", 1)[1].partition(":")
        n, d = (int(v) for v in shape.split("x"))
        rng = np.random.default_rng(0)
        y = rng.integers(int(clusters or 2), size=n)
        rates = 0.1 * rng.random((int(clusters or 2), d))  # about 5 % of the cells are 1
        return (rng.random((n, d)) < rates[y]).astype(float), y
    elif name.startswith("text:"):  # sparse tf-idf rows of 10 topics, 1 % non-zeros
        from bench_input import text_like  # beside this file

        n, d = (int(v) for v in name.split(":", 1)[1].split("x"))
        return text_like(n, d, 0.01)
    elif name == "digits":
        from sklearn.datasets import load_digits

        return load_digits(return_X_y=True)
    elif name.startswith("dev:"):  # a development dataset, $CAUSEFS_DATA/dev/<name>.npz
        from causefs.datasets import data_home, load_file

        data = load_file(data_home() / "dev" / f"{name[4:]}.npz")
    elif ":" in name:  # <dataset>:<m>, m samples drawn without replacement (seed 0)
        dataset, m = name.split(":")
        data = load_dataset(dataset)
        rows = np.sort(np.random.default_rng(0).choice(data.X.shape[0], int(m), replace=False))
        return data.X[rows], data.y[rows]
    else:
        data = load_dataset(name)
    return data.X, data.y


def child_json(code: str, *args) -> dict:
    """The JSON object ``code`` prints last, run in a fresh Python process with ``args``
    and this folder as its arguments (the folder last: ``sys.path.insert(0,
    sys.argv[-1])`` imports these helpers), with the 1-minute load average before and
    after it as ``"load"``."""
    load = os.getloadavg()[0]
    out = subprocess.run([sys.executable, "-c", code, *map(str, args),
                          str(Path(__file__).resolve().parent)],
                         capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["load"] = (load, os.getloadavg()[0])
    return result


def against_first(cases, settings, measure):
    """``(case, setting, result, reference)`` for every case and setting in turn: the
    result of ``measure(case, setting)`` (its least ``"walls"`` as ``"wall"``) beside
    the case's result with the first setting."""
    for case in cases:
        reference = None
        for setting in settings:
            result = measure(case, setting)
            result["wall"] = min(result["walls"])
            reference = reference or result
            yield case, setting, result, reference


def child(spec: dict) -> dict:
    """Run one fit in this process and report what it cost."""
    from causefs import CauseFS
    from causefs.core.loop import seconds_by

    X, y = load_case(spec["case"])
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    params = dict(n_clusters=int(np.unique(y).size), n_features_to_select=20,
                  random_state=0, max_iter=spec.get("max_iter", 30))
    params.update(spec.get("params", {}))
    start = time.perf_counter()
    est = CauseFS(**params).fit(X)
    seconds = time.perf_counter() - start
    per_iteration = seconds_by(est.trace_, "iteration")
    init = per_iteration.pop(0, 0.0)
    return {
        "case": spec["case"], "label": spec["label"], "n": X.shape[0], "d": X.shape[1],
        "fit_seconds": seconds, "init_seconds": init, "n_iter": est.n_iter_,
        "seconds_per_iteration": (seconds - init) / max(est.n_iter_, 1),
        "block_seconds": seconds_by(est.trace_), "iteration_seconds": list(per_iteration.values()),
        "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "baseline_rss": baseline, "memory_estimate": est.memory_estimate_,
        "objective": float(est.objective_history_[-1]),
        "top20": np.argsort(est.ranking_)[:20].tolist(),
    }


def stored_result(path: Path, make) -> dict:
    """The result stored at ``path``; made by ``make()`` first (with the machine) and
    written atomically if missing, so that an interrupted benchmark resumes."""
    if not path.exists():
        from causefs.app.store import write_json_atomic

        write_json_atomic(path, {**make(), "machine": machine()})
    return json.loads(path.read_text())


def run_case(out: Path, table: str, spec: dict, run: bool = True) -> dict | None:
    """The stored result of a case; measured first (when ``run``) if missing."""
    path = out / table / f"{spec['case'].replace(':', '_')}__{spec['label']}.json"
    if path.exists():
        return json.loads(path.read_text())
    if not run:
        return None
    print(f"running {table}: {spec['case']} ({spec['label']})", flush=True)
    done = subprocess.run([sys.executable, __file__, "_child", json.dumps(spec)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"case {spec} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["machine"] = machine()
    from causefs.app.store import write_json_atomic

    write_json_atomic(path, result)
    return result


def machine() -> dict:
    try:
        model = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.processor()
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__}


def gib(value):
    return f"{value / (1 << 30):.2f}"


def table_blocks(results):
    names = ["selection_matrix", "granular_graphs", "fused_graph", "embedding",
             "sample_weights", "granularity", "confounders"]
    print("| case | n | d | fit s | init s | s/iter | " + " | ".join(names)
          + " | objective s | peak RSS GiB | fit's own GiB | estimate GiB |")
    print("|" + "---|" * (10 + len(names)))
    for r in results:
        per = [f"{r['block_seconds'].get(b, 0.0) / max(r['n_iter'], 1):.3f}" for b in names]
        outside = r["fit_seconds"] - sum(r["block_seconds"].values())
        case = r["case"] + ("" if r["label"] == "fast" else f" ({r['n_iter']} iterations)")
        print(f"| {case} | {r['n']} | {r['d']} | {r['fit_seconds']:.1f} | "
              f"{r['init_seconds']:.1f} | {r['seconds_per_iteration']:.2f} | "
              + " | ".join(per) + f" | {outside / max(r['n_iter'], 1):.3f} | "
              f"{gib(r['peak_rss'])} | {gib(r['peak_rss'] - r['baseline_rss'])} | "
              f"{gib(r['memory_estimate'])} |")
    print("\nblock columns: seconds per iteration of each block; objective s: the rest of the "
          "fit per iteration (objective evaluations after every block, which build the "
          "balance operator of a new confounder set, and validation); fit s includes all. "
          "fit's own GiB: peak RSS minus the RSS after loading the data (interpreter, "
          "libraries, data), the part that `memory_estimate_` bounds.")


def table_reference(pairs):
    print("| case | fast s | reference s | speed ratio | objective fast | objective ref "
          "| rel. difference | top-20 overlap | peak RSS fast / ref GiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fast, ref in pairs:
        rel = abs(fast["objective"] - ref["objective"]) / abs(ref["objective"])
        overlap = len(set(fast["top20"]) & set(ref["top20"])) / 20
        print(f"| {fast['case']} | {fast['fit_seconds']:.1f} | {ref['fit_seconds']:.1f} | "
              f"{ref['fit_seconds'] / fast['fit_seconds']:.1f}x | {fast['objective']:.8g} | "
              f"{ref['objective']:.8g} | {rel:.1e} | {100 * overlap:.0f}% | "
              f"{gib(fast['peak_rss'])} / {gib(ref['peak_rss'])} |")


def table_exponent(results):
    if len(results) < 2:
        print("(fewer than two sizes measured)")
        return
    n = np.array([r["n"] for r in results], dtype=float)
    t = np.array([r["seconds_per_iteration"] for r in results])
    slope = np.polyfit(np.log(n), np.log(t), 1)[0]
    print("| n | d | s/iter | fit s | peak RSS GiB |\n|---|---|---|---|---|")
    for r in results:
        print(f"| {r['n']} | {r['d']} | {r['seconds_per_iteration']:.2f} | "
              f"{r['fit_seconds']:.1f} | {gib(r['peak_rss'])} |")
    local = np.diff(np.log(t)) / np.diff(np.log(n))
    print(f"\nfitted exponent of time per iteration against n: {slope:.2f} "
          f"(between consecutive sizes: {', '.join(f'{v:.2f}' for v in local)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["blocks", "reference", "exponent", "report", "_child"])
    parser.add_argument("spec", nargs="?")
    parser.add_argument("--cases", nargs="+")
    parser.add_argument("--out", type=Path, default=Path("results/bench"))
    parser.add_argument("--max-iter", type=int, default=30, help="loop iterations (blocks)")
    parser.add_argument("--write", type=Path, help="with report: rewrite the tables of this "
                        "Markdown file between <!-- generated:begin --> and <!-- generated:end -->")
    args = parser.parse_args()
    if args.write is not None:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            tables(args)
        write_generated(args.write, buffer.getvalue())
        print(buffer.getvalue())
        return
    tables(args)


def write_generated(path: Path, tables_text: str, marker: str = "generated") -> None:
    """Replace the text between ``<!-- marker:begin -->`` and ``<!-- marker:end -->``."""
    begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
    text = path.read_text() if path.exists() else f"{begin}\n{end}\n"
    head, _, rest = text.partition(begin)
    _, _, tail = rest.partition(end)
    path.write_text(f"{head}{begin}\n{tables_text}\n{end}{tail}")


def tables(args):
    if args.what == "_child":
        print(json.dumps(child(json.loads(args.spec))))
        return
    out = args.out
    measure = args.what != "report"  # report only reads what was measured
    if args.what in ("blocks", "report"):
        cases = args.cases or BLOCK_CASES
        if args.what == "blocks":
            label = "fast" if args.max_iter == 30 else f"fast_{args.max_iter}it"
            results = [run_case(out, "blocks", {"case": c, "label": label,
                                                "max_iter": args.max_iter}) for c in cases]
        else:
            results = [json.loads(p.read_text()) for p in sorted((out / "blocks").glob("*.json"))]
        print("\n## (a) time per block and peak memory\n")
        table_blocks(results)
    if args.what in ("reference", "report"):
        cases = args.cases or REFERENCE_CASES
        pairs = []
        for case in cases:
            pair = tuple(run_case(out, "reference", {"case": case, "label": label,
                                                     "params": params}, run=measure)
                         for label, params in (("fast", {}), ("reference", REFERENCE)))
            if all(pair):
                pairs.append(pair)
        print("\n## (b) dense paper-literal reference vs fast path (same run)\n")
        table_reference(pairs)
    if args.what in ("exponent", "report"):
        # the same fits as table (a)'s synthetic rows: run once, read by both tables
        results = [run_case(out, "blocks", {"case": f"synthetic:{n}x256", "label": "fast"},
                            run=measure) for n in EXPONENT_SIZES]
        results = [r for r in results if r is not None]
        print("\n## (c) time per iteration against n (d = 256)\n")
        table_exponent(results)
    print(f"\nmachine: {machine()}")


if __name__ == "__main__":
    main()
