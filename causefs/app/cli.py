"""The ``causefs`` command: a thin Hydra layer over the library.

Configuration groups mirror the plugin kinds (``schedule/``, ``kernel/``, ``qp/``,
``method/``) plus ``dataset/`` and ``experiment/``; see ``conf/config.yaml``. One run
fits one method of the selector registry (CAUSE-FS is one of them) on one dataset,
evaluates its ranking with the paper's protocol, prints a report and writes
``result.json`` into Hydra's run directory and, when ``store.enabled``, into the results
store (skipping a job whose result is already stored, so a sweep resumes).

The whole configuration is checked (:mod:`causefs.app.config_checks`) before the data is
loaded, and the data-bounded keys right after, so a bad key fails before any fit, in
the first job of a sweep. A user error (bad key, missing or malformed data file, a
memory budget that does not fit) is printed as one line ``causefs: error: ...`` with
exit status 2; set ``CAUSEFS_DEBUG=1`` for the full traceback. Warnings (an invalid store
entry moved aside, an installed plugin that failed to load) are one line each too,
``causefs: warning: ...``. Hydra is imported here
and in :mod:`causefs.app.configs` only.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import hydra
import numpy as np
from hydra.core.hydra_config import HydraConfig
from hydra.errors import HydraException
from hydra.utils import to_absolute_path
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from ..budget import MemoryLimitError
from ..core.extras import MissingDependencyError
from ..core.validation import InvalidParameterError, check_annotated
from ..datasets import GENERATORS, Dataset, DatasetError, DatasetWarning, load_dataset
from ..numerics.scaling import scale_features
from ..selectors import Selector, accepts_nuisance, ranking_from_scores
from .config_checks import (ConfigError, check_against_data, check_config,
                            check_nuisance_against_data, check_store_writable, make_method)
from .commands import one_line_warnings
from .configs import register_configs
from .evaluation import causal_recovery, evaluate_ranking, evaluate_shift
from .provenance import code_identity, versions
from .store import SCHEMA_VERSION, ResultStore, StoreError, job_key, write_json_atomic


class ResultWriteError(OSError):
    """A finished result that could not be written where asked (the message says where
    it was written instead)."""

#: environment variable that turns the one-line user errors into full tracebacks
DEBUG_ENV_VAR = "CAUSEFS_DEBUG"

#: errors of the user's making: printed as one line (the message names the key or file)
USER_ERRORS = (InvalidParameterError, DatasetError, MemoryLimitError, StoreError,
               MissingDependencyError, ResultWriteError)
#: Hydra's own errors (an override it cannot parse or apply): printed as one line too
HYDRA_ERRORS = (HydraException, OmegaConfBaseException)


@dataclass(frozen=True)
class Job:
    """One run: the method, the number of clusters, and what determines the result."""

    method: Selector
    n_clusters: int
    spec: dict

    @property
    def key(self) -> str:
        return job_key(self.spec)


def load(cfg: DictConfig) -> Dataset:
    """The configured dataset (with its nuisance variables when ``dataset.nuisance``
    names them); the loader's warnings (a column that looks like labels read as a
    feature) printed as one line each; a generator's refusal names its ``dataset.`` key."""
    options = {k: v for k, v in OmegaConf.to_container(cfg.dataset, resolve=True).items()
               if k not in ("name", "path", "label_column", "nuisance")}
    nuisance = cfg.dataset.get("nuisance")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DatasetWarning)
        try:
            data = load_dataset(cfg.dataset.name, path=cfg.dataset.get("path"),
                                data_home_path=cfg.get("data_dir"),
                                label_column=cfg.dataset.get("label_column"),
                                nuisance=OmegaConf.to_container(nuisance)
                                if OmegaConf.is_list(nuisance) else nuisance, **options)
        except InvalidParameterError as error:
            raise ConfigError(f"dataset.{error}") from None
    for warning in caught:
        print(f"causefs: warning: {warning.message}", file=sys.stderr)
    return data


#: configuration keys that hold paths, relative to the directory the command started in
PATH_KEYS = ("store.dir", "dataset.path", "data_dir")


def absolute_paths(cfg: DictConfig) -> None:
    """Make the relative paths of :data:`PATH_KEYS` absolute against the directory the
    command was started in, so that ``hydra.job.chdir=true`` (which runs the job in its
    run directory) moves neither the store nor the data."""
    for key in PATH_KEYS:
        value = OmegaConf.select(cfg, key)
        if isinstance(value, str) and value.strip():
            OmegaConf.update(cfg, key, to_absolute_path(os.path.expanduser(value)))


def given_on_command_line(key: str) -> bool:
    """Whether the command's overrides set ``key`` (True outside a Hydra run: a
    configuration composed in Python is taken as given)."""
    if not HydraConfig.initialized():
        return True
    overrides = HydraConfig.get().overrides.task
    return any(re.match(rf"^[+~]*{re.escape(key)}=", item) for item in overrides)


def cap_default_features(cfg: DictConfig, n_features: int) -> None:
    """The default ``n_features_to_select`` (20) on data with fewer features becomes
    all of them, with a line saying so; a number the user gave is never changed (one
    above the data's features is an error, :func:`check_against_data`)."""
    if cfg.n_features_to_select <= n_features or given_on_command_line("n_features_to_select"):
        return
    print(f"n_features_to_select: the default {cfg.n_features_to_select} exceeds the "
          f"{n_features} features of the data; ranking all {n_features} "
          f"(n_features_to_select=<k> keeps fewer)")
    cfg.n_features_to_select = n_features  # evaluation.rhos follows unless it was set


def plan(cfg: DictConfig, data: Dataset) -> Job:
    """The job: its method checked against the data, and the specification hashed into
    its store key (the data by content, the code's identity and installed plugins
    (:func:`~causefs.app.provenance.code_identity`), the method's options that can
    change the result, the seeds and the whole evaluation block)."""
    n_clusters = cfg.n_clusters or data.n_classes
    if n_clusters is None or n_clusters < 2:
        found = "no labels" if n_clusters is None else f"{n_clusters} class"
        raise ConfigError(f"n_clusters=null: dataset {data.name!r} has {found} to count "
                          "clusters from; set n_clusters=<int >= 2>")
    method = make_method(cfg)
    check_against_data(cfg, method, *data.X.shape, n_clusters)
    check_nuisance_against_data(data)
    given = {k: v for k, v in OmegaConf.to_container(cfg.method, resolve=True).items()
             if k != "name" and k not in method.result_neutral}
    normalized = method.result_options()  # 1 and 1.0 are one job
    options = {k: normalized.get(k, v) for k, v in given.items()}
    # no nuisance key when there is none: the key of a run without Z stays what it was
    dataset = {k: v for k, v in OmegaConf.to_container(cfg.dataset, resolve=True).items()
               if k != "path" and not (k == "nuisance" and v is None)}
    if cfg.dataset.name in GENERATORS and cfg.dataset.get("path") is None:
        dataset = check_annotated("dataset", GENERATORS[cfg.dataset.name], dataset)
    spec = {
        "dataset": {**dataset, "sha256": data.sha256()},
        "code": code_identity(),
        "n_features_to_select": cfg.n_features_to_select,
        "method": cfg.method.name,
        "params": options,
        "n_clusters": n_clusters,
        "preprocessing": cfg.preprocessing,
        "random_state": cfg.random_state,
        "evaluation": OmegaConf.to_container(cfg.evaluation, resolve=True),
    }
    return Job(method=method, n_clusters=n_clusters, spec=spec)


def score(cfg: DictConfig, job: Job, X: np.ndarray, nuisance=None) -> dict:
    """Fit the method on the scaled data (given the dataset's nuisance variables, if it
    has them and the method takes them): its scores, ranking and details."""
    # Z goes to a method that adjusts for it (one that does not was said before fitting)
    given = {"nuisance": nuisance} if nuisance is not None and job.method.uses_nuisance() \
        and accepts_nuisance(job.method) else {}
    start = time.perf_counter()
    scores = job.method.score(X, n_clusters=job.n_clusters,
                              n_features_to_select=max(int(r) for r in cfg.evaluation.rhos),
                              random_state=cfg.random_state, **given)
    seconds = time.perf_counter() - start
    best_first = ranking_from_scores(scores)
    return {"fit_seconds": seconds, "nuisance_given": bool(given),
            "details": job.method.details(), "scores": np.asarray(scores).tolist(),
            "features_best_first": best_first.tolist(),
            "selected_features": best_first[: cfg.n_features_to_select].tolist()}


def evaluate(cfg: DictConfig, job: Job, data: Dataset, X: np.ndarray, best_first) -> dict:
    """k-means on the top rho features (and on all, and on a test environment where the
    dataset has one), with a progress bar on a terminal; causal-feature recovery where
    the dataset knows its causal features."""
    evaluation, rhos = cfg.evaluation, [int(r) for r in cfg.evaluation.rhos]
    out = {"metrics": None}
    select_all = job.method.select_all
    if evaluation.enabled and data.y is not None:
        options = dict(n_clusters=job.n_clusters, n_runs=evaluation.n_runs,
                       seed=evaluation.seed, nmi_average=evaluation.nmi_average)
        metrics = {"selected": evaluate_ranking(X, data.y, best_first, rhos,
                                                select_all=select_all,
                                                progress="k-means, selected features",
                                                **options)}
        if evaluation.all_features and not select_all:
            metrics["all_features"] = evaluate_ranking(X, data.y, best_first, rhos[:1],
                                                       select_all=True,
                                                       progress="k-means, all features",
                                                       **options)
        if getattr(data, "X_test", None) is not None:  # a shifted benchmark
            metrics["test_environment"] = evaluate_shift(
                data.X_test, data.y_test, best_first, rhos, preprocessing=cfg.preprocessing,
                select_all=select_all, progress="k-means, test environment", **options)
        if getattr(data, "test_names", None) is not None:  # several test environments
            metrics["test_environments"] = {
                str(name): evaluate_shift(data.X_test[data.test_names == name],
                                          data.y_test[data.test_names == name], best_first,
                                          rhos, preprocessing=cfg.preprocessing,
                                          select_all=select_all,
                                          progress=f"k-means, test environment {name}",
                                          **options)
                for name in dict.fromkeys(data.test_names)}
        out["metrics"] = metrics
    if getattr(data, "causal", None) is not None:
        out["causal_recovery"] = causal_recovery(best_first, data.causal, rhos,
                                                 data.spurious)
    return out


def result_path(cfg: DictConfig, output_dir: Path | None) -> Path:
    """Where ``result_file`` goes: a relative path inside the run directory, an
    absolute one (``~`` expanded) where it says."""
    path = Path(os.path.expanduser(cfg.result_file))
    if path.is_absolute():
        return path
    if output_dir is None:
        output_dir = Path(HydraConfig.get().runtime.output_dir)
    return Path(output_dir) / path


def write(cfg: DictConfig, result: dict, output_dir: Path | None,
          store: ResultStore | None) -> None:
    """The entry into the store, then ``result_file``; each write's failure leaves the
    other. A result neither could take is written into the temporary directory, so a
    finished fit is never lost; any failed write is then a :class:`ResultWriteError`
    saying where the result is."""
    failed, kept = [], []
    if store is not None:
        try:
            kept.append(store.put(result["key"], result))
            print(f"stored as {kept[-1]}")
        except OSError as error:
            failed.append(f"the results store entry in {store.root} ({_reason(error)})")
    path = result_path(cfg, output_dir)
    try:
        write_json_atomic(path, result)
        kept.append(path)
        print(f"result written to {path}")
    except OSError as error:
        failed.append(f"{path} ({_reason(error)})")
    if not failed:
        return
    if not kept:
        kept.append(Path(tempfile.gettempdir()) / f"causefs-result-{result['key']}.json")
        write_json_atomic(kept[-1], result)
    raise ResultWriteError(f"could not write {' nor '.join(failed)}; the result is in "
                           f"{kept[0]}")


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def run(cfg: DictConfig, output_dir: Path | None = None) -> dict | None:
    """Check the configuration, then fit, evaluate, report, and write the result (run
    directory and store); with ``dry_run``, stop after the checks and the plan. With a
    store, a stored job is skipped (its result returned), and so is a job another process
    is computing (None: it stores the result)."""
    absolute_paths(cfg)
    check_config(cfg)
    data = load(cfg)
    cap_default_features(cfg, data.X.shape[1])
    job = plan(cfg, data)
    if cfg.evaluation.enabled and data.y is None:
        print(f"no evaluation: dataset {data.name!r} has no labels")
    store = ResultStore(cfg.store.dir) if cfg.store.enabled else None
    if cfg.dry_run:
        stored = store.lookup(job.key, job.spec) if store is not None else None
        if store is not None and stored is None:
            check_store_writable(cfg.store.dir)
        print(f"dry run: {cfg.method.name} on {data.name} ({data.X.shape[0]} x "
              f"{data.X.shape[1]}, {job.n_clusters} clusters), key {job.key}"
              + ("; in the store" if stored is not None else ""))
        return {"key": job.key, "job": job.spec, "dry_run": True}
    if store is None:
        return compute(cfg, job, data, output_dir, None)
    stored = stored_result(cfg, store, job)
    if stored is not None:
        return stored
    check_store_writable(cfg.store.dir)  # before the fit, whose result it would lose
    with store.claim(job.key) as claim:
        if not claim.held:
            print(f"result {job.key} is being computed by {claim.holder}: skipped (a re-run "
                  "computes it if that process stops first)")
            return None
        stored = stored_result(cfg, store, job)  # stored meanwhile by another process
        return stored if stored is not None else compute(cfg, job, data, output_dir, store)


def stored_result(cfg: DictConfig, store: ResultStore, job: Job) -> dict | None:
    """The stored result of ``job`` (None with ``store.overwrite`` or when not stored)."""
    if cfg.store.overwrite:
        return None
    stored = store.lookup(job.key, job.spec)
    if stored is not None:
        print(f"result {job.key} already in {store.root}: skipped")
    return stored


def compute(cfg: DictConfig, job: Job, data: Dataset, output_dir: Path | None,
            store: ResultStore | None) -> dict:
    """Fit, evaluate, report, and write the result (run directory and ``store``)."""
    X = scale_features(np.asarray(data.X, dtype=float), cfg.preprocessing)
    warn_if_nuisance_ignored(cfg, job, data)
    result = {"schema": SCHEMA_VERSION, "key": job.key, "job": job.spec,
              "config": OmegaConf.to_container(cfg, resolve=True),
              "dataset": {"name": data.name, "source": data.source, "n_samples": X.shape[0],
                          "n_features": X.shape[1], "n_classes": data.n_classes,
                          "image_shape": data.image_shape,
                          "feature_names": None if data.feature_names is None
                          else list(data.feature_names)},
              "versions": versions()}
    result.update(score(cfg, job, X, data.nuisance))
    names = result["dataset"]["feature_names"]
    result["selected_feature_names"] = None if names is None else \
        [names[f] for f in result["selected_features"]]
    result.update(evaluate(cfg, job, data, X, np.asarray(result["features_best_first"])))
    print_result(result, job.method)
    write(cfg, result, output_dir, store)
    return result


def warn_if_nuisance_ignored(cfg: DictConfig, job: Job, data: Dataset) -> None:
    """Say, before fitting, that the dataset's nuisance variables will not be used."""
    if data.nuisance is None or job.method.uses_nuisance():
        return
    what = f"schedule {cfg.schedule.name!r}" if cfg.method.name == "causefs" \
        else f"method {cfg.method.name!r}"
    print(f"causefs: warning: dataset {data.name!r} has nuisance variables, but {what} "
          "does not adjust for them (schedule=auto does; so do the methods screening, "
          "per_level and location_scale)", file=sys.stderr)


def print_result(result: dict, method: Selector) -> None:
    """Print what a run did."""
    d = result["dataset"]
    print(f"dataset {d['name']}: {d['n_samples']} samples x {d['n_features']} features"
          + (f", {d['n_classes']} classes" if d["n_classes"] else ""))
    print(f"method {result['job']['method']}: {result['fit_seconds']:.2f} s")
    for line in method.describe(result["details"]):
        print(line)
    print("selected features (best first): " + selected_text(result))
    if result.get("nuisance_given"):
        print("the dataset's nuisance variables were given to the method")
    metrics = dict(result["metrics"] or {})
    where = {"test_environment": " of the test environment"}
    tables = [(where.get(name, ""), table) for name, table in metrics.items()
              if name != "test_environments"]
    tables += [(f" of test environment {env}", table)
               for env, table in metrics.get("test_environments", {}).items()]
    for suffix, table in tables:
        for rho, m in table.items():
            label = ("all features" if m["features"] == d["n_features"]
                     else f"top {rho} features")
            print(f"k-means on {label}{suffix} ({m['n_runs']} runs): "
                  f"ACC {100 * m['acc_mean']:.2f} +- {100 * m['acc_std']:.2f} %, "
                  f"NMI {100 * m['nmi_mean']:.2f} +- {100 * m['nmi_std']:.2f} %")
    for rho, r in (result.get("causal_recovery") or {}).items():
        print(f"causal features in the top {rho}: precision {r['precision']:.2f}, "
              f"recall {r['recall']:.2f}, spurious fraction {r['spurious_fraction']:.2f}")


def selected_text(result: dict) -> str:
    """The selected features, best first: by name with the column number where the data
    names its features, else by column number (0-based)."""
    names = result.get("selected_feature_names")
    if names is None:
        return str(result["selected_features"])
    return ", ".join(f"{name} ({column})"
                     for name, column in zip(names, result["selected_features"]))


def fail(message: str) -> None:
    """Print a user error as one line and exit with status 2."""
    message = " ".join(line.strip() for line in message.splitlines() if line.strip())
    print(f"causefs: error: {message} (set {DEBUG_ENV_VAR}=1 for the traceback)",
          file=sys.stderr)
    sys.exit(2)


def hydra_error_message(error: Exception) -> str:
    """One line of a Hydra error: an unknown key with the closest known ones, or Hydra's
    own message with its option lists on the line and its search path left out."""
    cause = error.__cause__
    if isinstance(cause, (ConfigAttributeError, ConfigKeyError)) and "not in struct" in str(cause):
        override = re.search(r"use \+(\S+)", str(error))
        given = override.group(1) if override else cause.full_key
        known = list(cause.parent_node.keys()) if cause.parent_node is not None else []
        prefix = cause.full_key[: -len(str(cause.key))]
        key, value = str(cause.key), given.partition("=")[2]
        root = cause.parent_node._get_root() if cause.parent_node is not None else None
        if prefix and root is not None and key in root:  # a top-level key under a group
            return f"{given}: {key} is a top-level key, not one of {prefix[:-1]}: {key}={value}"
        method = root.get("method") if root is not None and prefix != "method." else None
        if method is not None and key in method:  # an option of the method
            return f"{given}: {key} is an option of the method: method.{key}={value}"
        close = difflib.get_close_matches(str(cause.key), known, n=3)
        hint = f" (did you mean {', '.join(prefix + k for k in close)}?)" if close else ""
        if prefix == "schedule." and known == ["name"]:  # the default schedule, auto
            hint = (" (schedule=auto has no blocks to edit: start from a registered "
                    "schedule, e.g. schedule=full schedule.name=mine)")
        return (f"{given}: {cause.full_key} is not a key of the configuration{hint}; "
                f"+{given} would add it")
    unparsed = re.match(r"\w*(?:NoViableAlt|Lexer|Parse)\w*: (\S+?)=(.*)", str(error))
    if unparsed:  # Hydra's grammar refused a value: ~, non-ASCII letters, ...
        key, value = unparsed.groups()
        return (f"{key}={value}: the command line cannot read this value as it is; quote "
                f"it, as '{key}=\"{value}\"' (with the single quotes, for the shell)")
    text = str(error).split("Config search path:")[0]
    text = re.sub(r":\s*\n\t", ": ", text)
    text = re.sub(r"\n\t", ", ", text)
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


@hydra.main(version_base="1.3", config_path="pkg://causefs.conf", config_name="config")
def _main(cfg: DictConfig) -> None:
    try:
        run(cfg)
    except USER_ERRORS as error:
        if os.environ.get(DEBUG_ENV_VAR):
            raise
        fail(str(error))


def main() -> None:
    """The ``causefs`` command (after :func:`causefs.app.commands.causefs`)."""
    with one_line_warnings("causefs"):  # before the plugins load and may warn
        register_configs()
        # Hydra prints its own errors (an override it cannot parse or apply) over
        # several lines and exits 1 unless HYDRA_FULL_ERROR is set; set, they reach the
        # handler below
        user_choice = os.environ.get("HYDRA_FULL_ERROR")
        os.environ["HYDRA_FULL_ERROR"] = "1"
        try:
            _main()
        except HYDRA_ERRORS as error:
            if user_choice or os.environ.get(DEBUG_ENV_VAR):
                raise
            fail(hydra_error_message(error))
        finally:
            if user_choice is None:
                os.environ.pop("HYDRA_FULL_ERROR", None)


if __name__ == "__main__":  # python -m causefs.app.cli
    sys.exit(main())
