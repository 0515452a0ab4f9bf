"""Turn a results store into the paper's tables and figures.

    causefs-report --store results/store --out results/report
    python -m causefs.app.report --store ... --out ...

Writes ``tables.md`` and ``tables.csv`` (ACC and NMI at 20 features: dataset columns,
method rows, mean +- std over the k-means runs, best in bold; a pair of tables per
evaluation protocol, the paper's rows beside those of the paper's protocol;
causal-feature recovery on the synthetic benchmark) and ``figures/`` (ACC/NMI against
the number of selected features per dataset, objective convergence, parameter
sensitivity of a ``--tune`` grid, and the selected pixels drawn over sample images).

A row is named by what ran: the method and every option that differs from its
defaults (``CAUSE-FS (max_iter=3)``); "tuned on labels" only for a grid the report is
asked to reduce (``--tune alpha,lam,beta``); rows of two code versions or seeds that
would share a name are told apart by what differs (``[code.source_sha256=...]``).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from ..core.extras import MissingDependencyError, require
from ..core.validation import InvalidParameterError
from ..model_selection import CRITERIA
from ..selectors import get_selector
from .commands import one_line_warnings
from .label_free import choose as choose_without_labels, stored_data
from .run_report import write_run_report
from .store import ResultStore, StoreError, canonical, write_json_atomic

#: the paper's Tables (ACC and NMI, %, 20 features): method -> dataset -> (mean, std)
PAPER_ACC = {
    "CAUSE-FS": {"jaffe": (85.08, 8.69), "umist": (55.99, 3.34), "coil20": (59.01, 3.73), "usps": (66.82, 1.26)},
    "AllFea": {"jaffe": (77.47, 7.61), "umist": (41.50, 2.81), "coil20": (56.90, 4.16), "usps": (64.17, 2.98)},
    "FDNFS": {"jaffe": (66.61, 4.98), "umist": (44.00, 2.99), "coil20": (49.67, 2.64), "usps": (49.78, 3.28)},
    "HSL": {"jaffe": (77.69, 6.04), "umist": (49.79, 2.75), "coil20": (53.90, 3.29), "usps": (58.79, 3.92)},
    "OEDFS": {"jaffe": (64.24, 5.25), "umist": (42.13, 2.68), "coil20": (49.55, 2.40), "usps": (46.07, 1.68)},
    "FSDK": {"jaffe": (78.43, 4.52), "umist": (46.31, 2.31), "coil20": (57.64, 1.97), "usps": (62.65, 0.56)},
    "BLFSE": {"jaffe": (58.31, 3.27), "umist": (41.06, 2.57), "coil20": (53.21, 2.36), "usps": (52.79, 1.29)},
    "VCSDFS": {"jaffe": (72.64, 5.88), "umist": (42.32, 2.96), "coil20": (56.76, 3.35), "usps": (56.81, 4.22)},
    "DUFS": {"jaffe": (72.10, 3.27), "umist": (47.54, 4.48), "coil20": (50.19, 2.71), "usps": (62.77, 0.28)},
    "CNAFS": {"jaffe": (76.68, 6.81), "umist": (48.01, 2.92), "coil20": (56.63, 3.66), "usps": (61.57, 3.73)},
}
PAPER_NMI = {
    "CAUSE-FS": {"jaffe": (89.26, 4.99), "umist": (72.10, 2.26), "coil20": (70.00, 1.77), "usps": (60.31, 3.12)},
    "AllFea": {"jaffe": (82.51, 4.74), "umist": (62.96, 2.06), "coil20": (68.38, 1.96), "usps": (56.73, 0.84)},
    "FDNFS": {"jaffe": (71.96, 2.80), "umist": (55.08, 2.31), "coil20": (51.78, 1.56), "usps": (42.21, 1.03)},
    "HSL": {"jaffe": (80.19, 3.73), "umist": (65.74, 2.06), "coil20": (64.48, 1.92), "usps": (51.55, 1.71)},
    "OEDFS": {"jaffe": (64.38, 3.80), "umist": (57.01, 2.40), "coil20": (55.08, 1.43), "usps": (38.07, 0.68)},
    "FSDK": {"jaffe": (81.38, 5.67), "umist": (63.89, 2.82), "coil20": (66.84, 2.84), "usps": (56.44, 0.62)},
    "BLFSE": {"jaffe": (62.85, 2.60), "umist": (55.20, 1.64), "coil20": (62.00, 1.60), "usps": (43.12, 1.07)},
    "VCSDFS": {"jaffe": (77.94, 3.80), "umist": (58.66, 2.05), "coil20": (67.67, 1.64), "usps": (46.49, 1.70)},
    "DUFS": {"jaffe": (75.41, 4.05), "umist": (59.86, 3.96), "coil20": (60.73, 1.41), "usps": (52.79, 0.88)},
    "CNAFS": {"jaffe": (80.26, 4.23), "umist": (60.95, 2.03), "coil20": (67.27, 1.80), "usps": (53.18, 1.32)},
}
DATASET_ORDER = ["jaffe", "umist", "coil20", "usps", "digits", "synthetic"]


#: the protocol of the paper's tables: k-means runs and the scaling of the data
PAPER_PROTOCOL = {"n_runs": 50, "preprocessing": "minmax"}


def dataset_of(result: dict) -> str:
    return result["job"]["dataset"]["name"]


def metric(result: dict, rho: int, name: str):
    table = (result.get("metrics") or {}).get("selected") or {}
    row = table.get(str(rho)) or table.get(rho)
    if row is None:
        return None
    return 100 * row[f"{name}_mean"], 100 * row[f"{name}_std"]


def _text(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str) and len(value) > 16:  # a hash
        return value[:12]
    return str(value)


def _options_text(options: dict) -> str:
    return (" (" + ", ".join(f"{k}={_text(v)}" for k, v in sorted(options.items())) + ")"
            if options else "")


def row_label(result: dict, tune=()) -> str:
    """What ran: the method's label (:meth:`Selector.label`) and every option that
    differs from its defaults (:meth:`Selector.changed_options`), but those in ``tune``
    (``CAUSE-FS (max_iter=3)``); a method no installed plugin provides keeps its name
    and all its options."""
    job = result["job"]
    params = job.get("params", {})
    try:
        cls = get_selector(job["method"])
    except InvalidParameterError:
        return job["method"] + _options_text({k: v for k, v in params.items()
                                              if k not in tune})
    changed = {k: v for k, v in cls.changed_options(params).items() if k not in tune}
    return cls.label(params) + _options_text(changed)


def protocol_of(result: dict) -> tuple:
    """The evaluation protocol of a result: k-means runs, their first seed, the NMI
    normalization and the scaling of the data. Rows of different protocols are never
    put in one table."""
    job = result["job"]
    evaluation = job.get("evaluation") or {}
    return (("n_runs", evaluation.get("n_runs")), ("seed", evaluation.get("seed")),
            ("nmi_average", evaluation.get("nmi_average")),
            ("preprocessing", job.get("preprocessing")))


def protocol_text(protocol: tuple) -> str:
    p = dict(protocol)
    return (f"k-means x {p['n_runs']} runs (seeds from {p['seed']}), NMI "
            f"{p['nmi_average']}, {p['preprocessing']} scaling")


def is_paper_protocol(protocol: tuple) -> bool:
    p = dict(protocol)
    return all(p.get(k) == v for k, v in PAPER_PROTOCOL.items())


def _flat(value, prefix="") -> dict:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            out.update(_flat(item, f"{prefix}{key}."))
        return out
    return {prefix[:-1]: canonical(value)}


def _job_without(result: dict, tune) -> dict:
    job = dict(result["job"])
    job["params"] = {k: v for k, v in job.get("params", {}).items() if k not in tune}
    return job


def _distinguish(jobs: dict) -> dict:
    """``{identity: suffix}``: the fields in which jobs of one row name differ (a store
    holding results of two code versions, two seeds, ...), so no row hides another."""
    if len(jobs) < 2:
        return dict.fromkeys(jobs, "")
    flat = {identity: _flat(job) for identity, job in jobs.items()}
    keys = sorted({k for f in flat.values() for k in f})
    differing = [k for k in keys if len({f.get(k) for f in flat.values()}) > 1]
    return {identity: " [" + ", ".join(f"{k}={_text(json.loads(f[k])) if k in f else '-'}"
                                       for k in differing) + "]"
            for identity, f in flat.items()}


def collect(results: list, rho: int = 20, tune=()) -> dict:
    """``{protocol: {label: {dataset: result}}}`` of the results with metrics at ``rho``.

    Every result is its own row, named by what ran (:func:`row_label`), except that
    results differing only in the options named in ``tune`` are one row, the best ACC at
    ``rho`` among them, labelled "tuned on labels" (the paper's practice: the labels
    choose the setting). Rows whose name would clash are told apart by the job fields
    they differ in.
    """
    groups: dict = defaultdict(dict)
    for r in results:
        if dataset_of(r) == "synthetic" or metric(r, rho, "acc") is None:
            continue  # synthetic: one result per seed, reported by synthetic_table
        job = _job_without(r, tune)
        key = (protocol_of(r), row_label(r, tune), dataset_of(r))
        groups[key].setdefault(canonical(job), (job, []))[1].append(r)
    rows: dict = defaultdict(lambda: defaultdict(dict))
    for (protocol, label, dataset), by_job in groups.items():
        suffix = _distinguish({identity: job for identity, (job, _) in by_job.items()})
        for identity, (_, members) in by_job.items():
            best = max(members, key=lambda c: metric(c, rho, "acc")[0])
            if len(members) > 1:
                swept = sorted({k for m in members for k in tune
                                if k in m["job"].get("params", {})})
                name = (f"{label} (tuned on labels over {', '.join(swept)}: best of "
                        f"{len(members)})")
            else:
                name = row_label(best)
            rows[protocol][name + suffix[identity]][dataset] = best
    return rows


def _ordered(datasets):
    return sorted(datasets, key=lambda d: (DATASET_ORDER.index(d) if d in DATASET_ORDER else 99, d))


def markdown_table(rows: dict, name: str, rho: int, paper: dict | None = None,
                   main: str = "CAUSE-FS") -> str:
    datasets = _ordered({d for per in rows.values() for d in per})
    values = {label: {d: metric(per[d], rho, name) for d in per} for label, per in rows.items()}
    best = {d: max((v[d][0] for v in values.values() if v.get(d)), default=None) for d in datasets}
    lines = ["| method | " + " | ".join(datasets) + " |", "|---" * (len(datasets) + 1) + "|"]
    for label in sorted(values, key=lambda l: (not l.startswith(main), l)):
        cells = []
        for d in datasets:
            value = values[label].get(d)
            if value is None:
                cells.append("")
                continue
            text = f"{value[0]:.2f} ± {value[1]:.2f}"
            cells.append(f"**{text}**" if math.isclose(value[0], best[d]) else text)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    if paper:
        for label, per in paper.items():
            cells = [f"{per[d][0]:.2f} ± {per[d][1]:.2f}" if d in per else "" for d in datasets]
            lines.append(f"| paper: {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_csv(path: Path, results: list) -> None:
    """Every result at every rho: what ran, its protocol, ACC and NMI, and its key."""
    with open(path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["method", "dataset", "rho", "acc_mean", "acc_std", "nmi_mean", "nmi_std",
                      "n_runs", "nmi_average", "preprocessing", "fit_seconds", "code", "key"])
        for r in results:
            protocol = dict(protocol_of(r))
            code = (r["job"].get("code") or {}).get("source_sha256", "")[:12]
            for rho, m in ((r.get("metrics") or {}).get("selected") or {}).items():
                out.writerow([row_label(r), dataset_of(r), rho, m["acc_mean"], m["acc_std"],
                              m["nmi_mean"], m["nmi_std"], protocol["n_runs"],
                              protocol["nmi_average"], protocol["preprocessing"],
                              r.get("fit_seconds"), code, r["key"]])


def _without_seed(result: dict) -> dict:
    job = dict(result["job"])
    job["dataset"] = {k: v for k, v in job["dataset"].items() if k not in ("seed", "sha256")}
    return job


def synthetic_table(results: list) -> str:
    """Causal-feature recovery on the synthetic benchmark, a row per method setting
    (:func:`row_label`), the mean over the generator's seeds."""
    groups: dict = defaultdict(dict)
    for r in results:
        if (dataset_of(r) != "synthetic" or not r.get("causal_recovery")
                or _keeps_all(r)):  # its feature order is column order
            continue
        job = _without_seed(r)
        groups[row_label(r)].setdefault(canonical(job), (job, []))[1].append(r)
    per: dict = defaultdict(lambda: defaultdict(list))
    for label, by_job in groups.items():
        suffix = _distinguish({identity: job for identity, (job, _) in by_job.items()})
        for identity, (_, members) in by_job.items():
            for r in members:
                for rho, row in r["causal_recovery"].items():
                    per[label + suffix[identity]][int(rho)].append(row)
    if not per:
        return ""
    rhos = sorted({rho for rows in per.values() for rho in rows})
    lines = ["| method | " + " | ".join(f"precision@{r} / recall@{r} / spurious@{r}"
                                        for r in rhos) + " | seeds |",
             "|---" * (len(rhos) + 2) + "|"]
    for label in sorted(per):
        cells, seeds = [], 0
        for rho in rhos:
            rows = per[label][rho]
            seeds = len(rows)
            cells.append(" / ".join(f"{np.mean([row[k] for row in rows]):.2f}"
                                    for k in ("precision", "recall", "spurious_fraction")))
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {seeds} |")
    return "\n".join(lines)


def figures(results: list, rows: dict, out: Path, data_home=None, main: str = "CAUSE-FS",
            tune=()) -> list:
    """Draw every figure the results support; returns the files written. ``rows`` are
    one protocol's (:func:`collect`); ``main`` is the label of the method whose
    convergence, sensitivity (over the ``tune`` options) and pixels are drawn."""
    matplotlib = require("matplotlib", "cli",
                         "the figures of causefs-report (--no-figures does without)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    written = _curve_figures(rows, out, plt)
    written += _convergence_figure(results, out, plt, main)
    if tune:
        written += _sensitivity_figures(results, out, plt, main, tune)
    written += _pixel_figures(rows, out, plt, data_home, main)
    return written


def _save(fig, path: Path, plt, rect=None) -> list:
    fig.tight_layout(rect=rect)  # rect: room kept for a figure legend
    # "tight": a legend wider than the panels (one dataset, a tuned row's long label)
    # widens the image instead of being cut at its edges
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return [path]


def _curve_figures(rows: dict, out: Path, plt) -> list:
    """ACC and NMI against the number of selected features, a panel per dataset."""
    from tqdm.auto import tqdm

    written = []
    datasets = _ordered({d for per in rows.values() for d in per})
    for name in tqdm(("acc", "nmi"), desc="curves", disable=None):
        width = max(len(datasets), 1)
        fig, axes = plt.subplots(1, width, figsize=(4 * width, 3.6), squeeze=False)
        for ax, dataset in zip(axes[0], datasets):
            for number, label in enumerate(sorted(rows)):
                r = rows[label].get(dataset)
                if r is None:
                    continue
                table = r["metrics"]["selected"]
                rhos = sorted(int(k) for k in table)
                # ten colours, then a new line style and marker: no two rows look alike
                ax.plot(rhos, [100 * table[str(k)][f"{name}_mean"] for k in rhos],
                        color=f"C{number % 10}", linestyle=("-", "--", ":")[number // 10 % 3],
                        marker="os^"[number // 10 % 3], label=label)
            ax.set_title(dataset)
            ax.set_xlabel("selected features")
            ax.set_ylabel(f"{name.upper()} (%)")
        shown = {label: handle for ax in axes[0]
                 for handle, label in zip(*ax.get_legend_handles_labels())}
        rect = None
        if shown:  # one legend below the panels, for every row drawn in any of them
            fig.legend(list(shown.values()), list(shown), loc="lower center",
                       ncol=min(len(shown), 6), fontsize=7)
            rect = (0, 0.06 + 0.05 * ((len(shown) - 1) // 6), 1, 1)
        written += _save(fig, out / f"{name}_vs_features.png", plt, rect)
    return written


def _convergence_figure(results: list, out: Path, plt, main: str) -> list:
    """The objective by iteration of the default ``main`` runs, one curve per benchmark."""
    curves = [r for r in results if (r.get("details") or {}).get("objective_history")
              and row_label(r) == main
              and dataset_of(r) != "synthetic"]  # one curve per benchmark, not per seed
    if not curves:
        return []
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for r in curves:
        history = np.asarray(r["details"]["objective_history"][1:])
        ax.plot(np.arange(1, history.size + 1), history / history[0], label=dataset_of(r))
    ax.set_xlabel("iteration")
    ax.set_ylabel("objective / objective after iteration 1")
    ax.legend(fontsize=7)
    return _save(fig, out / "convergence.png", plt)


def _sensitivity_figures(results: list, out: Path, plt, main: str, tune) -> list:
    """ACC and NMI of the ``main`` grid over the ``tune`` options along each swept
    option, the others at the best."""
    written = []
    grid = [r for r in results if row_label(r, tune) == main and metric(r, 20, "acc")]
    for dataset in _ordered({dataset_of(r) for r in grid}):
        runs = [r for r in grid if dataset_of(r) == dataset]
        swept = [k for k in tune if all(isinstance(r["job"]["params"].get(k), float)
                                        for r in runs)
                 and len({r["job"]["params"][k] for r in runs}) > 1]
        if not swept:
            continue
        best = max(runs, key=lambda r: metric(r, 20, "acc")[0])["job"]["params"]
        fig, axes = plt.subplots(1, len(swept), figsize=(3.7 * len(swept), 3.2), squeeze=False)
        for ax, varied in zip(axes[0], swept):
            line = sorted((r["job"]["params"][varied], metric(r, 20, "acc")[0],
                           metric(r, 20, "nmi")[0]) for r in runs
                          if all(math.isclose(r["job"]["params"][k], best[k])
                                 for k in swept if k != varied))
            if line:
                x, acc, nmi = zip(*line)
                ax.semilogx(x, acc, marker="o", label="ACC")
                ax.semilogx(x, nmi, marker="s", label="NMI")
            ax.set_xlabel(varied + " (others at the best)")
            ax.set_ylabel("% at 20 features")
        axes[0][0].legend()
        fig.suptitle(f"parameter sensitivity, {dataset}")
        written += _save(fig, out / f"sensitivity_{dataset}.png", plt)
    return written


def _pixel_figures(rows, out, plt, data_home, main: str) -> list:
    """Top-20 features of ``main`` and the runner-up method over sample images."""
    from ..datasets import load_dataset

    written = []
    for dataset, r in rows.get(main, {}).items():
        shape = r["dataset"].get("image_shape")
        if not shape:
            continue
        others = [(metric(per[dataset], 20, "acc")[0], label) for label, per in rows.items()
                  if dataset in per and not label.startswith(main)
                  and not _keeps_all(per[dataset])]
        compare = [(main, r)]
        if others:
            runner_up = max(others)[1]
            compare.append((runner_up, rows[runner_up][dataset]))
        try:
            X = load_dataset(dataset, data_home_path=data_home).X
        except Exception:  # images not reachable here: skip the figure, keep the report
            continue
        samples = np.linspace(0, X.shape[0] - 1, 4).astype(int)
        fig, axes = plt.subplots(len(compare), samples.size, figsize=(2 * samples.size, 2.1 * len(compare)),
                                 squeeze=False)
        for row, (label, result) in enumerate(compare):
            top = np.asarray(result["features_best_first"][:20])
            for col, i in enumerate(samples):
                ax = axes[row][col]
                # image datasets store pixels column-major (MATLAB order)
                ax.imshow(X[i].reshape(shape[::-1]).T, cmap="gray")
                rr, cc = np.unravel_index(top, shape[::-1])
                ax.scatter(rr, cc, s=8, c="red")
                ax.set_xticks([])
                ax.set_yticks([])
            axes[row][0].set_ylabel(label, fontsize=8)
        fig.suptitle(f"top-20 features, {dataset}")
        written += _save(fig, out / f"pixels_{dataset}.png", plt)
    return written


def _keeps_all(result: dict) -> bool:
    """A result of a method that keeps every feature (its feature order is column
    order)."""
    try:
        return get_selector(result["job"]["method"]).select_all
    except InvalidParameterError:
        return False


def report(store_dir, out_dir, rho: int = 20, data_home=None, with_figures: bool = True,
           main: str = "CAUSE-FS", tune=(), choose: str | None = None) -> str:
    """Write tables (Markdown, CSV) and figures, and every run's report into ``runs/``
    (:func:`~causefs.app.run_report.write_run_report`, labels or not); returns the
    Markdown.

    A pair of ACC and NMI tables per evaluation protocol (:func:`protocol_of`), the
    paper's rows beside the tables of the paper's protocol only; rows named by what ran
    (:func:`row_label`); results that differ only in the ``tune`` options reduced to
    the best by ACC at ``rho``, labelled "tuned on labels" (:func:`collect`). With
    ``choose`` (a criterion of :data:`causefs.model_selection.CRITERIA`), each such grid
    is also reduced without labels (:func:`label_free_table`; labels or not), written
    to the Markdown and to ``label_free_choice.json``.

    Raises
    ------
    StoreError
        ``store_dir`` is not a directory, holds no valid entry (invalid entries are
        skipped with a :class:`~causefs.app.store.StoreWarning` naming the file), entries
        with metrics but none at ``rho``, or an option in ``tune`` that no entry has;
        with ``choose``, a grid whose data cannot be loaded here.
    ValueError
        ``choose`` without ``tune``, or an unknown criterion.
    """
    if choose is not None and not tune:
        raise ValueError("--choose needs --tune: the options the grid swept (e.g. "
                         "--tune alpha,lam), whose settings it chooses among")
    store = ResultStore(store_dir)
    if not store.root.is_dir():
        raise StoreError(f"no results store at {store.root}")
    results = list(store)
    if not results:
        raise StoreError(f"no valid results in {store.root}: nothing to report")
    options = {k for r in results for k in r["job"].get("params", {})}
    unknown = [k for k in tune if k not in options]
    if unknown:  # a misspelt option would leave the grid unreduced, its rows mislabelled
        raise StoreError(f"tune={','.join(unknown)}: no result in {store.root} has such an "
                         f"option (stored: {', '.join(sorted(options)) or 'none'})")
    tables = collect(results, rho, tune)
    stored = sorted({int(k) for r in results
                     for k in ((r.get("metrics") or {}).get("selected") or {})})
    if stored and not tables and not any(dataset_of(r) == "synthetic" for r in results):
        raise StoreError(f"no result in {store.root} has metrics at rho={rho} (stored: "
                         f"{', '.join(map(str, stored))}): use --rho")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    runs = [path for r in results for path in write_run_report(
        r, out / "runs", _image_data(r, data_home) if with_figures else None, with_figures)]
    protocols = sorted(tables, key=lambda p: (not is_paper_protocol(p), str(p)))
    parts = []
    for protocol in protocols:
        rows, paper = tables[protocol], is_paper_protocol(protocol)
        parts += [f"## ACC (%) at {rho} features; {protocol_text(protocol)}\n",
                  markdown_table(rows, "acc", rho, PAPER_ACC if paper else None, main),
                  f"\n## NMI (%) at {rho} features; {protocol_text(protocol)}\n",
                  markdown_table(rows, "nmi", rho, PAPER_NMI if paper else None, main), ""]
    if choose is not None:
        table, records = label_free_table(results, tune, choose, rho, data_home)
        parts += [f"## Chosen without labels ({choose} of the top {rho} features)\n",
                  "Each grid over " + ", ".join(tune) + " reduced to the setting the "
                  "criterion scores highest; no label is read (the ACC columns, where the "
                  "results have labels, only measure the choice).\n", table, ""]
        write_json_atomic(out / "label_free_choice.json", records)
    synthetic = synthetic_table(results)
    if synthetic:
        parts += ["\n## Causal features recovered (synthetic benchmark, mean over seeds)\n",
                  synthetic]
    if not stored:
        parts.append("No result has k-means scores (the data has no labels): the report "
                     "of each run is in runs/.\n")
    parts += ["## Runs\n", *(f"- [{path.stem}](runs/{path.name})" for path in runs
                             if path.suffix == ".md"), ""]
    text = "\n".join(parts) + "\n"
    (out / "tables.md").write_text(text)
    write_csv(out / "tables.csv", results)
    if with_figures and stored:
        rows = tables[protocols[0]] if protocols else {}
        figures(results, rows, out / "figures", data_home, main, tune)
    return text


def _image_data(result: dict, data_home):
    """The data of an image dataset (for the selected pixels), or None (not an image,
    or not reachable here: the report goes on without the picture)."""
    if not (result.get("dataset") or {}).get("image_shape"):
        return None
    try:
        return stored_data(result, data_home).X
    except Exception:  # noqa: BLE001 - any failure only drops the picture
        return None


def _setting_text(result: dict, tune) -> str:
    params = result["job"].get("params", {})
    return ", ".join(f"{k}={_text(params[k])}" for k in tune if k in params) or "defaults"


def label_free_table(results: list, tune, criterion: str, rho: int = 20,
                     data_home=None) -> tuple[str, list]:
    """Each grid (results differing only in the ``tune`` options) reduced without
    labels: the setting whose top ``rho`` features score highest under ``criterion``
    (:func:`~causefs.app.label_free.choose`), beside the best by ACC where the results
    have labels. Returns the Markdown table and one record per grid (for JSON)."""
    groups: dict = defaultdict(list)
    for r in results:
        groups[(row_label(r, tune), dataset_of(r), canonical(_job_without(r, tune)))].append(r)
    lines = [f"| method | dataset | settings | chosen without labels | {criterion} | "
             f"ACC / NMI at {rho} (chosen) | tuned on labels: ACC (setting) | gap |",
             "|---" * 8 + "|"]
    records = []
    for (label, dataset, _), members in sorted(groups.items(), key=lambda g: g[0][:2]):
        if len(members) < 2:
            continue  # one setting: nothing to choose
        picked = choose_without_labels(members, criterion, rho, data_home)
        chosen = picked["chosen"]
        collapsed = sum(score == -math.inf for score in picked["scores"])
        count = f"{len(members)}" + (f" ({collapsed} collapsed)" if collapsed else "")
        records.append({"method": label, "dataset": dataset, "criterion": criterion,
                        "rho": rho, "settings": len(members),
                        "chosen": None if chosen is None else chosen["key"],
                        "score": None if chosen is None else picked["score"],
                        "scored": [{"key": m["key"], "setting": _setting_text(m, tune),
                                    "score": None if s == -math.inf else s}  # collapsed
                                   for m, s in zip(members, picked["scores"])]})
        if chosen is None:
            lines.append(f"| {label} | {dataset} | {count} | every fit collapsed | | | | |")
            continue
        cells = [f"{_setting_text(chosen, tune)} ([run](runs/{chosen['key']}.md))",
                 f"{picked['score']:.4f}"]
        acc, nmi = metric(chosen, rho, "acc"), metric(chosen, rho, "nmi")
        labelled = [m for m in members if metric(m, rho, "acc") is not None]
        if acc is None or not labelled:
            cells += ["no labels", "", ""]
        else:
            tuned = max(labelled, key=lambda m: metric(m, rho, "acc")[0])
            best = metric(tuned, rho, "acc")[0]
            cells += [f"{acc[0]:.2f} / {nmi[0]:.2f}",
                      f"{best:.2f} ({_setting_text(tuned, tune)})", f"{best - acc[0]:.2f}"]
        lines.append(f"| {label} | {dataset} | {count} | " + " | ".join(cells) + " |")
    return "\n".join(lines), records


def main(argv=None):
    parser = argparse.ArgumentParser(prog="causefs-report", description=__doc__.split("\n")[0])
    parser.add_argument("--store", default="results/store", help="results store directory")
    parser.add_argument("--out", default="results/report", help="output directory")
    parser.add_argument("--rho", type=int, default=20, help="features of the tables")
    parser.add_argument("--data-dir", default=None, help="benchmark data (default $CAUSEFS_DATA)")
    parser.add_argument("--no-figures", action="store_true")
    parser.add_argument("--main", default="CAUSE-FS",
                        help="label of the method drawn in the convergence, sensitivity "
                             "and pixel figures (default CAUSE-FS)")
    parser.add_argument("--tune", default="", metavar="OPTION,...",
                        help="options a grid was swept over (alpha,lam,beta): results "
                             "differing only in them become one row, the best by ACC, "
                             "labelled 'tuned on labels'")
    parser.add_argument("--choose", default=None, choices=CRITERIA,
                        help="with --tune: also choose each grid's setting without labels "
                             "by this criterion (causefs.LabelFreeSearch's), labels or not")
    parser.add_argument("--result", default=None, metavar="FILE",
                        help="report one result.json (any run's) instead of a store")
    args = parser.parse_args(argv)
    tune = tuple(name for name in args.tune.split(",") if name)
    with one_line_warnings(parser.prog):  # a skipped store entry: one line, as errors
        try:
            if args.result is not None:
                text = report_result_file(args.result, args.out, args.data_dir,
                                          not args.no_figures)
            else:
                text = report(args.store, args.out, args.rho, args.data_dir,
                              not args.no_figures, args.main, tune, args.choose)
        except (OSError, ValueError, MissingDependencyError) as error:  # StoreError, --out
            parser.exit(2, f"{parser.prog}: error: {error}\n")  # a user error: as causefs's
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # causefs-report | head: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def report_result_file(path, out_dir, data_home=None, with_figures: bool = True) -> str:
    """The run report of one ``result.json`` (:func:`write_run_report`); returns its
    Markdown. A file that is not a result is a ``ValueError`` naming it."""
    path = Path(path).expanduser()
    try:
        result = json.loads(path.read_text())
        required = ("job", "dataset", "scores", "selected_features", "features_best_first")
        if not isinstance(result, dict) or any(key not in result for key in required):
            raise ValueError("not a causefs result (result.json layout)")
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"{path}: {error}") from None
    X = _image_data(result, data_home) if with_figures else None
    written = write_run_report(result, out_dir, X, with_figures)
    return written[0].read_text() + "".join(f"\nwritten: {p}" for p in written)


if __name__ == "__main__":
    main()
