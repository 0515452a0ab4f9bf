"""The known-nuisance experiment of docs/RESULTS.md: run it (resuming), tabulate it, plot it.

    python benchmarks/nuisance_shift.py                # run what is missing, then the report
    python benchmarks/nuisance_shift.py --report-only  # tables and figure from the store
    python benchmarks/nuisance_shift.py --workers 2    # jobs in parallel processes

Four parts, every job written into the results store (``--store``), so an interrupted run
resumes:

* the grid of ``conf/experiment/nuisance.yaml`` (7 regimes x 5 seeds): every baseline and
  the CAUSE-FS schedules without Z run once without it (``dataset.nuisance=null``), the
  schedules that use Z with it;
* the causal-features-only oracle of every regime (but the pose benchmark, whose every
  pixel is causal) and seed: MCFS, NDFS and CAUSE-FS-I
  fitted on the causal features alone (at k = the number of causal features that is
  all of them, no fit), each scored out of distribution like the methods;
* ``conf/experiment/nuisance_irrelevant.yaml``: the nuisance schedule given labels drawn
  independently of everything on the four shared benchmarks, and its base (ablation_I)
  without Z;
* a held-out family: shifted clusters with parameters the method was not tuned on
  (:data:`HELD_OUT`), fixed before the sweep.

The tables go into docs/RESULTS.md between ``<!-- nuisance:begin -->`` and
``<!-- nuisance:end -->`` (the target table into docs/GUIDE_CAUSAL.md too), the figure to
``docs/results/nuisance_ood_acc.png``.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before NumPy loads its BLAS
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import yaml  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from causal_shift import (  # noqa: E402
    arguments,
    grid_table,
    run_job,
    run_tasks,
    write_results,
)

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "causefs" / "conf"
RESULTS = ROOT / "docs" / "RESULTS.md"
GUIDE = ROOT / "docs" / "GUIDE_CAUSAL.md"
FIGURE = ROOT / "docs" / "results" / "nuisance_ood_acc.png"
BEGIN, END = "<!-- nuisance:begin -->", "<!-- nuisance:end -->"
#: selected features: the number of causal features where it is at most 20 (the shifted
#: clusters: precision@k can reach 1), the paper's 20 on the images
MAX_K = 20
SEEDS = range(5)
#: the baselines the target compares against, and CAUSE-FS's schedules
BASELINES = ("mcfs", "ndfs", "laplacian_score", "all_features")
#: the held-out family: shifted clusters with parameters the schedule was not tuned on
#: (every entry differs from conf/dataset/shifted_environments.yaml in several of them)
HELD_OUT = {
    "held-out A (6 clusters, 2 groups)": [
        "dataset.n_clusters=6", "dataset.n_causal=12", "dataset.n_groups=2",
        "dataset.n_spurious=16", "dataset.n_noise=40", "dataset.separation=2.5",
        "dataset.spurious_separation=2.5", "dataset.train_bias=[0.95,0.7,0.4]",
        "dataset.test_bias=[0.0,-0.8]", "evaluation.rhos=[12]"],
    "held-out B (weak causal, 2 groups)": [
        "dataset.n_groups=2", "dataset.n_spurious=16", "dataset.separation=1.5",
        "dataset.spurious_separation=2.0", "evaluation.rhos=[8]"],
    "held-out C (5 clusters, 4 groups)": [
        "dataset.n_clusters=5", "dataset.n_causal=10", "dataset.n_groups=4",
        "dataset.n_spurious=24", "dataset.separation=2.5", "dataset.spurious_separation=1.5",
        "dataset.train_bias=[0.8,0.5,0.2]", "dataset.n_train=500", "evaluation.rhos=[10]"],
}
HELD_OUT_METHODS = (["method=mcfs"], ["method=ndfs"], ["schedule=ablation_I"],
                    ["schedule=nuisance_adjusted"])


#: generators whose nuisance acts through the features themselves (COIL-20's pose): every
#: feature is causal and none spurious, so no causal-features-only oracle and no precision
WITHOUT_SPURIOUS_FEATURES = ("pose_shift",)


@functools.lru_cache
def has_oracle(dataset: str) -> bool:
    """Whether the dataset config ``dataset`` has spurious features, so that an oracle
    on its causal features alone means something."""
    return compose([f"dataset={dataset}"]).dataset.name not in WITHOUT_SPURIOUS_FEATURES


def sweep_params(name: str) -> dict:
    experiment = yaml.safe_load((CONF / "experiment" / f"{name}.yaml").read_text())
    return {k: str(v).split(",") for k, v in experiment["hydra"]["sweeper"]["params"].items()}


def uses_nuisance(schedule: str) -> bool:
    from causefs.core.schedule import entry_name
    from causefs.plugins import get_block, get_schedule

    spec = get_schedule(schedule)
    return any("Z" in get_block(entry_name(e)).reads for e in (*spec["init"], *spec["loop"]))


def main_jobs() -> list[tuple[list[str], str]]:
    """(overrides, experiment) of the grid: baselines and schedules without Z run once
    without it, the schedules that use Z with the dataset's."""
    params = sweep_params("nuisance")
    jobs = []
    for seed in params["dataset.seed"]:  # seed-major: a stopped run covers every regime
        for dataset in params["dataset"]:
            base = [f"dataset={dataset}", f"dataset.seed={seed}"]
            jobs += [(base + [f"method={m}", "dataset.nuisance=null"], "nuisance")
                     for m in params["method"] if m != "causefs"]
            for schedule in params["schedule"]:
                z = [] if uses_nuisance(schedule) else ["dataset.nuisance=null"]
                jobs.append((base + ["method=causefs", f"schedule={schedule}"] + z, "nuisance"))
    return jobs


def irrelevant_jobs() -> list[tuple[list[str], str]]:
    """The irrelevant-Z check: the default with random Z, its base without Z."""
    jobs = []
    for dataset in sweep_params("nuisance_irrelevant")["dataset"]:
        jobs.append(([f"dataset={dataset}", "schedule=nuisance_adjusted"], "nuisance_irrelevant"))
        jobs.append(([f"dataset={dataset}", "schedule=ablation_I", "dataset.nuisance=null"],
                     "nuisance_irrelevant"))
    return jobs


def held_out_cells() -> list[list[str]]:
    """The dataset overrides of the held-out family, seed-major."""
    return [["dataset=shifted_environments", f"dataset.seed={seed}", *overrides]
            for seed in SEEDS for overrides in HELD_OUT.values()]


def held_out_jobs() -> list[tuple[list[str], str]]:
    jobs = []
    for cell in held_out_cells():
        for method in HELD_OUT_METHODS:
            z = [] if "schedule=nuisance_adjusted" in method else ["dataset.nuisance=null"]
            jobs.append(([*cell, *method, *z], "nuisance"))
    return jobs


def compose(overrides: list[str], experiment: str = "nuisance"):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_module

    from causefs.app.configs import register_configs

    register_configs()
    with initialize_config_module(config_module="causefs.conf", version_base="1.3"):
        return hydra_compose(config_name="config",
                             overrides=[f"+experiment={experiment}", *overrides])


def oracle_job(overrides: list[str], store: Path) -> str:
    """The causal-features-only oracle of one dataset and seed, into the store: at k =
    every causal feature, k-means on them; below, the best of MCFS, NDFS and CAUSE-FS-I
    fitted on the causal features alone (the best chosen with the labels: an oracle)."""
    from causefs import CauseFS
    from causefs.app.cli import load
    from causefs.app.evaluation import evaluate_shift
    from causefs.app.store import ResultStore, job_key
    from causefs.numerics.scaling import scale_features
    from causefs.selectors import make_selector, ranking_from_scores
    from omegaconf import OmegaConf

    cfg = compose(overrides + ["dataset.nuisance=null"])
    spec = {"oracle": 1, "dataset": OmegaConf.to_container(cfg.dataset, resolve=True),
            "evaluation": OmegaConf.to_container(cfg.evaluation, resolve=True)}
    key, store_ = job_key(spec), ResultStore(store)
    if store_.lookup(key, spec) is not None:
        return key
    data = load(cfg)
    causal = np.asarray(data.causal)
    X = scale_features(np.asarray(data.X, dtype=float), cfg.preprocessing)[:, causal]
    n_clusters, k = int(np.unique(data.y).size), min(MAX_K, causal.size)
    rankings = {"all causal": np.arange(causal.size)}
    if k < causal.size:
        rankings = {}
        for name in ("mcfs", "ndfs"):
            scores = make_selector(name).score(X, n_clusters=n_clusters, n_features_to_select=k)
            rankings[name] = ranking_from_scores(scores)
        rankings["ablation_I"] = np.argsort(CauseFS(
            n_clusters=n_clusters, schedule="ablation_I", preprocessing="none",
            random_state=0).fit(X).ranking_)
    options = dict(n_clusters=n_clusters, n_runs=cfg.evaluation.n_runs, seed=cfg.evaluation.seed)
    names = np.asarray(data.test_names)
    by_method = {
        method: {str(env): evaluate_shift(data.X_test[names == env][:, causal],
                                          data.y_test[names == env], ranking[:k], [k],
                                          **options)
                 for env in dict.fromkeys(names)}
        for method, ranking in rankings.items()}
    best = max(by_method, key=lambda m: np.mean([t[k]["acc_mean"] for t in by_method[m].values()]))
    ranking = causal[rankings[best]].tolist()
    store_.put(key, {"key": key, "job": spec, "scores": [], "features_best_first": ranking,
                     "selected_features": ranking[:k], "oracle_method": best,
                     "metrics": {"test_environments": by_method[best]},
                     "causal_recovery": {str(k): {"precision": 1.0, "spurious_fraction": 0.0}}})
    return key


#: the grid's jobs the target compares (with the oracle) and the default's rival with Z
#: (centring): run first, seed by seed, so that a sweep stopped early has whole comparisons
FIRST_OVERRIDES = {"method=mcfs", "method=ndfs", "schedule=ablation_I",
                   "schedule=nuisance_adjusted", "schedule=nuisance_centered"}


#: seeds of every regime's compared jobs that run before the irrelevant-Z check (the
#: fewest that give a mean and a spread)
FIRST_SEEDS = 3


def run_all(store: Path, workers: int) -> None:
    """Every job missing from the store, in the order of what the targets need: the
    grid's target jobs, centring and the oracle cell by cell for the first
    :data:`FIRST_SEEDS` seeds, the irrelevant-Z check, the same for the other seeds, the
    held-out family, then the rest of the grid."""
    params = sweep_params("nuisance")
    grid = main_jobs()
    compared, rest = [], []
    for seed in params["dataset.seed"]:
        compared.append([])
        for dataset in params["dataset"]:
            cell = [f"dataset={dataset}", f"dataset.seed={seed}"]
            jobs = [(o, e) for o, e in grid if o[:2] == cell]
            compared[-1] += [(run_job, (o, store, e)) for o, e in jobs
                             if FIRST_OVERRIDES & set(o)]
            if has_oracle(dataset):
                compared[-1].append((oracle_job, (cell, store)))
            rest += [(run_job, (o, store, e)) for o, e in jobs
                     if not FIRST_OVERRIDES & set(o)]
    held_out = [(run_job, (o, store, e)) for o, e in held_out_jobs()]
    held_out += [(oracle_job, (cell, store)) for cell in held_out_cells()]
    tasks = [*sum(compared[:FIRST_SEEDS], []),
             *[(run_job, (o, store, e)) for o, e in irrelevant_jobs()],
             *sum(compared[FIRST_SEEDS:], []), *held_out, *rest]
    print(f"{len(tasks)} jobs into {store}", flush=True)
    run_tasks(tasks, workers)


# --- the report ---------------------------------------------------------------------

#: row names of CAUSE-FS's schedules
SCHEDULE_ROWS = {"full": "CAUSE-FS", "ablation_I": "CAUSE-FS-I",
                 "nuisance_adjusted": "CAUSE-FS + Z: adjusted (default with Z)",
                 "nuisance_centered": "CAUSE-FS + Z: centred",
                 "nuisance_balanced": "CAUSE-FS + Z: balanced"}
ORACLE = "oracle: causal features only"


def _plain_dataset(dataset: dict) -> str:
    """A dataset spec without what differs between jobs of one regime."""
    return json.dumps({k: v for k, v in dataset.items()
                       if k not in ("seed", "nuisance", "sha256", "path")}, sort_keys=True)


def regimes() -> dict:
    """``{plain dataset spec: regime name}`` of the grid, the held-out family and the
    irrelevant-Z datasets."""
    from omegaconf import OmegaConf

    names = {}
    for dataset in sweep_params("nuisance")["dataset"]:
        cfg = compose([f"dataset={dataset}"])
        names[_plain_dataset(OmegaConf.to_container(cfg.dataset, resolve=True))] = dataset
    for name, overrides in HELD_OUT.items():
        cfg = compose(["dataset=shifted_environments", *overrides])
        names[_plain_dataset(OmegaConf.to_container(cfg.dataset, resolve=True))] = name
    for dataset in sweep_params("nuisance_irrelevant")["dataset"]:
        names[_plain_dataset({"name": dataset, "path": None, "label_column": None})] = dataset
    return names


def row_of(result: dict) -> str:
    job = result["job"]
    if "oracle" in job:
        return ORACLE
    if job["method"] == "causefs":
        return SCHEDULE_ROWS.get(job["params"]["schedule"]["name"],
                                 f"CAUSE-FS[{job['params']['schedule']['name']}]")
    from causefs.selectors import get_selector

    return get_selector(job["method"]).label(job["params"])


def k_of(job: dict) -> int:
    rhos = job["evaluation"]["rhos"]
    return int(rhos[0]) if len(rhos) == 1 else 8 if job["dataset"]["name"] == \
        "shifted_clusters" else MAX_K


def collect(store: Path) -> dict:
    """``{regime: {row: {metric: [value per seed]}}}`` from the store."""
    names = regimes()
    table = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for path in sorted(Path(store).glob("*.json")):
        result = json.loads(path.read_text())
        job = result.get("job", {})
        regime = names.get(_plain_dataset(job.get("dataset", {})))
        if regime is None or not result.get("metrics"):
            continue
        row, k = table[regime][row_of(result)], str(k_of(job))
        metrics = result["metrics"]
        if "test_environments" in metrics:
            ood = [env[k] for env in metrics["test_environments"].values()]
            row["seed"].append(job["dataset"]["seed"])
            row["ood_acc"].append(np.mean([m["acc_mean"] for m in ood]))
            row["worst_acc"].append(min(m["acc_mean"] for m in ood))
            row["ood_nmi"].append(np.mean([m["nmi_mean"] for m in ood]))
            if job["dataset"]["name"] in WITHOUT_SPURIOUS_FEATURES:
                continue
            recovery = result["causal_recovery"][k]
            row["precision"].append(recovery["precision"])
            row["spurious"].append(recovery["spurious_fraction"])
        else:  # the paper's protocol on a shared benchmark
            for metric in ("acc", "nmi"):
                row[metric].append(metrics["selected"][k][f"{metric}_mean"])
                row[f"{metric}_std"].append(metrics["selected"][k][f"{metric}_std"])
    return table


METRICS = {"ood_acc": "OOD ACC (%), mean of the test environments",
           "worst_acc": "OOD ACC (%) of the worst test environment",
           "ood_nmi": "OOD NMI (%), mean of the test environments",
           "precision": "causal precision@k", "spurious": "spurious@k"}
#: the rows the target compares against (run without Z)
TARGET_BASELINES = ("MCFS", "NDFS", "CAUSE-FS-I")
DEFAULT_WITH_Z = SCHEDULE_ROWS["nuisance_adjusted"]


def _cell(values, scale: float, digits: int) -> str:
    values = scale * np.asarray(values, dtype=float)
    return f"{values.mean():.{digits}f} ± {values.std():.{digits}f} ({values.size})" \
        if values.size else "–"


def _rows(table: dict, regimes: list) -> list:
    rows = {row for regime in regimes for row in table[regime]}
    order = [*SCHEDULE_ROWS.values(), "MCFS", "NDFS", "LapScore", "AllFea", ORACLE]
    return sorted(rows, key=lambda r: order.index(r) if r in order else len(order))


def metric_tables(table: dict, regimes: list, metrics=tuple(METRICS)) -> list[str]:
    lines = []
    for metric in metrics:
        title = METRICS[metric]
        scale, digits = (100, 1) if "acc" in metric or "nmi" in metric else (1, 2)
        lines += grid_table(f"**{title}** (mean ± std over seeds (seeds); k = the number "
                            "of causal features on the shifted clusters, 20 on the images)",
                            "method",
                            _rows(table, regimes), regimes,
                            lambda row, regime: _cell(table[regime][row].get(metric, []),
                                                      scale, digits))
    return lines


def _ood_acc(row: dict, seeds: set) -> np.ndarray:
    """A row's OOD ACC (%) on ``seeds``."""
    return 100 * np.array([v for s, v in zip(row["seed"], row["ood_acc"]) if s in seeds])


def target_table(table: dict, regimes: list) -> list[str]:
    """Per regime, on the seeds every compared row has: the best of the baselines without
    Z, the oracle, the default with Z, and whether the issue's target holds (>= best - 1
    std; half the gap closed where the best is more than 5 points below the oracle)."""
    lines = ["| regime | best without Z (MCFS, NDFS, CAUSE-FS-I) | oracle | CAUSE-FS + Z "
             "(adjusted) | needed | met (by) | seeds |", "|---|---|---|---|---|---|---|"]
    for regime in regimes:
        rows = table[regime]
        compared = [*TARGET_BASELINES, DEFAULT_WITH_Z] + ([ORACLE] if ORACLE in rows else [])
        seeds = set.intersection(*(set(rows.get(r, {}).get("seed", [])) for r in compared))
        if not seeds:
            continue
        means = {r: _ood_acc(rows[r], seeds).mean() for r in TARGET_BASELINES}
        best = max(means, key=means.get)
        std = _ood_acc(rows[best], seeds).std()
        # no oracle (the pose benchmark): the target is the best without Z minus one std
        oracle = _ood_acc(rows[ORACLE], seeds).mean() if ORACLE in rows else np.nan
        ours = _ood_acc(rows[DEFAULT_WITH_Z], seeds)
        needed = means[best] - std
        if oracle - means[best] > 5:
            needed = max(needed, means[best] + (oracle - means[best]) / 2)
        lines.append(f"| {regime} | {best} {means[best]:.1f} ± {std:.1f} | "
                     f"{'–' if np.isnan(oracle) else f'{oracle:.1f}'} | "
                     f"{ours.mean():.1f} ± {ours.std():.1f} | {needed:.1f} | "
                     f"{'yes' if ours.mean() >= needed else 'NO'} "
                     f"({ours.mean() - needed:+.1f}) | {len(seeds)} |")
    return lines + [""]


def irrelevant_table(table: dict, datasets: list) -> list[str]:
    """ACC / NMI at 20 features (k-means x 50, mean ± std over the runs) with an
    irrelevant Z, beside the schedule's base without Z."""
    lines = ["| dataset | CAUSE-FS + Z (adjusted), Z random: ACC / NMI | CAUSE-FS-I without Z: "
             "ACC / NMI |", "|---|---|---|"]
    for dataset in datasets:
        cells = []
        for row in (DEFAULT_WITH_Z, "CAUSE-FS-I"):
            r = table[dataset].get(row, {})
            cells.append("–" if not r.get("acc") else
                         f"{100 * r['acc'][0]:.2f} ± {100 * r['acc_std'][0]:.2f} / "
                         f"{100 * r['nmi'][0]:.2f} ± {100 * r['nmi_std'][0]:.2f}")
        lines.append(f"| {dataset} | {cells[0]} | {cells[1]} |")
    return lines + [""]


def markdown(table: dict) -> str:
    grid = sweep_params("nuisance")["dataset"]
    lines = ["**Target** (OOD ACC %, mean ± std over seeds; *needed*: the best without Z "
             "minus one std, or half the gap to the oracle closed where the best is more "
             "than 5 points below it)", ""]
    lines += target_table(table, grid + list(HELD_OUT))
    lines += metric_tables(table, grid)
    lines += ["**Held-out family** (parameters not tuned on; k = the number of causal "
              "features)", ""]
    lines += metric_tables(table, list(HELD_OUT), ("ood_acc", "worst_acc", "precision"))
    lines += ["**Irrelevant Z** (labels drawn independently; 20 features, k-means x 50)", ""]
    lines += irrelevant_table(table, sweep_params("nuisance_irrelevant")["dataset"])
    return "\n".join(lines)


def figure(table: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    regimes = sweep_params("nuisance")["dataset"] + list(HELD_OUT)
    rows = ["MCFS", "NDFS", "CAUSE-FS", "CAUSE-FS-I", DEFAULT_WITH_Z,
            SCHEDULE_ROWS["nuisance_centered"], ORACLE]
    fig, ax = plt.subplots(figsize=(14, 5.2))
    width = 0.8 / len(rows)
    for i, row in enumerate(rows):
        values = [100 * np.asarray(table[r].get(row, {}).get("ood_acc", [np.nan]))
                  for r in regimes]
        ax.bar(np.arange(len(regimes)) + (i - len(rows) / 2 + 0.5) * width,
               [v.mean() for v in values], width, yerr=[v.std() for v in values],
               capsize=2, label=row, color=plt.cm.tab10(i))
    ax.set_xticks(np.arange(len(regimes)),
                  [r.replace("_", " ").replace("environments", "env.") for r in regimes],
                  rotation=20, ha="right", fontsize=8)
    ax.set(ylabel="OOD ACC (%), mean of the test environments",
           title="k-means on the selected features of the test environments (tie absent, "
                 "reversed); mean ± std over the seeds (their number: the tables)")
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(ncol=4, fontsize=8, loc="lower left")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    args = arguments(__doc__.split("\n")[0], ROOT / "results" / "nuisance")
    if not args.report_only:
        run_all(args.store, args.workers)
    table = collect(args.store)
    figure(table, FIGURE)
    write_results(markdown(table), RESULTS, BEGIN, END)
    regimes = sweep_params("nuisance")["dataset"] + list(HELD_OUT)
    write_results("\n".join(target_table(table, regimes)), GUIDE, BEGIN, END)
    print(f"updated {RESULTS}, {GUIDE} and {FIGURE}")


if __name__ == "__main__":
    main()
