"""Datasets: the paper's benchmarks by name, any .npz/.mat/.csv file, scikit-learn's digits.

The benchmark files are not shipped: they are read from a data directory given by the
``data_home`` argument or the ``CAUSEFS_DATA`` environment variable, and verified
(shape, number of classes, sha256) against the table below, taken from the data
directory's ``MANIFEST.md``.
"""

from __future__ import annotations

import csv
import hashlib
import numbers
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ENV_VAR = "CAUSEFS_DATA"


@dataclass(frozen=True)
class Benchmark:
    """A benchmark file and what it must contain."""

    file: str
    n_samples: int
    n_features: int
    n_classes: int
    sha256: str
    image_shape: tuple | None = None


#: the paper's datasets available as .npz (MANIFEST.md of the shared data directory)
BENCHMARKS = {
    "jaffe": Benchmark("JAFFE.npz", 213, 676, 10,
                       "39ad05b9a69242f675c778d4c1fc1210e7469daf4aedb879923589ef9c6ceb86", (26, 26)),
    "umist": Benchmark("UMIST.npz", 575, 644, 20,
                       "db425cb00ec78461d28c9945a8205ee771bef496733466ed31757568ddce877a", (28, 23)),
    "coil20": Benchmark("COIL20.npz", 1440, 1024, 20,
                        "7badb296a2780c777fdfca7f8452386ec5062550c88daeb13ae34bf2266f6c95", (32, 32)),
    "usps": Benchmark("USPS.npz", 9298, 256, 10,
                      "b3579398de30b981986c6334789365904b9666650fa52738d57b9a16910fdd10", (16, 16)),
}

#: names that need no data directory
EMBEDDED = ("digits", "synthetic")

_FEATURE_KEYS = ("X", "fea", "data", "features")
_LABEL_KEYS = ("y", "gnd", "Y", "labels", "label", "target")


_NOT_FINITE = "missing and infinite values are not supported: drop or impute them first"


class DatasetError(ValueError):
    """A dataset that cannot be found or does not match what it should contain."""


@dataclass
class Dataset:
    """Data ``X`` (n_samples, n_features), labels ``y`` (or None) and where they came from."""

    name: str
    X: np.ndarray
    y: np.ndarray | None
    source: str
    image_shape: tuple | None = None

    @property
    def n_classes(self) -> int | None:
        return None if self.y is None else int(np.unique(self.y).size)

    def sha256(self) -> str:
        """Hash of the content (shapes, ``X`` as float64, ``y``): the data's identity in
        the results store, whatever file or path it came from."""
        digest = hashlib.sha256()
        X = np.ascontiguousarray(self.X, dtype=np.float64)
        digest.update(repr(X.shape).encode())
        digest.update(X.tobytes())
        if self.y is not None:
            y = np.ascontiguousarray(self.y)
            digest.update(repr((y.dtype.str, y.shape)).encode())
            digest.update(y.tobytes() if y.dtype != object else repr(y.tolist()).encode())
        return digest.hexdigest()


def data_home(path: str | os.PathLike | None = None) -> Path:
    """The data directory: ``path``, else ``$CAUSEFS_DATA``."""
    if path is None:
        path = os.environ.get(ENV_VAR)
    if not path:
        raise DatasetError(
            f"no data directory: set the environment variable {ENV_VAR} to the directory "
            "holding the benchmark .npz files, or pass it as data_home= in Python or "
            "data_dir= on the causefs command line"
        )
    return Path(path).expanduser()


def sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _pick(mapping, keys, what, source):
    for key in keys:
        if key in mapping:
            return key
    raise DatasetError(f"{source} has no {what} array; looked for keys {list(keys)}, "
                       f"found {sorted(k for k in mapping if not k.startswith('__'))}")


def _as_labels(y) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim == 2:  # one-hot
        y = y.argmax(axis=1)
    return y.ravel()


def _as_features(X, source, key) -> np.ndarray:
    """``X`` as a 2-D float array, or a :class:`DatasetError` naming the key."""
    X = np.asarray(X)
    if X.ndim != 2:
        raise DatasetError(f"{source}: features {key!r} must be a 2-D array, got shape "
                           f"{X.shape}")
    if X.dtype.kind not in "biuf":
        raise DatasetError(f"{source}: features {key!r} hold {X.dtype} values, not numbers")
    return X.astype(float, copy=False)


def _check_values(X, y, source, key) -> None:
    """No NaN or infinity in ``X`` or ``y``: a :class:`DatasetError` names the first."""
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        row, column = bad[0]
        raise DatasetError(f"{source}: {key}, sample {row + 1}, feature {column + 1} "
                           f"(1-based) is {X[row, column]} ({_NOT_FINITE})")
    if y is not None and y.dtype.kind == "f" and not np.isfinite(y).all():
        row = int(np.flatnonzero(~np.isfinite(y))[0])
        raise DatasetError(f"{source}: the label of sample {row + 1} is {y[row]}")


def _orient(X, y, source):
    """MATLAB files often store X as (d, n): transpose when the labels say so."""
    if y is not None and X.shape[0] != y.shape[0] and X.shape[1] == y.shape[0]:
        X = X.T
    if y is not None and X.shape[0] != y.shape[0]:
        raise DatasetError(f"{source}: {X.shape[0]} samples but {y.shape[0]} labels")
    if X.shape[0] < 2 or X.shape[1] < 1:
        raise DatasetError(f"{source}: {X.shape[0]} samples x {X.shape[1]} features; a "
                           "dataset needs at least 2 samples (rows) and 1 feature")
    return X, y


def _load_npz(path: Path) -> dict:
    # an .npz is a zip archive; anything else would reach numpy's pickle loader, whose
    # error suggests loading the file unsafely
    if not zipfile.is_zipfile(path):
        raise DatasetError(f"{path} is not an .npz file (not a zip archive)")
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {key: archive[key] for key in archive.files}
    except ValueError as error:
        if "pickle" in str(error):
            raise DatasetError(f"{path} holds object (pickled) arrays, which are never "
                               "loaded: store numeric arrays only") from None
        raise DatasetError(f"{path} is not a readable .npz file: {error}") from None
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise DatasetError(f"{path} is truncated or corrupt: {error}") from None


def _load_mat(path: Path):
    import h5py
    import scipy.io

    try:
        if h5py.is_hdf5(path):  # MATLAB v7.3 files are HDF5 (behind a 512-byte header)
            with h5py.File(path, "r") as handle:
                # MATLAB stores arrays column-major: h5py sees them transposed
                return {key: np.asarray(handle[key]).T for key in handle.keys()
                        if isinstance(handle[key], h5py.Dataset)}
        return scipy.io.loadmat(path)
    except (ValueError, TypeError, OSError, EOFError, NotImplementedError,
            scipy.io.matlab.MatReadError) as error:
        raise DatasetError(f"{path} is not a readable .mat file: {error}") from None


def _read_csv(path: Path) -> np.ndarray:
    """Numbers of a comma-separated file (one header line of names allowed), (rows, columns).

    A cell that is not a number, a row of another width, or an empty file raises a
    :class:`DatasetError` naming the line and column.
    """
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:  # -sig: drop a BOM
            rows = [(number, row) for number, row in enumerate(csv.reader(handle), start=1)
                    if any(cell.strip() for cell in row)]
    except UnicodeDecodeError as error:
        raise DatasetError(f"{path} is not a text (CSV) file: {error}") from None
    if rows and not any(_numeric([cell]) for cell in rows[0][1]):
        rows = rows[1:]  # a header line: no cell is a number (a typo in data is an error)
    if not rows:
        raise DatasetError(f"{path} holds no data rows")
    width = len(rows[0][1])
    table = np.empty((len(rows), width))
    for i, (line, row) in enumerate(rows):
        if len(row) != width:
            raise DatasetError(f"{path}, line {line}: {len(row)} columns, the first data "
                               f"row has {width}")
        for column, cell in enumerate(row):
            try:
                table[i, column] = float(cell)
            except ValueError:
                raise DatasetError(f"{path}, line {line}, column {column + 1}: {cell!r} is "
                                   "not a number") from None
            if not np.isfinite(table[i, column]):
                raise DatasetError(f"{path}, line {line}, column {column + 1}: {cell!r} "
                                   f"({_NOT_FINITE})")
    return table


def _numeric(row) -> bool:
    try:
        [float(cell) for cell in row]
        return True
    except ValueError:
        return False


def load_file(path: str | os.PathLike, label_column: int | None = None) -> Dataset:
    """Load a ``.npz``, ``.mat`` (v5 or v7.3) or ``.csv`` file.

    ``.npz`` and ``.mat`` files hold the features under one of ``X``, ``fea``,
    ``data``, ``features`` and optionally the labels under ``y``, ``gnd``, ``Y``,
    ``labels``, ``label``, ``target``. A ``.csv`` file is numbers only (a header line is
    skipped); ``label_column`` names the column holding labels (e.g. -1), if any.
    Pickled content is never loaded.

    Raises
    ------
    DatasetError
        Any file that cannot be read as a dataset; the message names the file, and the
        line (row) and column where that applies.
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise DatasetError(f"no file at {path}")
    if path.is_dir():
        raise DatasetError(f"{path} is a directory, not a data file")
    suffix = path.suffix.lower()
    source = str(path)
    if suffix not in (".npz", ".mat", ".csv"):
        raise DatasetError(f"unsupported file type {suffix!r} ({path}); use .npz, .mat or .csv")
    if label_column is not None and (not isinstance(label_column, numbers.Integral)
                                     or isinstance(label_column, bool)):
        raise DatasetError(f"label_column must be a column number such as -1, got "
                           f"{label_column!r} ({path})")
    if label_column is not None and suffix != ".csv":
        raise DatasetError(f"label_column applies to .csv files only ({path}); .npz/.mat "
                           f"files name their labels {', '.join(_LABEL_KEYS)}")
    if suffix == ".csv":
        table = _read_csv(path)
        y = None
        if label_column is not None:
            if not -table.shape[1] <= label_column < table.shape[1]:
                raise DatasetError(f"{path}: label_column={label_column} is out of range "
                                   f"for its {table.shape[1]} columns")
            y = table[:, label_column]
            table = np.delete(table, label_column, axis=1)
        X, y = _orient(table, y, source)
    else:
        contents = _load_npz(path) if suffix == ".npz" else _load_mat(path)
        key = _pick(contents, _FEATURE_KEYS, "feature", source)
        X = _as_features(contents[key], source, key)
        label_keys = [k for k in _LABEL_KEYS if k in contents]
        y = _as_labels(contents[label_keys[0]]) if label_keys else None
        X, y = _orient(X, y, source)
        _check_values(X, y, source, key)
    return Dataset(name=path.stem, X=X, y=y, source=source)


def load_benchmark(name: str, data_home_path=None, verify: bool = True) -> Dataset:
    """Load a benchmark of :data:`BENCHMARKS` by (case-insensitive) name.

    Raises
    ------
    DatasetError
        Unknown name, missing file (the message says where to put it), or a file whose
        checksum, shape or number of classes differs from the expected ones.
    """
    key = name.lower()
    if key not in BENCHMARKS:
        raise DatasetError(f"unknown benchmark {name!r}; available: {', '.join(BENCHMARKS)}")
    spec = BENCHMARKS[key]
    folder = data_home(data_home_path)
    path = folder / spec.file
    if not path.exists():
        raise DatasetError(f"benchmark {key!r} not found: put {spec.file} in {folder} "
                           f"(the data directory: data_home= in Python, data_dir= on the "
                           f"causefs command line, or ${ENV_VAR})")
    if verify:
        digest = sha256(path)
        if digest != spec.sha256:
            raise DatasetError(f"{path} has sha256 {digest}, expected {spec.sha256}: "
                               "the file is corrupt or a different version")
    data = load_file(path)
    if data.X.shape != (spec.n_samples, spec.n_features):
        raise DatasetError(f"{path} holds X of shape {data.X.shape}, expected "
                           f"{(spec.n_samples, spec.n_features)}")
    if data.n_classes != spec.n_classes:
        raise DatasetError(f"{path} has {data.n_classes} classes, expected {spec.n_classes}")
    return Dataset(name=key, X=data.X, y=data.y, source=str(path), image_shape=spec.image_shape)


def load_dataset(name: str, path: str | None = None, data_home_path=None,
                 label_column: int | None = None, **synthetic) -> Dataset:
    """Load by name (``digits``, ``synthetic`` or a benchmark) or from ``path`` (any
    supported file). ``synthetic`` keywords go to :func:`make_causal` (or to the
    generator of a shifted benchmark, :data:`causefs.shifted.SHIFTED`)."""
    if path is not None:
        return load_file(path, label_column)
    if name == "file":
        raise DatasetError("dataset 'file' needs a path: load_dataset('file', path=...)")
    if name == "synthetic":
        return make_causal(**synthetic)
    from .shifted import SHIFTED

    if name in SHIFTED:
        return SHIFTED[name](**synthetic)
    if name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return Dataset(name="digits", X=X, y=y, source="sklearn.datasets.load_digits",
                       image_shape=(8, 8))
    return load_benchmark(name, data_home_path)


@dataclass
class CausalDataset(Dataset):
    """A synthetic dataset with its ground truth (see :func:`make_causal`)."""

    causal: np.ndarray | None = None
    spurious: np.ndarray | None = None
    environment: np.ndarray | None = None


def make_causal(n_samples: int = 1000, n_features: int = 100, *, n_clusters: int = 4,
                n_causal: int = 10, n_spurious: int = 10, confounding: float = 0.8,
                separation: float = 2.0, seed: int = 0) -> CausalDataset:
    """Clustered data whose cluster membership is caused by a few features only.

    The generative model follows the paper's example (location -> animal and location
    -> background colour):

    * an environment ``E`` in ``0..n_clusters-1`` is drawn uniformly;
    * the cluster ``C`` equals ``E`` with probability ``confounding``, and is uniform
      otherwise (E confounds C);
    * ``n_causal`` causal features are caused by C: a cluster-specific mean (each
      cluster differs from the others by ``separation`` on its own causal features)
      plus unit Gaussian noise;
    * ``n_spurious`` spurious features are caused by E only ("background colour"): an
      environment-specific mean of the same size plus noise. They correlate with the
      clusters through E, never directly;
    * the remaining features are unit Gaussian noise.

    Feature columns are shuffled (with ``seed``); ``causal`` and ``spurious`` give their
    positions. ``y`` is C.

    This benchmark cannot tell a causal selector from any other, and is kept only as a
    check of the symmetric case: the joint law of (C, E), ``P(C=a, E=b) = confounding
    * [a = b] / k + (1 - confounding) / k^2``, is symmetric, both blocks use the same
    signature law and (with ``n_causal == n_spurious``) the same width, so exchanging
    the causal and the spurious block leaves the distribution of X unchanged; there is
    no test environment either. Use :func:`causefs.shifted.make_shifted_clusters` and
    :func:`causefs.shifted.make_digits_border` for benchmarks with a shift.
    """
    for name, value, low in (("n_samples", n_samples, 2), ("n_features", n_features, 1),
                             ("n_clusters", n_clusters, 1), ("n_causal", n_causal, 0),
                             ("n_spurious", n_spurious, 0), ("seed", seed, 0)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
            raise DatasetError(f"synthetic data: {name} must be an integer >= {low}, "
                               f"got {value!r}")
    if n_causal + n_spurious > n_features:
        raise DatasetError(f"synthetic data: n_causal + n_spurious = "
                           f"{n_causal + n_spurious} exceeds n_features = {n_features}")
    for name, value in (("confounding", confounding), ("separation", separation)):
        if not isinstance(value, numbers.Real) or isinstance(value, bool) \
                or not np.isfinite(value):
            raise DatasetError(f"synthetic data: {name} must be a finite number, "
                               f"got {value!r}")
    if not 0 <= confounding <= 1:
        raise DatasetError(f"synthetic data: confounding must lie in [0, 1], got "
                           f"{confounding}")
    rng = np.random.default_rng(seed)
    environment = rng.integers(0, n_clusters, n_samples)
    clusters = np.where(rng.random(n_samples) < confounding, environment,
                        rng.integers(0, n_clusters, n_samples))

    def signature(width):
        # +-separation/2 per group and feature; every feature separates some groups
        pattern = rng.choice([-1.0, 1.0], size=(n_clusters, width))
        constant = np.all(pattern == pattern[:1], axis=0)
        pattern[0, constant] *= -1.0
        return pattern * separation / 2

    X = rng.standard_normal((n_samples, n_features))
    X[:, :n_causal] += signature(n_causal)[clusters]
    X[:, n_causal:n_causal + n_spurious] += signature(n_spurious)[environment]
    order = rng.permutation(n_features)
    X = X[:, order]
    position = np.argsort(order)  # where original column j went
    return CausalDataset(
        name=f"causal_{n_samples}x{n_features}", X=X, y=clusters,
        source=f"causefs.datasets.make_causal(seed={seed})",
        causal=np.sort(position[:n_causal]),
        spurious=np.sort(position[n_causal:n_causal + n_spurious]),
        environment=environment,
    )


def __getattr__(name):
    # the shifted benchmarks, re-exported lazily: causefs.shifted imports this module
    from . import shifted

    if name in shifted.__all__:
        return getattr(shifted, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
