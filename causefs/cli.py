"""The ``causefs`` command: a thin Hydra layer over :class:`causefs.CauseFS`.

The only module that imports Hydra. Configuration groups mirror the plugin kinds
(``schedule/``, ``kernel/``, ``qp/``) plus ``dataset/``; see ``conf/config.yaml``.
"""

from __future__ import annotations

import inspect
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import hydra
import numpy as np
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from . import __version__
from .datasets import load_dataset
from .estimator import CauseFS
from .metrics import kmeans_scores
from .preprocessing import scale_features


def write_json_atomic(path: Path, payload: dict) -> None:
    """Write JSON to a temporary file in the same directory, then rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(payload, out, indent=2, default=_json_default)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def versions() -> dict:
    import cvxpy
    import scipy
    import sklearn

    return {"causefs": __version__, "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "scikit-learn": sklearn.__version__,
            "cvxpy": cvxpy.__version__, "hydra": hydra.__version__}


def estimator_from_config(cfg: DictConfig, n_clusters: int) -> CauseFS:
    """A CauseFS from the top-level keys named like its parameters and the plugin groups."""
    params = {name: cfg[name] for name in inspect.signature(CauseFS).parameters
              if name in cfg and name not in ("schedule", "kernel", "qp")}
    params["n_clusters"] = n_clusters
    for group in ("schedule", "kernel", "qp"):
        params[group] = OmegaConf.to_container(cfg[group], resolve=True)
    return CauseFS(**params)


def run(cfg: DictConfig, output_dir: Path | None = None) -> dict:
    """Load the dataset, fit, evaluate, print a report and write the JSON result."""
    data = load_dataset(cfg.dataset.name, path=cfg.dataset.get("path"),
                        data_home_path=cfg.get("data_dir"),
                        label_column=cfg.dataset.get("label_column"))
    n_clusters = cfg.n_clusters or data.n_classes
    if n_clusters is None:
        raise ValueError(f"dataset {data.name!r} has no labels: set n_clusters=<int>")
    estimator = estimator_from_config(cfg, int(n_clusters))
    start = time.perf_counter()
    estimator.fit(data.X)
    fit_seconds = time.perf_counter() - start
    selected = np.flatnonzero(estimator.support_)
    order = np.argsort(estimator.ranking_, kind="stable")[: selected.size]

    block_seconds: dict = {}
    for record in estimator.trace_:
        block_seconds[record["block"]] = block_seconds.get(record["block"], 0.0) + record["seconds"]
    result = {
        "dataset": {"name": data.name, "source": data.source, "n_samples": data.X.shape[0],
                    "n_features": data.X.shape[1], "n_classes": data.n_classes},
        "config": OmegaConf.to_container(cfg, resolve=True),
        "selected_features": order.tolist(),
        "scores": estimator.scores_.tolist(),
        "objective_history": estimator.objective_history_.tolist(),
        "final_terms": estimator.trace_[-1]["terms"] if estimator.trace_ else None,
        "n_iter": estimator.n_iter_,
        "n_granularities": int(estimator.groups_.max()) + 1,
        "fit_seconds": fit_seconds,
        "block_seconds": block_seconds,
        "versions": versions(),
        "metrics": None,
    }
    evaluation = cfg.evaluation
    if evaluation.enabled and data.y is not None:
        options = dict(n_clusters=int(n_clusters), n_runs=evaluation.n_runs,
                       seed=evaluation.seed, nmi_average=evaluation.nmi_average)
        # k-means sees the features as the selector did: scaled the same way
        Xs = scale_features(np.asarray(data.X, dtype=float), cfg.preprocessing)
        result["metrics"] = {"selected": kmeans_scores(Xs[:, order], data.y, **options)}
        if evaluation.all_features:
            result["metrics"]["all_features"] = kmeans_scores(Xs, data.y, **options)

    _report(result)
    if output_dir is None:
        output_dir = Path(HydraConfig.get().runtime.output_dir)
    path = Path(output_dir) / cfg.result_file
    write_json_atomic(path, result)
    print(f"result written to {path}")
    return result


def _report(result: dict) -> None:
    d = result["dataset"]
    print(f"dataset {d['name']}: {d['n_samples']} samples x {d['n_features']} features"
          + (f", {d['n_classes']} classes" if d["n_classes"] else ""))
    print(f"fit: {result['fit_seconds']:.2f} s, {result['n_iter']} iterations, "
          f"{result['n_granularities']} feature granularities")
    print(f"selected features (best first): {result['selected_features']}")
    history = result["objective_history"]
    print("objective by iteration: " + ", ".join(f"{v:.6g}" for v in history))
    if result["metrics"]:
        for name, m in result["metrics"].items():
            print(f"k-means on {name.replace('_', ' ')} ({m['n_runs']} runs): "
                  f"ACC {100 * m['acc_mean']:.2f} +- {100 * m['acc_std']:.2f} %, "
                  f"NMI {100 * m['nmi_mean']:.2f} +- {100 * m['nmi_std']:.2f} %")


@hydra.main(version_base="1.3", config_path="pkg://causefs.conf", config_name="config")
def _main(cfg: DictConfig) -> None:
    run(cfg)


def main() -> None:
    """Console entry point (``causefs``)."""
    _main()


if __name__ == "__main__":  # python -m causefs.cli
    sys.exit(main())
