"""Datasets: the paper's benchmarks by name (:func:`fetch` downloads them), any file,
scikit-learn's digits, generators.

:func:`load_dataset` loads any of them by name; :data:`GENERATORS` is the one table of
the datasets a function makes (their keyword arguments are the dataset's options on the
command line, ``dataset.seed=3``).
"""

from __future__ import annotations

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
    make_shifted_clusters,
)
from .synthetic import make_causal

#: datasets made by a generator, by name: its keyword arguments are the dataset's options
GENERATORS = {"synthetic": make_causal, "shifted_clusters": make_shifted_clusters,
              "digits_border": make_digits_border}

#: datasets that ship with the installed packages (no data directory needed)
EMBEDDED = ("digits",)

__all__ = ["BENCHMARKS", "Benchmark", "CausalDataset", "Dataset", "DatasetError",
           "DatasetWarning", "EMBEDDED", "ENV_VAR", "GENERATORS", "ShiftedDataset", "Source",
           "biased_groups", "data_home", "default_data_home", "fetch", "load_benchmark",
           "load_dataset", "load_digits", "load_file", "make_causal", "make_digits_border",
           "make_shifted_clusters"]


def load_digits() -> Dataset:
    """scikit-learn's digits (1797 images of 8 x 8 pixels, 10 classes)."""
    from sklearn.datasets import load_digits as sklearn_digits

    X, y = sklearn_digits(return_X_y=True)
    return Dataset(name="digits", X=X, y=y, source="sklearn.datasets.load_digits",
                   image_shape=(8, 8))


def load_dataset(name: str, path: str | None = None, data_home_path=None,
                 label_column: int | str | None = None, **options) -> Dataset:
    """Load by name (``digits``, a generator of :data:`GENERATORS` with its ``options``,
    or a benchmark of :data:`BENCHMARKS`) or from ``path`` (any supported file)."""
    if path is not None:
        return load_file(path, label_column)
    if name == "file":
        raise DatasetError("dataset 'file' needs a path: load_dataset('file', path=...)")
    if name in GENERATORS:
        return GENERATORS[name](**options)
    if name == "digits":
        return load_digits()
    return load_benchmark(name, data_home_path)
