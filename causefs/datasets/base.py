"""What a dataset is: data, labels, where they came from, and ground truth where known."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np


class DatasetError(ValueError):
    """A dataset that cannot be found or does not match what it should contain."""


class DatasetWarning(UserWarning):
    """A dataset that loads, but perhaps not as meant (a label column read as a feature)."""


@dataclass
class Dataset:
    """Data ``X`` (n_samples, n_features), labels ``y`` (or None) and where they came from.

    ``nuisance`` holds known nuisance variables Z (n_samples,) or (n_samples, p) when
    they were asked for (:func:`causefs.datasets.load_dataset`'s ``nuisance``), as given
    (labels or covariates; :mod:`causefs.model.nuisance_coding` codes them).
    ``feature_names`` (n_features,) names the columns of ``X`` where the source does (a
    CSV header, an ``.npz``'s ``feature_names`` array), else None.
    """

    name: str
    X: np.ndarray
    y: np.ndarray | None
    source: str
    image_shape: tuple | None = None
    nuisance: np.ndarray | None = None
    feature_names: tuple | None = None

    @property
    def n_classes(self) -> int | None:
        return None if self.y is None else int(np.unique(self.y).size)

    def sha256(self) -> str:
        """Hash of the content (shapes, ``X`` as float64, ``y``, and the nuisance
        variables when given): the data's identity in the results store, whatever file
        or path it came from."""
        digest = hashlib.sha256()
        X = np.ascontiguousarray(self.X, dtype=np.float64)
        digest.update(repr(X.shape).encode())
        digest.update(X.tobytes())
        if self.y is not None:
            y = np.ascontiguousarray(self.y)
            digest.update(repr((y.dtype.str, y.shape)).encode())
            digest.update(y.tobytes() if y.dtype != object else repr(y.tolist()).encode())
        if self.nuisance is not None:  # absent: the hash of the data without Z, as before
            Z = np.asarray(self.nuisance)
            digest.update(repr(("nuisance", Z.dtype.str, Z.shape)).encode())
            digest.update(repr(Z.tolist()).encode() if Z.dtype == object else
                          np.ascontiguousarray(Z).tobytes())
        if self.feature_names is not None:  # they reach the result: a renamed column is a
            # new job, not a stored result under the old names
            digest.update(repr(("feature_names", list(self.feature_names))).encode())
        return digest.hexdigest()


@dataclass
class CausalDataset(Dataset):
    """A synthetic dataset with its ground truth (see :func:`make_causal`)."""

    causal: np.ndarray | None = None
    spurious: np.ndarray | None = None
    environment: np.ndarray | None = None
