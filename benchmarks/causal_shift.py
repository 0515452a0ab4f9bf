"""The causal experiment of docs/RESULTS.md: run it (resuming), tabulate it, plot it.

    python benchmarks/causal_shift.py               # run what is missing, then the report
    python benchmarks/causal_shift.py --report-only # tables and figure from the store
    python benchmarks/causal_shift.py --workers 2   # jobs in parallel processes

The grid is ``conf/experiment/causal.yaml``'s sweep (every dataset x bias rate x seed x
method, and every schedule for CAUSE-FS; a baseline runs once, not once per schedule).
Every job is the ``causefs`` command's own :func:`causefs.cli.run` on a composed config,
writing into the results store (``--store``): an interrupted run resumes. The tables go
into docs/RESULTS.md between ``<!-- causal:begin -->`` and ``<!-- causal:end -->``; the
figure to ``docs/results/causal_ood_acc.png``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import os
import tempfile
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before NumPy loads its BLAS
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import yaml  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "causefs" / "conf" / "experiment" / "causal.yaml"
RESULTS = ROOT / "docs" / "RESULTS.md"
FIGURE = ROOT / "docs" / "results" / "causal_ood_acc.png"
BEGIN, END = "<!-- causal:begin -->", "<!-- causal:end -->"
#: features kept per dataset in the tables: the number of causal features of the
#: synthetic benchmark (precision@k can reach 1), the paper's 20 for the digits
K_OF = {"shifted_clusters": 8, "digits_border": 20}


def sweep() -> list[list[str]]:
    """Overrides of every job of the experiment's sweep, baselines once per data setting."""
    params = yaml.safe_load(EXPERIMENT.read_text())["hydra"]["sweeper"]["params"]
    values = {key: str(value).split(",") for key, value in params.items()}
    data_keys = [k for k in values if k not in ("method", "schedule")]
    jobs = []
    for data in itertools.product(*(values[k] for k in data_keys)):
        base = [f"{k}={v}" for k, v in zip(data_keys, data)]
        for method in values["method"]:
            schedules = values["schedule"] if method == "causefs" else values["schedule"][:1]
            jobs += [base + [f"method={method}", f"schedule={s}"] for s in schedules]
    # seed-major: a run stopped early has the same seeds for every dataset and bias rate
    return sorted(jobs, key=lambda job: [o for o in job if o.startswith("dataset.seed=")])


def run_job(overrides: list[str], store: Path, experiment: str = "causal") -> str:
    """One job of ``+experiment=<experiment>`` through the CLI's ``run``; returns the
    store key (skips a stored job)."""
    from hydra import compose, initialize_config_module

    from causefs.app.cli import run
    from causefs.app.configs import register_configs

    register_configs()  # the kernel, qp and method groups are generated from the registry
    with initialize_config_module(config_module="causefs.conf", version_base="1.3"):
        cfg = compose(config_name="config",
                      overrides=[f"+experiment={experiment}", f"store.dir={store}", *overrides])
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        return run(cfg, output_dir=Path(tmp))["key"]


def label(job: dict) -> str:
    """Every schedule of CAUSE-FS by its name, the baselines by their display names."""
    from causefs.selectors import get_selector

    cls = get_selector(job["method"])
    if cls.name == "causefs":
        return f"CAUSE-FS[{job['params']['schedule']['name']}]"
    return cls.label(job["params"])


def setting(dataset: dict) -> str:
    """The table a dataset's results go to: the synthetic data per spurious strength."""
    if dataset["name"] == "shifted_clusters":
        return f"shifted_clusters, spurious separation {dataset['spurious_separation']:g}"
    return dataset["name"]


def collect(store: Path) -> dict:
    """``{setting: {(label, bias): {metric: [value per seed]}}}`` from the store.

    Reads every result file as JSON, also those written before the store's current schema
    (the committed tables were).
    """
    table = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    seen = set()
    for path in sorted(Path(store).glob("*.json")):
        result = json.loads(path.read_text())
        job = result["job"]
        name = job["dataset"]["name"]
        if name not in K_OF or not result.get("metrics"):
            continue
        # one result per seed: a job re-run under a new store key (new code version) is
        # counted once
        cell = (setting(job["dataset"]), label(job), job["dataset"]["train_bias"],
                job["dataset"]["seed"])
        if cell in seen:
            continue
        seen.add(cell)
        k = str(K_OF[name])
        row = table[setting(job["dataset"])][(label(job), float(job["dataset"]["train_bias"]))]
        ood = result["metrics"]["test_environment"][k]
        row["ood_acc"].append(ood["acc_mean"])
        row["ood_nmi"].append(ood["nmi_mean"])
        row["train_acc"].append(result["metrics"]["selected"][k]["acc_mean"])
        row["precision"].append(result["causal_recovery"][k]["precision"])
        row["spurious"].append(result["causal_recovery"][k]["spurious_fraction"])
        # a method's details are under "details" since schema 3, at the top level before
        details = result.get("details") or result
        for key, value in (details.get("diagnostics") or {}).items():
            if isinstance(value, (int, float)):
                row[key].append(value)
    return table


METRICS = {"ood_acc": "OOD ACC (%)", "ood_nmi": "OOD NMI (%)", "train_acc": "training ACC (%)",
           "precision": "causal precision@k", "spurious": "spurious@k"}


def grid_table(title: str, first: str, labels, biases, cell) -> list[str]:
    """A markdown table: one row per label, one column per bias rate (or any column
    name), ``cell(label, b)``."""
    header = " | ".join(f"{b:g}" if isinstance(b, float) else str(b) for b in biases)
    lines = [title, "", f"| {first} | {header} |",
             "|---" * (len(biases) + 1) + "|"]
    lines += [f"| {lab} | " + " | ".join(cell(lab, b) for b in biases) + " |" for lab in labels]
    return lines + [""]


def markdown(table: dict) -> str:
    lines = []
    for name in sorted(table):
        rows = table[name]
        k = K_OF[name.split(",")[0]]
        labels = sorted({lab for lab, _ in rows}, key=lambda s: (not s.startswith("CAUSE"), s))
        biases = sorted({b for _, b in rows})
        for metric, title in METRICS.items():
            scale = 100 if "acc" in metric or "nmi" in metric else 1
            digits = 1 if scale == 100 else 2

            def cell(lab, b):
                values = scale * np.asarray(rows.get((lab, b), {}).get(metric, []))
                return (f"{values.mean():.{digits}f} ± {values.std():.{digits}f} ({values.size})"
                        if values.size else "–")

            lines += grid_table(f"**{name}: {title}, k = {k}** (mean ± std over seeds (number "
                                "of seeds); columns: training bias rate)", "method", labels,
                                biases, cell)
        lines += diagnostics_table(name, rows, biases)
    return "\n".join(lines)


def diagnostics_table(name: str, rows: dict, biases: list) -> list[str]:
    """CAUSE-FS rows: effective sample size, zero weights, balance term fitted / uniform,
    mean per-treatment imbalance fitted / uniform (means over seeds)."""

    def cell(lab, b):
        row = rows.get((lab, b), {})
        if not row.get("effective_sample_fraction"):
            return "–"
        mean = {key: float(np.mean(row[key])) for key in row}
        ratio = lambda a, c: mean[a] / mean[c] if mean[c] > 0 else float("nan")  # noqa: E731
        return (f"{100 * mean['effective_sample_fraction']:.0f} / "
                f"{100 * mean['zero_weight_share']:.0f} / "
                f"{ratio('balance_fitted', 'balance_uniform'):.2f} / "
                f"{ratio('mean_imbalance_fitted', 'mean_imbalance_uniform'):.2f}")

    return grid_table(f"**{name}: sample-weight diagnostics** (mean over seeds: effective "
                      "sample size % of n / zero weights % / balance term fitted ÷ uniform / "
                      "mean imbalance fitted ÷ uniform)", "schedule",
                      sorted({lab for lab, _ in rows if lab.startswith("CAUSE")}), biases, cell)


def figure(table: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(table)
    fig, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 5.2), squeeze=False)
    for ax, name in zip(axes[0], names):
        rows = table[name]
        for i, lab in enumerate(sorted({lab for lab, _ in rows})):
            biases = sorted(b for la, b in rows if la == lab)
            values = [100 * np.asarray(rows[(lab, b)]["ood_acc"]) for b in biases]
            ax.errorbar(biases, [v.mean() for v in values], yerr=[v.std() for v in values],
                        marker="os^vD<>"[i % 7], capsize=3, label=lab, color=plt.cm.tab20(i),
                        linestyle="-" if lab.startswith("CAUSE") else "--")
        ax.set(title=f"{name}\nk-means on the test environment, top {K_OF[name.split(',')[0]]}",
               xlabel="training bias rate", ylabel="OOD ACC (%)")
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=6, fontsize=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_results(tables: str, results: Path = RESULTS, begin: str = BEGIN,
                  end: str = END) -> None:
    """Replace what is between ``begin`` and ``end`` in ``results`` with ``tables``."""
    text = results.read_text()
    if begin not in text:
        raise SystemExit(f"{results} has no {begin} ... {end} section to fill")
    head, _, rest = text.partition(begin)
    _, _, tail = rest.partition(end)
    results.write_text(f"{head}{begin}\n{tables}\n{end}{tail}")


def arguments(description: str, store: Path) -> argparse.Namespace:
    """The options of an experiment script: its store, workers, and --report-only."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--store", type=Path, default=store)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--report-only", action="store_true")
    return parser.parse_args()


def run_tasks(tasks: list, workers: int) -> None:
    """``function(*args)`` for every ``(function, args)`` in a process pool, each line of
    progress naming the job (``args[0]``, its overrides); exits after any failure, once
    every other task ran."""
    failed = 0
    with ProcessPoolExecutor(workers) as pool:
        futures = [pool.submit(function, *args) for function, args in tasks]
        for i, ((function, args), future) in enumerate(zip(tasks, futures)):
            try:
                outcome = future.result()
            except Exception as exc:  # one failed job must not lose the others
                failed += 1
                outcome = f"FAILED {type(exc).__name__}: {exc}"
            print(f"[{i + 1}/{len(tasks)}] {function.__name__} {' '.join(args[0])}: "
                  f"{outcome}", flush=True)
    if failed:
        raise SystemExit(f"{failed} job(s) failed; re-run to retry them")


def main():
    args = arguments(__doc__.split("\n")[0], ROOT / "results" / "causal")
    if not args.report_only:
        jobs = sweep()
        print(f"{len(jobs)} jobs into {args.store}", flush=True)
        run_tasks([(run_job, (job, args.store)) for job in jobs], args.workers)
    table = collect(args.store)
    figure(table, FIGURE)
    write_results(markdown(table))
    print(f"updated {RESULTS} and {FIGURE}")


if __name__ == "__main__":
    main()
