"""Checks of a ``causefs`` command configuration, run before any data is loaded or fitted.

:func:`check_config` checks every key of the composed configuration (types, ranges,
allowed values, the plugins' options, a writable store) and :func:`check_against_data`
the keys bounded by the data's shape. Each failure is a :class:`ConfigError` whose
message names the key, the value given and what is allowed, so the command can print
it as one line. Kept apart from :mod:`causefs.cli` so it is testable without Hydra.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Mapping
from importlib import resources

from omegaconf import DictConfig, OmegaConf

from .datasets import BENCHMARKS, EMBEDDED, make_causal
from .shifted import SHIFTED

#: datasets made by a generator, whose keyword arguments are the dataset's options
GENERATORS = {"synthetic": make_causal, **SHIFTED}
from .engine import resolve_kernel, resolve_qp, resolve_schedule
from .memory import parse_memory_limit
from .metrics import NMI_AVERAGES
from .plugins.registry import get_block
from .preprocessing import SCALINGS
from .selectors import available_selectors, make_selector
from .store import ResultStore, StoreError

#: dataset keys every dataset has; the others are make_causal's (dataset=synthetic)
_DATASET_KEYS = ("name", "path", "label_column")


class ConfigError(ValueError):
    """A configuration value that is not allowed (the message names the key)."""


def _fail(key, value, requirement):
    raise ConfigError(f"{key}={value!r}: {requirement}")


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(key, value, low=None, *, allow_none=False):
    """``value`` as an int >= ``low`` (or None with ``allow_none``)."""
    if value is None and allow_none:
        return None
    if not _is_int(value) or (low is not None and value < low):
        bound = f" >= {low}" if low is not None else ""
        _fail(key, value, f"must be an integer{bound}" + (" or null" if allow_none else ""))
    return int(value)


def check_bool(key, value) -> bool:
    if not isinstance(value, bool):
        _fail(key, value, "must be true or false")
    return value


def check_choice(key, value, allowed):
    if value not in allowed:
        _fail(key, value, f"allowed values are {', '.join(map(str, allowed))}")
    return value


def _known_config() -> DictConfig:
    """config.yaml with its groups (``dataset``, ``method``, ...) as empty entries."""
    text = resources.files("causefs.conf").joinpath("config.yaml").read_text()
    config = OmegaConf.create(text)
    for entry in config.get("defaults", []):
        group = entry if isinstance(entry, str) else next(iter(entry))
        if group != "_self_":
            config[group] = {}
    return config


def _plain(cfg, key):
    return OmegaConf.to_container(cfg[key], resolve=True)


def _unknown_keys(cfg, known: DictConfig, prefix="") -> list:
    """Keys of ``cfg`` that ``known`` (config.yaml) lacks, in the groups config.yaml
    defines fully (the top level, ``evaluation``, ``store``)."""
    unknown = [f"{prefix}{k}" for k in cfg if k not in known]
    for group in ("evaluation", "store"):
        if not prefix and group in cfg and group in known:
            unknown += _unknown_keys(cfg[group], known[group], f"{group}.")
    return unknown


def check_config(cfg: DictConfig) -> None:
    """Raise :class:`ConfigError` for the first key that is not allowed."""
    unknown = sorted(set(_unknown_keys(cfg, _known_config())) - {"defaults"})
    if unknown:
        raise ConfigError(f"unknown key(s) {', '.join(unknown)}: see causefs --help")
    _check_dataset(cfg)
    check_int("n_clusters", cfg.n_clusters, low=2, allow_none=True)
    check_int("n_features_to_select", cfg.n_features_to_select, low=1)
    check_choice("preprocessing", cfg.preprocessing, SCALINGS)
    check_int("random_state", cfg.random_state, low=0)
    for key in ("verbose", "trace"):  # the estimator takes any truthy value for these
        if key in cfg:
            check_bool(key, cfg[key])
    try:
        parse_memory_limit(cfg.memory_limit)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    if not isinstance(cfg.result_file, str) or not cfg.result_file.strip() \
            or cfg.result_file.endswith(("/", "\\")):
        _fail("result_file", cfg.result_file, "must be a file name such as result.json")
    _check_method(cfg)
    _check_evaluation(cfg.evaluation)
    _check_store(cfg.store)


def _check_dataset(cfg) -> None:
    dataset = cfg.dataset
    name = dataset.name
    if OmegaConf.is_missing(dataset, "path") or (name == "file" and dataset.path is None):
        raise ConfigError("dataset.path is not set: dataset=file needs "
                          "dataset.path=<file.npz|file.mat|file.csv>")
    path = dataset.path
    if path is not None and not isinstance(path, str):
        _fail("dataset.path", path, "must be a file path")
    if path is None:
        check_choice("dataset", name, [*BENCHMARKS, *EMBEDDED, *SHIFTED, "file"])
    label_column = dataset.get("label_column")
    check_int("dataset.label_column", label_column, allow_none=True)
    if label_column is not None and not (path or "").lower().endswith(".csv"):
        _fail("dataset.label_column", label_column, "applies to .csv files only "
              "(.npz/.mat files name their labels y, gnd, Y, labels, label or target)")
    options = {k: v for k, v in _plain(cfg, "dataset").items() if k not in _DATASET_KEYS}
    if options and (name not in GENERATORS or path is not None):
        raise ConfigError(f"dataset.{sorted(options)[0]}: only generated datasets "
                          f"({', '.join(GENERATORS)}) take generator options, this dataset "
                          f"is {name!r}")
    if name in GENERATORS and path is None:
        accepted = set(inspect.signature(GENERATORS[name]).parameters)
        unknown = sorted(set(options) - accepted)
        if unknown:
            raise ConfigError(f"dataset.{unknown[0]}: not an option of dataset={name}; "
                              f"its options are {', '.join(sorted(accepted))}")


def _check_method(cfg) -> None:
    method = _plain(cfg, "method")
    if not isinstance(method, Mapping) or "name" not in method:
        raise ConfigError("method: must be a config group entry with a name")
    name = method.pop("name")
    if name == "causefs":
        for group, resolve in (("schedule", _check_schedule), ("kernel", resolve_kernel),
                               ("qp", resolve_qp)):
            try:
                resolve(_plain(cfg, group))
            except (ValueError, TypeError, KeyError) as error:
                raise ConfigError(f"{group}: {error}") from None
        return
    check_choice("method", name, ["causefs", *available_selectors()])
    accepted = set(inspect.signature(type(make_selector(name))).parameters)
    unknown = sorted(set(method) - accepted)
    if unknown:
        raise ConfigError(f"method.{unknown[0]}: not an option of method={name}; its options "
                          f"are {', '.join(sorted(accepted)) or 'none'}")
    try:
        make_selector(name, **method)
    except (ValueError, TypeError) as error:
        raise ConfigError(f"method={name}: {error}") from None


def _check_schedule(spec) -> None:
    """Every block of the schedule is registered (their order is checked by the fit)."""
    schedule = resolve_schedule(spec)
    for entry in (*schedule.init, *schedule.loop):
        get_block(entry if isinstance(entry, str) else dict(entry).get("name"))


def _check_evaluation(evaluation) -> None:
    check_bool("evaluation.enabled", evaluation.enabled)
    check_bool("evaluation.all_features", evaluation.all_features)
    rhos = evaluation.rhos
    if (not OmegaConf.is_list(rhos) or len(rhos) == 0
            or not all(_is_int(rho) and rho >= 1 for rho in rhos)):
        _fail("evaluation.rhos", OmegaConf.to_container(rhos) if OmegaConf.is_list(rhos)
              else rhos, "must be a non-empty list of integers >= 1")
    if len(set(rhos)) < len(rhos):
        _fail("evaluation.rhos", OmegaConf.to_container(rhos), "lists a number twice")
    check_int("evaluation.n_runs", evaluation.n_runs, low=1)
    check_int("evaluation.seed", evaluation.seed, low=0)
    check_choice("evaluation.nmi_average", evaluation.nmi_average, NMI_AVERAGES)


def _check_store(store) -> None:
    check_bool("store.enabled", store.enabled)
    check_bool("store.overwrite", store.overwrite)
    if not isinstance(store.dir, str) or not store.dir.strip():
        _fail("store.dir", store.dir, "must be a directory path")
    if store.enabled:
        try:
            ResultStore(store.dir).check_writable()
        except StoreError as error:
            raise ConfigError(f"store.dir: {error}") from None


def check_against_data(cfg: DictConfig, n_samples: int, n_features: int) -> None:
    """The keys bounded by the data: ``n_features_to_select`` and ``evaluation.rhos``
    <= d, ``n_clusters`` <= n. Nothing is capped silently."""
    if cfg.n_features_to_select > n_features:
        _fail("n_features_to_select", cfg.n_features_to_select,
              f"exceeds the {n_features} features of the data")
    too_many = [rho for rho in cfg.evaluation.rhos if rho > n_features]
    if too_many and cfg.evaluation.enabled:
        _fail("evaluation.rhos", list(cfg.evaluation.rhos),
              f"{too_many[0]} exceeds the {n_features} features of the data")
    if cfg.n_clusters is not None and cfg.n_clusters > n_samples:
        _fail("n_clusters", cfg.n_clusters, f"exceeds the {n_samples} samples of the data")
    neighbors = cfg.method.get("n_neighbors")  # a baseline's kNN graph
    if cfg.method.name != "causefs" and neighbors is not None and neighbors >= n_samples:
        _fail("method.n_neighbors", neighbors, f"needs more than {neighbors} samples, the "
              f"data has {n_samples}")
