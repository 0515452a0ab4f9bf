"""Checks of a ``causefs`` command configuration, run before any data is loaded or fitted.

:func:`check_config` checks every key of the composed configuration (types, ranges,
allowed values, the method's options, a writable store) and :func:`check_against_data`
the keys bounded by the data's shape. Each failure is a :class:`ConfigError` whose
message names the key, the value given and what is allowed, so the command can print
it as one line. The rules are the library's own (:mod:`causefs.core.validation`, the
settings table, the parts' constructors); kept apart from :mod:`causefs.app.cli` so they
are testable without Hydra.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from ..core.schedule import ScheduleError
from ..core.validation import (
    BOOLEAN,
    NONE,
    SEED,
    InstanceOf,
    Interval,
    InvalidParameterError,
    check_annotated,
    check_choice,
    check_options,
    check_value,
)
from ..datasets import BENCHMARKS, EMBEDDED, GENERATORS
from ..model.nuisance_coding import NuisanceWarning, code_nuisance
from ..model.settings import check_setting
from ..selectors import available_selectors, make_selector
from .configs import PART_GROUPS, check_schedule_config
from .metrics import NMI_AVERAGES
from .store import ResultStore, StoreError

#: dataset keys every dataset has; the others are a generator's options
_DATASET_KEYS = ("name", "path", "label_column", "nuisance")


class ConfigError(InvalidParameterError):
    """A configuration value that is not allowed (the message names the key)."""


def _checked(check, *args):
    """``check(*args)``, its InvalidParameterError as a ConfigError."""
    try:
        return check(*args)
    except InvalidParameterError as error:
        raise ConfigError(str(error)) from None


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
    moved = [key for key in unknown if key in (cfg.get("method") or {})]
    if moved:
        verb = "is an option" if len(moved) == 1 else "are options"
        raise ConfigError(f"unknown key(s) {', '.join(unknown)}: {', '.join(moved)} {verb} "
                          f"of the method: {', '.join(f'method.{k}=' for k in moved)}...")
    if unknown:
        raise ConfigError(f"unknown key(s) {', '.join(unknown)}: see causefs --help")
    _check_dataset(cfg)
    _checked(check_value, "n_clusters", cfg.n_clusters, NONE, Interval(int, 2))
    _checked(check_value, "n_features_to_select", cfg.n_features_to_select, Interval(int, 1))
    _checked(check_setting, "preprocessing", cfg.preprocessing)
    _checked(check_value, "random_state", cfg.random_state, SEED)
    _checked(check_value, "dry_run", cfg.dry_run, BOOLEAN)
    _check_result_file(cfg.result_file)
    _checked(check_schedule_config, _plain(cfg, "schedule"))
    make_method(cfg)
    _check_evaluation(cfg.evaluation)
    _check_store(cfg.store)


def _check_result_file(value) -> None:
    """A file path: relative to the run directory, or absolute."""
    if not isinstance(value, str) or not value.strip() or value.endswith(("/", "\\")):
        raise ConfigError(f"result_file={value!r}: must be a file path, such as "
                          "result.json (inside the run directory) or /abs/path/run.json")


def _check_dataset(cfg) -> None:
    dataset = cfg.dataset
    name = dataset.name
    if OmegaConf.is_missing(dataset, "path") or (name == "file" and dataset.path is None):
        raise ConfigError("dataset.path is not set: dataset=file needs "
                          "dataset.path=<file.npz|file.mat|file.csv>")
    path = dataset.path
    if path is not None and not (isinstance(path, str) and path.strip()):
        raise ConfigError(f"dataset.path={path!r}: must be a file path")
    _checked(check_value, "data_dir", cfg.get("data_dir"), NONE,
             InstanceOf(str, "a directory path"))
    if path is None:
        _checked(check_choice, "dataset", name, [*BENCHMARKS, *EMBEDDED, *GENERATORS, "file"])
    label_column = dataset.get("label_column")
    _checked(check_value, "dataset.label_column", label_column, NONE, Interval(int),
             InstanceOf(str, "a header name"))
    _check_nuisance_key(dataset.get("nuisance"), path)
    if label_column is not None and not (path or "").lower().endswith(".csv"):
        raise ConfigError(f"dataset.label_column={label_column}: applies to .csv files only "
                          "(.npz/.mat files name their labels y, gnd, Y, labels, label or "
                          "target)")
    options = {k: v for k, v in _plain(cfg, "dataset").items() if k not in _DATASET_KEYS}
    if options and (name not in GENERATORS or path is not None):
        raise ConfigError(f"dataset.{sorted(options)[0]}: only generated datasets "
                          f"({', '.join(GENERATORS)}) take generator options, this dataset "
                          f"is {name!r}")
    if name in GENERATORS and path is None:
        _checked(check_options, "dataset", GENERATORS[name], options, name)
        _checked(check_annotated, "dataset", GENERATORS[name], options)


def _check_nuisance_key(nuisance, path) -> None:
    """``dataset.nuisance``: null, a name (an array of the dataset or file, a .csv
    header's column, or ``random``), or column numbers of a .csv file, or a list of
    .csv columns (numbers or header names, as :func:`~causefs.datasets.load_file`
    takes them)."""
    if OmegaConf.is_list(nuisance):
        nuisance = OmegaConf.to_container(nuisance)
    if nuisance is None or isinstance(nuisance, str) and nuisance.strip():
        return
    columns = nuisance if isinstance(nuisance, list) else [nuisance]
    if columns and all(Interval(int).is_satisfied_by(c) or isinstance(c, str) and c.strip()
                       for c in columns):
        if (path or "").lower().endswith(".csv"):
            return
        raise ConfigError(f"dataset.nuisance={nuisance}: column numbers and lists apply to "
                          ".csv files only; name the array (an .npz/.mat key, environment, "
                          "random)")
    raise ConfigError(f"dataset.nuisance={nuisance!r}: must be null, the name of the array "
                      "holding the nuisance variables (a .npz/.mat key, environment, random) "
                      "or .csv columns (numbers or header names, or a list of them)")


def check_nuisance_against_data(data) -> None:
    """The dataset's nuisance variables coded as the fit codes them
    (:func:`~causefs.model.nuisance_coding.code_nuisance`): a Z no fit can use (no
    column varies, too many levels for the samples, a dtype that is neither labels nor
    numbers, a 3-D array) is refused under ``dataset.nuisance``, naming the data, before
    the fit, not by a traceback from inside it. Its warnings are the fit's to give."""
    if data.nuisance is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NuisanceWarning)
        try:
            code_nuisance(data.nuisance, data.X.shape[0], without="set dataset.nuisance=null")
        except ValueError as error:
            raise ConfigError(f"dataset.nuisance ({data.source}): {error}") from None


_PART_OPTION = re.compile(rf"^method\.(?=({'|'.join(PART_GROUPS)})[.=:])")


def _method_key(message: str) -> str:
    """A method option that comes from a part group (``method.kernel`` is ``${kernel}``)
    is reported under the group's own key, the one the user typed."""
    return _PART_OPTION.sub("", message)


def make_method(cfg: DictConfig):
    """The configured method (a :class:`~causefs.selectors.Selector`), its options checked."""
    options = _plain(cfg, "method")
    if not isinstance(options, Mapping) or "name" not in options:
        raise ConfigError("method: must be a config group entry with a name")
    name = options.pop("name")
    _checked(check_choice, "method", name, available_selectors())
    try:
        return make_selector(name, **options)
    except ScheduleError as error:  # of the schedule as a whole: told under its key
        message = str(error)
        message = (f"schedule: {message.removeprefix('method: ')}"
                   if message.startswith("method: ") else _method_key(message))
        raise ConfigError(message + _schedule_hint(cfg)) from None
    except InvalidParameterError as error:
        raise ConfigError(_method_key(str(error))) from None


def _check_evaluation(evaluation) -> None:
    _checked(check_value, "evaluation.enabled", evaluation.enabled, BOOLEAN)
    _checked(check_value, "evaluation.all_features", evaluation.all_features, BOOLEAN)
    rhos = evaluation.rhos
    plain = OmegaConf.to_container(rhos, resolve=True) if OmegaConf.is_list(rhos) else rhos
    if not isinstance(plain, list) or not plain or not all(
            Interval(int, 1).is_satisfied_by(rho) for rho in plain):
        raise ConfigError(f"evaluation.rhos={plain!r}: must be a non-empty list of "
                          "integers >= 1")
    if len(set(plain)) < len(plain):
        raise ConfigError(f"evaluation.rhos={plain!r}: lists a number twice")
    _checked(check_value, "evaluation.n_runs", evaluation.n_runs, Interval(int, 1))
    _checked(check_value, "evaluation.seed", evaluation.seed, Interval(int, 0))
    _checked(check_choice, "evaluation.nmi_average", evaluation.nmi_average, NMI_AVERAGES)


def _check_store(store) -> None:
    _checked(check_value, "store.enabled", store.enabled, BOOLEAN)
    _checked(check_value, "store.overwrite", store.overwrite, BOOLEAN)
    if not isinstance(store.dir, str) or not store.dir.strip():
        raise ConfigError(f"store.dir={store.dir!r}: must be a directory path")
    if store.enabled and not Path(store.dir).expanduser().is_dir():
        check_store_writable(store.dir)  # a store to be made: it must be makeable


def check_store_writable(directory) -> None:
    """``store.dir`` can take a new result, or :class:`ConfigError` naming the key. An
    existing store is checked only when a job is not in it (:func:`causefs.app.cli.run`):
    a read-only store still gives the results it holds."""
    try:
        ResultStore(directory).check_writable()
    except StoreError as error:
        raise ConfigError(f"store.dir: {error}") from None


def check_against_data(cfg: DictConfig, method, n_samples: int, n_features: int,
                       n_clusters: int) -> None:
    """The keys bounded by the data: ``n_features_to_select`` and ``evaluation.rhos``
    <= d, ``n_clusters`` <= n, and what the method needs of the data's size. Nothing is
    capped silently."""
    if cfg.n_features_to_select > n_features:
        raise ConfigError(f"n_features_to_select={cfg.n_features_to_select}: exceeds the "
                          f"{n_features} features of the data")
    too_many = [rho for rho in cfg.evaluation.rhos if rho > n_features]
    if too_many and cfg.evaluation.enabled:
        raise ConfigError(f"evaluation.rhos={list(cfg.evaluation.rhos)}: {too_many[0]} "
                          f"exceeds the {n_features} features of the data")
    if n_clusters > n_samples:
        raise ConfigError(f"n_clusters={n_clusters}: exceeds the {n_samples} samples of the "
                          "data")
    try:
        method.check_data(n_samples, n_features, n_clusters)
    except InvalidParameterError as error:
        raise ConfigError(_method_key(f"method.{error}")) from None


def _schedule_hint(cfg: DictConfig) -> str:
    """Where a schedule without a loop comes from: renaming the default, ``auto``, which
    is chosen at fit time and has no loop of its own."""
    schedule = cfg.get("schedule") or {}
    if "loop" in schedule:
        return ""
    return ("; the default schedule ('auto') is chosen at fit time and has no loop to "
            "change: start from one that has, e.g. schedule=full schedule.name="
            f"{schedule.get('name', 'mine')}")
