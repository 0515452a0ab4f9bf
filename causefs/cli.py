"""The ``causefs`` command: a thin Hydra layer over the library.

The only module that imports Hydra. Configuration groups mirror the plugin kinds
(``schedule/``, ``kernel/``, ``qp/``, ``method/``) plus ``dataset/`` and ``experiment/``;
see ``conf/config.yaml``. One run fits one method on one dataset, evaluates the ranking
with the paper's protocol, prints a report and writes ``result.json`` into Hydra's run
directory and, when ``store.enabled``, into the results store (skipping a job whose
result is already stored, so a sweep resumes).

The whole configuration is checked (:mod:`causefs.config_checks`) before the data is
loaded, and the data-bounded keys right after, so a bad key fails before any fit, in
the first job of a sweep. A user error (bad key, missing or malformed data file, a
memory budget that does not fit) is printed as one line ``causefs: error: ...`` with
exit status 2; set ``CAUSEFS_DEBUG=1`` for the full traceback.
"""

from __future__ import annotations

import inspect
import os
import platform
import sys
import time
from pathlib import Path

import hydra
import numpy as np
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from . import __version__
from .config_checks import ConfigError, check_against_data, check_config
from .configs import check_schedule_config, register_configs
from .datasets import DatasetError, load_dataset
from .diagnostics import describe
from .estimator import CauseFS
from .evaluation import causal_recovery, evaluate_ranking, evaluate_shift
from .memory import MemoryLimitError
from .preprocessing import scale_features
from .scheduler import ScheduleError, seconds_by
from .selectors import make_selector, ranking_from_scores
from .store import ResultStore, StoreError, job_key, write_json_atomic

#: keys that do not change a result (excluded from the job key)
_NOT_IN_KEY = ("verbose", "memory_limit", "data_dir", "store", "result_file", "evaluation")

#: environment variable that turns the one-line user errors into full tracebacks
DEBUG_ENV_VAR = "CAUSEFS_DEBUG"

#: errors of the user's making: printed as one line (the message names the key or file)
USER_ERRORS = (ConfigError, DatasetError, MemoryLimitError, ScheduleError, StoreError)


def versions() -> dict:
    import cvxpy
    import scipy
    import sklearn

    return {"causefs": __version__, "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "scikit-learn": sklearn.__version__,
            "cvxpy": cvxpy.__version__, "hydra": hydra.__version__}


def causefs_params(cfg: DictConfig) -> dict:
    """CauseFS parameters from the top-level keys and the schedule/kernel/qp groups."""
    params = {name: cfg[name] for name in inspect.signature(CauseFS).parameters
              if name in cfg and name not in ("schedule", "kernel", "qp", "n_clusters")}
    for group in ("schedule", "kernel", "qp"):
        params[group] = OmegaConf.to_container(cfg[group], resolve=True)
    check_schedule_config(params["schedule"])
    return params


def estimator_from_config(cfg: DictConfig, n_clusters: int) -> CauseFS:
    """A CauseFS from the top-level keys named like its parameters and the plugin groups."""
    return CauseFS(n_clusters=n_clusters, **causefs_params(cfg))


def _dataset_options(cfg: DictConfig) -> dict:
    options = OmegaConf.to_container(cfg.dataset, resolve=True)
    return {k: v for k, v in options.items() if k not in ("name", "path", "label_column")}


def job_spec(cfg: DictConfig, n_clusters: int, data_sha256: str) -> dict:
    """Everything that determines a job's result: hashed into its store key.

    The data enter by content (``data_sha256``, :meth:`Dataset.sha256`), not by path,
    with the code's version and ``n_features_to_select`` (``selected_features``).
    """
    method = OmegaConf.to_container(cfg.method, resolve=True)
    if method["name"] == "causefs":
        params = {k: v for k, v in causefs_params(cfg).items()
                  if k not in _NOT_IN_KEY + ("n_features_to_select",)}
    else:
        params = {k: v for k, v in method.items() if k != "name"}
    evaluation = OmegaConf.to_container(cfg.evaluation, resolve=True)
    dataset = {k: v for k, v in OmegaConf.to_container(cfg.dataset, resolve=True).items()
               if k != "path"}
    return {
        "dataset": {**dataset, "sha256": data_sha256},
        "version": __version__,
        "n_features_to_select": cfg.n_features_to_select,
        "method": method["name"],
        "params": params,
        "n_clusters": n_clusters,
        "preprocessing": cfg.preprocessing,
        "random_state": cfg.random_state,
        "evaluation": evaluation,  # all of it: enabled and all_features change the metrics
    }


def run(cfg: DictConfig, output_dir: Path | None = None) -> dict:
    """Check the configuration, then fit, evaluate, report, and write the result (run
    directory and store)."""
    check_config(cfg)
    data = load_dataset(cfg.dataset.name, path=cfg.dataset.get("path"),
                        data_home_path=cfg.get("data_dir"),
                        label_column=cfg.dataset.get("label_column"), **_dataset_options(cfg))
    check_against_data(cfg, *data.X.shape)
    n_clusters = cfg.n_clusters or data.n_classes
    if n_clusters is None or n_clusters < 2:
        found = "no labels" if n_clusters is None else f"{n_clusters} class"
        raise ConfigError(f"n_clusters=null: dataset {data.name!r} has {found} to count "
                          "clusters from; set n_clusters=<int >= 2>")
    if cfg.method.name == "causefs":  # the estimator's own checks, before any fit
        try:
            estimator_from_config(cfg, n_clusters)._validate_params_for(*data.X.shape)
        except (ValueError, TypeError) as error:
            raise ConfigError(str(error)) from None
    if cfg.evaluation.enabled and data.y is None:
        print(f"no evaluation: dataset {data.name!r} has no labels")
    spec = job_spec(cfg, n_clusters, data.sha256())
    key = job_key(spec)
    store = ResultStore(cfg.store.dir) if cfg.store.enabled else None
    if store is not None and not cfg.store.overwrite:
        stored = store.lookup(key, spec)
        if stored is not None:
            print(f"result {key} already in {store.root}: skipped")
            return stored

    X = np.asarray(data.X, dtype=float)
    Xs = scale_features(X, cfg.preprocessing)  # what every method and k-means see
    rhos = [int(r) for r in cfg.evaluation.rhos]
    result = {"key": key, "job": spec, "config": OmegaConf.to_container(cfg, resolve=True),
              "dataset": {"name": data.name, "source": data.source, "n_samples": X.shape[0],
                          "n_features": X.shape[1], "n_classes": data.n_classes,
                          "image_shape": data.image_shape},
              "versions": versions()}
    start = time.perf_counter()
    select_all = False
    if spec["method"] == "causefs":
        params = causefs_params(cfg)
        params["n_features_to_select"] = cfg.n_features_to_select
        estimator = CauseFS(n_clusters=n_clusters, **params).fit(X)
        scores = estimator.scores_
        result.update(
            objective_history=estimator.objective_history_.tolist(),
            final_terms=estimator.trace_[-1]["terms"] if estimator.trace_ else None,
            n_iter=estimator.n_iter_, block_seconds=seconds_by(estimator.trace_),
            n_granularities=int(estimator.groups_.max()) + 1,
            sample_weight=estimator.sample_weight_.tolist(),
            diagnostics=estimator.diagnostics_.summary())
    else:
        options = {k: v for k, v in OmegaConf.to_container(cfg.method, resolve=True).items()
                   if k != "name"}
        selector = make_selector(spec["method"], **options)
        select_all = selector.select_all
        scores = selector.score(Xs, n_clusters=n_clusters,
                                n_features_to_select=max(rhos),
                                random_state=cfg.random_state)
    result["fit_seconds"] = time.perf_counter() - start
    ranking = ranking_from_scores(scores)
    result["scores"] = np.asarray(scores).tolist()
    result["ranking"] = ranking.tolist()
    result["selected_features"] = ranking[: cfg.n_features_to_select].tolist()
    result["metrics"] = None
    evaluation = cfg.evaluation
    if evaluation.enabled and data.y is not None:
        options = dict(n_clusters=n_clusters, n_runs=evaluation.n_runs, seed=evaluation.seed,
                       nmi_average=evaluation.nmi_average)
        result["metrics"] = {"selected": evaluate_ranking(Xs, data.y, ranking, rhos,
                                                          select_all=select_all, **options)}
        if evaluation.all_features and not select_all:
            result["metrics"]["all_features"] = evaluate_ranking(
                Xs, data.y, ranking, rhos[:1], select_all=True, **options)
        if getattr(data, "X_test", None) is not None:  # a shifted benchmark (causefs.shifted)
            result["metrics"]["test_environment"] = evaluate_shift(
                data.X_test, data.y_test, ranking, rhos, preprocessing=cfg.preprocessing,
                select_all=select_all, **options)
    if getattr(data, "causal", None) is not None:
        result["causal_recovery"] = causal_recovery(ranking, data.causal, rhos, data.spurious)

    _report(result)
    if output_dir is None:
        output_dir = Path(HydraConfig.get().runtime.output_dir)
    path = Path(output_dir) / cfg.result_file
    write_json_atomic(path, result)
    print(f"result written to {path}")
    if store is not None:
        print(f"stored as {store.put(key, result)}")
    return result


def _report(result: dict) -> None:
    d = result["dataset"]
    print(f"dataset {d['name']}: {d['n_samples']} samples x {d['n_features']} features"
          + (f", {d['n_classes']} classes" if d["n_classes"] else ""))
    print(f"method {result['job']['method']}: {result['fit_seconds']:.2f} s"
          + (f", {result['n_iter']} iterations, {result['n_granularities']} feature "
             f"granularities" if "n_iter" in result else ""))
    print(f"selected features (best first): {result['selected_features']}")
    if "objective_history" in result:
        print("objective by iteration: "
              + ", ".join(f"{v:.6g}" for v in result["objective_history"]))
    if "diagnostics" in result:
        print(describe(result["diagnostics"]))
    for name, table in (result["metrics"] or {}).items():
        for rho, m in table.items():
            label = ("all features" if m["features"] == d["n_features"]
                     else f"top {rho} features")
            label += " of the test environment" if name == "test_environment" else ""
            print(f"k-means on {label} ({m['n_runs']} runs): "
                  f"ACC {100 * m['acc_mean']:.2f} +- {100 * m['acc_std']:.2f} %, "
                  f"NMI {100 * m['nmi_mean']:.2f} +- {100 * m['nmi_std']:.2f} %")
    for rho, r in (result.get("causal_recovery") or {}).items():
        print(f"causal features in the top {rho}: precision {r['precision']:.2f}, "
              f"recall {r['recall']:.2f}, spurious fraction {r['spurious_fraction']:.2f}")


@hydra.main(version_base="1.3", config_path="pkg://causefs.conf", config_name="config")
def _main(cfg: DictConfig) -> None:
    try:
        run(cfg)
    except USER_ERRORS as error:
        if os.environ.get(DEBUG_ENV_VAR):
            raise
        message = " ".join(line.strip() for line in str(error).splitlines())  # one line
        print(f"causefs: error: {message} (set {DEBUG_ENV_VAR}=1 for the traceback)",
              file=sys.stderr)
        sys.exit(2)


def main() -> None:
    """Console entry point (``causefs``)."""
    register_configs()
    _main()


if __name__ == "__main__":  # python -m causefs.cli
    sys.exit(main())
