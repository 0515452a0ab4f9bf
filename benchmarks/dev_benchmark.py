"""The development benchmark: every registered selector on 13 datasets, against random
features and all features (issue 23).

    export CAUSEFS_DATA=../shared/datasets
    pip install ./examples/causefs-example-plugin    # registers "variance", a row of the table
    python benchmarks/dev_benchmark.py                           # run what is missing, report
    python benchmarks/dev_benchmark.py --datasets lsvt scadi --methods causefs fsdk
    python benchmarks/dev_benchmark.py --methods causefs causefs:schedule=ablation_I  # options
    python benchmarks/dev_benchmark.py --report-only --write-results docs/RESULTS.md

Datasets: the eight of ``$CAUSEFS_DATA/dev`` (read with :func:`causefs.datasets.load_file`,
never copied), the paper's four (:func:`causefs.datasets.load_dataset`) and scikit-learn's
digits. Protocol: features min-max scaled, each method ranks them (seed 0), k-means++ runs
20 times (seeds 0..19) on the top 10, 20 and 50 features (those below d); ACC and NMI.
A method whose scores depend on the number it keeps (``Selector.depends_on_count``:
CAUSE-FS's stopping rule, MCFS's sparsity, VCSDFS's k) is fitted once per number, as a
user keeping that many would fit it; the others once, scored at every number. A job's
``fit_seconds`` is its fit at 20 features (the default's count) where it has one.
``--resamples R`` repeats every job on R - 1 random subsamples of 80 % of the samples
(drawn with seeds 1..R-1, the same for every method; resample 0 is the whole dataset):
a row is then the mean over the resamples and the tables show the spread of those means,
which tells a difference between methods from the data's luck (the fits themselves are
deterministic given the data).
``random_features`` is drawn 20 times (seeds 0..19) and its row is the mean of the draws;
``all_features`` is k-means on every feature. A selector that takes longer than
``--max-seconds`` (by an estimate from its last run, or on the run itself) is recorded as
timed out, not retried.

Every (dataset, method, seed) result is one JSON file under ``--store``, written
atomically and keyed by the method's options (a changed default is a new job), so an
interrupted run resumes. The report ranks the methods per dataset by ACC at 20 features
(1 = best; ties share the mean rank), averages the ranks, counts wins over random
features, and prints the issue's targets for CAUSE-FS.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

from causefs.app.metrics import kmeans_scores
from causefs.app.provenance import source_sha256, vcs_revision
from causefs.app.store import canonical, write_json_atomic
from causefs.datasets import data_home, load_dataset, load_file
from causefs.numerics.scaling import scale_features
from causefs.selectors import available_selectors, make_selector

ROOT = Path(__file__).resolve().parents[1]
DEV = ("semeion", "binalpha", "lsvt", "pdspeech", "alzheimer", "scadi", "splice", "mushrooms")
PAPER = ("jaffe", "umist", "coil20", "usps")
DATASETS = DEV + PAPER + ("digits",)
RHOS = (10, 20, 50)
DEFAULT_RHO = 20  # CauseFS's n_features_to_select: the tables' column
N_RUNS = 20
RANDOM_DRAWS = 20
RESAMPLE_FRACTION = 0.8
#: the selectors the issue's third target compares CAUSE-FS with
STRONG = ("variance", "laplacian_score", "mcfs", "ndfs", "fsdk")
BEGIN, END = "<!-- dev-benchmark:begin -->", "<!-- dev-benchmark:end -->"


def load(name: str):
    """``(X scaled to [0, 1], y)`` of a benchmark dataset."""
    if name in DEV:
        data = load_file(data_home() / "dev" / f"{name}.npz")
    else:
        data = load_dataset(name)
    return scale_features(np.asarray(data.X, dtype=float)), np.asarray(data.y)


def selector(method: str):
    """The selector a method spec names: a registered name, or ``name:key=value,...``
    with options given as YAML values (``causefs:schedule=ablation_I``)."""
    import yaml

    name, _, options = method.partition(":")
    pairs = (item.split("=", 1) for item in options.split(",") if item)
    return make_selector(name, **{key: yaml.safe_load(value) for key, value in pairs})


def job_path(store: Path, dataset: str, method: str, seed: int, resample: int = 0) -> Path:
    chosen = selector(method)
    options = chosen.result_options()
    if chosen.depends_on_count:  # fitted per rho since; the jobs fitted once at 50 differ
        options = {**options, "fitted_per_rho": True}
    digest = hashlib.sha256(canonical(options).encode()).hexdigest()[:12]
    name = method.partition(":")[0]  # the options are in the digest
    part = f"__resample{resample}" if resample else ""  # resample 0 keeps the old names
    return store / f"{dataset}__{name}__{digest}__seed{seed}{part}.json"


def resample(X, y, number: int):
    """The data of resample ``number``: all of it for 0, else a seeded subsample of
    ``RESAMPLE_FRACTION`` of the rows (sorted, so the row order stays the file's)."""
    if number == 0:
        return X, y
    rng = np.random.default_rng(number)
    rows = np.sort(rng.choice(len(y), size=int(RESAMPLE_FRACTION * len(y)), replace=False))
    return X[rows], y[rows]


def method_seeds(method: str) -> range:
    """Random features are drawn 20 times; every other method is fitted once (seed 0)."""
    return range(RANDOM_DRAWS if method == "random_features" else 1)


def run_job(X, y, method: str, seed: int) -> dict:
    n_clusters = int(np.unique(y).size)
    rhos = [r for r in RHOS if r < X.shape[1]]
    chosen = selector(method)
    rankings, seconds = {}, {}
    for count in rhos if chosen.depends_on_count else [max(rhos)]:
        start = time.perf_counter()
        rankings[count] = chosen.ranking(X, n_clusters=n_clusters, n_features_to_select=count,
                                         random_state=seed)
        seconds[count] = time.perf_counter() - start
    fitted = {r: rankings.get(r, rankings[max(rhos)]) for r in rhos}
    scores = {str(r): kmeans_scores(X if chosen.select_all else X[:, fitted[r][:r]], y,
                                    n_runs=N_RUNS) for r in rhos}
    return {"method": method, "seed": seed,
            "fit_seconds": seconds.get(DEFAULT_RHO, seconds[max(seconds)]),
            "fit_seconds_by_rho": {str(r): t for r, t in seconds.items()}, "scores": scores,
            "ranking": rankings[max(rankings)][:max(rhos)].tolist(),
            "rankings": {str(r): fitted[r][:r].tolist() for r in rhos},
            "options": chosen.result_options(),
            "source_sha256": source_sha256(), "vcs_revision": vcs_revision()}


def run(store: Path, datasets, methods, max_seconds: float, resamples: int = 1) -> None:
    for dataset in datasets:
        data = load(dataset)
        for number in range(resamples):
            X, y = resample(*data, number)
            for method in methods:
                run_method(store, dataset, X, y, method, max_seconds, number)


def run_method(store, dataset, X, y, method, max_seconds, number) -> None:
    for seed in method_seeds(method):
        path = job_path(store, dataset, method, seed, number)
        if path.exists():
            continue
        try:
            result = run_job(X, y, method, seed)
        except MemoryError as error:  # recorded, so the row says why it is empty
            result = {"method": method, "seed": seed, "error": str(error)}
        if result.get("fit_seconds", 0) > max_seconds:
            result["timed_out"] = True
        write_json_atomic(path, {"dataset": dataset, "resample": number, **result})
        print(f"{dataset} resample {number} {method} seed {seed}: "
              + (f"{result['fit_seconds']:.1f} s, ACC@20 "
                 f"{result['scores'].get('20', {}).get('acc_mean', float('nan')):.3f}"
                 if "scores" in result else result["error"]), flush=True)


def collect(store: Path, methods, resamples: int = 1) -> dict:
    """``{dataset: {method: {"acc": {rho: (mean, std)}, "nmi": ..., "seconds": s,
    "spread": {metric: {rho: std}}}}}`` from the entries of the current options. Random
    features: means over the draws; then means over the resamples, where ``spread`` is
    the standard deviation of the per-resample means. A method's row needs every
    resample, so rows compare the same data."""
    table: dict = {}
    for dataset in DATASETS:
        for method in methods:
            rows = [stored_row(store, dataset, method, number) for number in range(resamples)]
            if not rows or any(row is None for row in rows):
                continue
            row = {**mean_row(rows), "draws": rows[0]["draws"]}
            row["spread"] = {metric: {rho: float(np.std([r[metric][rho][0] for r in rows]))
                                      for rho in row[metric]} for metric in ("acc", "nmi")}
            table.setdefault(dataset, {})[method] = row
    return table


def mean_row(rows: list) -> dict:
    """The mean of rows ``{"seconds": s, metric: {rho: (mean, std)}}``, cell by cell."""
    return {"seconds": float(np.mean([row["seconds"] for row in rows])),
            **{metric: {rho: tuple(float(np.mean([row[metric][rho][i] for row in rows]))
                                   for i in (0, 1))
                        for rho in rows[0][metric]} for metric in ("acc", "nmi")}}


def stored_row(store: Path, dataset: str, method: str, number: int) -> dict | None:
    """One resample's row: means over the stored draws (random features) or the fit."""
    entries = []
    for seed in method_seeds(method):
        path = job_path(store, dataset, method, seed, number)
        if path.exists():
            entry = json.loads(path.read_text())
            if "scores" in entry:
                entries.append(entry)
    if not entries:
        return None
    fits = [{"seconds": e["fit_seconds"],
             **{metric: {rho: (scores[f"{metric}_mean"], scores[f"{metric}_std"])
                         for rho, scores in e["scores"].items()} for metric in ("acc", "nmi")}}
            for e in entries]
    return {**mean_row(fits), "draws": len(entries)}


def ranks(table: dict, methods, rho="20", metric="acc") -> dict:
    """``{dataset: {method: rank}}`` (1 = best, ties share their mean rank) over the
    datasets where every method has a result."""
    from scipy.stats import rankdata

    out = {}
    for dataset, rows in table.items():
        if all(m in rows and rho in rows[m][metric] for m in methods):
            values = [-rows[m][metric][rho][0] for m in methods]
            out[dataset] = dict(zip(methods, rankdata(values)))
    return out


def label(method: str) -> str:
    from causefs.selectors import get_selector

    name, _, options = method.partition(":")
    cls = get_selector(name)
    return (cls.display_name or cls.name) + (f" ({options})" if options else "")


def markdown(table: dict, methods, rho="20", resamples: int = 1) -> str:
    datasets = [d for d in DATASETS if d in table]
    lines = [] if resamples == 1 else [
        f"Each row is the mean over {resamples} resamples (the whole dataset and "
        f"{resamples - 1} random subsamples of {RESAMPLE_FRACTION:.0%} of its samples); "
        "± is the standard deviation of the per-resample means where it is 0.5 points or "
        "more.", ""]
    for metric in ("acc", "nmi"):
        complete = ranks(table, methods, rho, metric)
        lines += [f"### {metric.upper()} (%) at {rho} features (k-means x {N_RUNS})", "",
                  "| method | " + " | ".join(datasets) + " | mean rank | wins over random |",
                  "|---|" + "---|" * (len(datasets) + 2)]
        for method in methods:
            cells = []
            for d in datasets:
                value = table[d].get(method, {}).get(metric, {}).get(rho)
                best = max((table[d][m][metric][rho][0] for m in methods
                            if rho in table[d].get(m, {}).get(metric, {})), default=None)
                text = f"{100 * value[0]:.1f}" if value else ""
                spread = table[d].get(method, {}).get("spread", {}).get(metric, {}).get(rho)
                if value and spread and spread >= 0.005:
                    text += f" ± {100 * spread:.1f}"
                cells.append(f"**{text}**" if value and value[0] == best else text)
            mean_rank = np.mean([r[method] for r in complete.values()]) if complete else np.nan
            wins = sum(1 for d in datasets if "random_features" in table[d]
                       and method in table[d] and rho in table[d][method][metric]
                       and table[d][method][metric][rho][0]
                       >= table[d]["random_features"][metric][rho][0])
            lines.append(f"| {label(method)} | " + " | ".join(cells)
                         + f" | {mean_rank:.2f} | {wins} |")
        lines.append("")
    lines.append(f"Mean ranks over the {len(complete)} datasets where every method ran "
                 f"({', '.join(complete)}).")
    return "\n".join(lines)


def targets(table: dict, methods, rho="20") -> str:
    """The issue's four targets for CAUSE-FS at ``rho`` features, by ACC."""
    lines = []
    have = [d for d in DATASETS if d in table and "causefs" in table[d]]

    def acc(d, m):
        return table[d][m]["acc"][rho][0] if m in table[d] and rho in table[d][m]["acc"] \
            else None

    for other, text in (("random_features", ">= random features"),
                        ("all_features", ">= all features")):
        ok = [d for d in have if acc(d, other) is not None and acc(d, "causefs") >= acc(d, other)]
        lines.append(f"- {text}: {len(ok)} of {len(have)}"
                     f" (not on: {', '.join(d for d in have if d not in ok) or 'none'})")
    strong = [m for m in STRONG if m in methods]
    if strong:  # a run of other methods (CAUSE-FS's schedules) compares no baseline
        ok = [d for d in have if all(acc(d, m) is not None for m in strong)
              and acc(d, "causefs") >= max(acc(d, m) for m in strong)]
        lines.append(f"- >= the best of {', '.join(label(m) for m in strong)}: {len(ok)} "
                     f"of {len(have)}")
    selectors = [m for m in methods if m != "all_features"]
    for rows, text in ((methods, "mean rank"),
                       (selectors, "mean rank among the selectors and random features")):
        complete = ranks(table, rows, rho)
        if complete:
            mean = {m: np.mean([r[m] for r in complete.values()]) for m in rows}
            order = sorted(rows, key=mean.get)
            lines.append(f"- {text}: "
                         + ", ".join(f"{label(m)} {mean[m]:.2f}" for m in order))
    return "\n".join(lines)


def figure(table: dict, methods, out: Path, rho="20") -> None:
    """ACC at ``rho`` features minus random features' ACC, per dataset and method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = [d for d in DATASETS if d in table and "random_features" in table[d]]
    shown = [m for m in methods if m != "random_features"]
    fig, ax = plt.subplots(figsize=(12, 4.5))
    width = 0.8 / len(shown)
    for i, method in enumerate(shown):
        gaps = [100 * (table[d][method]["acc"][rho][0] - table[d]["random_features"]["acc"][rho][0])
                if method in table[d] and rho in table[d][method]["acc"] else np.nan
                for d in datasets]
        ax.bar(np.arange(len(datasets)) + (i - len(shown) / 2) * width + width / 2, gaps,
               width, label=label(method))
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(np.arange(len(datasets)), datasets, rotation=30)
    ax.set_ylabel(f"ACC at {rho} features minus random (points)")
    ax.legend(ncol=6, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def write_results(path: Path, text: str) -> None:
    content = path.read_text()
    head, _, rest = content.partition(BEGIN)
    _, _, tail = rest.partition(END)
    path.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--methods", nargs="+", default=None,
                        help="default: every registered selector")
    parser.add_argument("--store", type=Path, default=ROOT / "results" / "dev_benchmark")
    parser.add_argument("--max-seconds", type=float, default=600.0,
                        help="a fit longer than this is marked timed out in its entry")
    parser.add_argument("--resamples", type=int, default=1,
                        help="also run on R-1 random 80%% subsamples; report the means")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--figure", type=Path,
                        default=ROOT / "docs" / "results" / "dev_benchmark_acc20.png")
    parser.add_argument("--write-results", type=Path, default=None,
                        help="rewrite this file's dev-benchmark section (docs/RESULTS.md)")
    args = parser.parse_args(argv)
    methods = args.methods or available_selectors()
    missing = sorted({m.partition(":")[0] for m in methods} - set(available_selectors()))
    if missing:  # before any job: a run of hours would stop at the first of them
        parser.error(f"not registered: {', '.join(missing)} (registered: "
                     f"{', '.join(available_selectors())}); a plugin's selector needs the "
                     f"plugin installed: RESULTS.md's 'variance' is the example plugin's, "
                     f"pip install ./examples/causefs-example-plugin")
    if not args.report_only:
        run(args.store, args.datasets, methods, args.max_seconds, args.resamples)
    table = collect(args.store, methods, args.resamples)
    text = markdown(table, methods, resamples=args.resamples) + "\n\nCAUSE-FS against the targets (ACC at 20):\n\n" \
        + targets(table, methods)
    print(text)
    if args.write_results:
        figure(table, methods, args.figure)
        write_results(args.write_results, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
