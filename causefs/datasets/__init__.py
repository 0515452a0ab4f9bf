"""Datasets: the paper's benchmarks by name (:func:`fetch` downloads them), any file,
scikit-learn's digits, generators.

:func:`load_dataset` loads any of them by name; :data:`GENERATORS` is the one table of
the datasets a function makes (their keyword arguments are the dataset's options on the
command line, ``dataset.seed=3``).
"""

from __future__ import annotations

import inspect

import numpy as np

from .base import CausalDataset, Dataset, DatasetError, DatasetWarning
from .benchmarks import (
    BENCHMARKS,
    ENV_VAR,
    Benchmark,
    Source,
    data_home,
    default_data_home,
    load_benchmark,
)
from .fetch import fetch
from .files import load_file
from .shifted import (
    ShiftedDataset,
    biased_groups,
    make_digits_border,
    make_injected_shift,
    make_pose_shift,
    make_shifted_clusters,
    pose_bins,
)
from .synthetic import make_causal

#: datasets made by a generator, by name: its keyword arguments are the dataset's options
GENERATORS = {"synthetic": make_causal, "shifted_clusters": make_shifted_clusters,
              "digits_border": make_digits_border, "injected_shift": make_injected_shift,
              "pose_shift": make_pose_shift}

#: ``nuisance=RANDOM_NUISANCE``: labels drawn independently of everything (3 levels,
#: seed 0), to measure what adjusting for an irrelevant Z costs
RANDOM_NUISANCE = "random"

#: datasets that ship with the installed packages (no data directory needed)
EMBEDDED = ("digits",)

__all__ = ["BENCHMARKS", "Benchmark", "CausalDataset", "Dataset", "DatasetError",
           "DatasetWarning", "EMBEDDED", "ENV_VAR", "GENERATORS", "RANDOM_NUISANCE",
           "ShiftedDataset", "Source", "biased_groups", "data_home", "default_data_home",
           "fetch", "load_benchmark", "load_dataset", "load_digits", "load_file",
           "make_causal", "make_digits_border", "make_injected_shift",
           "make_pose_shift", "make_shifted_clusters", "pose_bins"]


def load_digits() -> Dataset:
    """scikit-learn's digits (1797 images of 8 x 8 pixels, 10 classes)."""
    from sklearn.datasets import load_digits as sklearn_digits

    X, y = sklearn_digits(return_X_y=True)
    return Dataset(name="digits", X=X, y=y, source="sklearn.datasets.load_digits",
                   image_shape=(8, 8))


def load_dataset(name: str, path: str | None = None, data_home_path=None,
                 label_column: int | str | None = None, nuisance=None,
                 **options) -> Dataset:
    """Load by name (``digits``, a generator of :data:`GENERATORS` with its ``options``,
    or a benchmark of :data:`BENCHMARKS`) or from ``path`` (any supported file).

    ``nuisance`` names the known nuisance variables Z to load with the data
    (:attr:`Dataset.nuisance`): the key of an ``.npz``/``.mat`` array or a ``.csv``
    column (:func:`load_file`), a generated dataset's array (``"environment"``), or
    :data:`RANDOM_NUISANCE` for labels independent of everything. None loads none.
    """
    if nuisance == RANDOM_NUISANCE:
        data = load_dataset(name, path, data_home_path, label_column, **options)
        data.nuisance = np.random.default_rng(0).integers(0, 3, data.X.shape[0])
        return data
    if path is not None:
        return load_file(path, label_column, nuisance)
    if name == "file":
        raise DatasetError("dataset 'file' needs a path: load_dataset('file', path=...)")
    if name in GENERATORS:
        generator = GENERATORS[name]
        if "data_home" in inspect.signature(generator).parameters:
            options.setdefault("data_home", data_home_path)
        data = generator(**options)
    elif name == "digits":
        data = load_digits()
    else:
        data = load_benchmark(name, data_home_path)
    return _with_nuisance(data, nuisance)


def _with_nuisance(data: Dataset, nuisance) -> Dataset:
    """``data`` with its array named ``nuisance`` as Z (none for None)."""
    if nuisance is None:
        return data
    Z = getattr(data, nuisance, None) if isinstance(nuisance, str) else None
    if not isinstance(Z, np.ndarray) or Z.shape[:1] != data.X.shape[:1]:
        arrays = sorted(k for k, v in vars(data).items() if isinstance(v, np.ndarray)
                        and v.shape[:1] == data.X.shape[:1] and k not in ("X", "y"))
        raise DatasetError(f"nuisance={nuisance!r}: dataset {data.name!r} has no such array "
                           f"of one row per sample; it has {arrays or 'none'}, or use "
                           f"{RANDOM_NUISANCE!r}")
    data.nuisance = Z
    return data
