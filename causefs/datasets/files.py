"""Any ``.npz``, ``.mat`` (v5 or v7.3) or ``.csv`` file as a dataset; pickles are never loaded."""

from __future__ import annotations

import csv
import numbers
import os
import zipfile
from pathlib import Path

import numpy as np

from .base import Dataset, DatasetError

_FEATURE_KEYS = ("X", "fea", "data", "features")
_LABEL_KEYS = ("y", "gnd", "Y", "labels", "label", "target")


_NOT_FINITE = "missing and infinite values are not supported: drop or impute them first"


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


def _csv_columns(table, label_column, nuisance, path):
    """Split a CSV table into features, labels (``label_column``) and nuisance variables
    (``nuisance``: a column number or a list of them)."""
    width = table.shape[1]
    several = isinstance(nuisance, (list, tuple))
    wanted = {"label_column": [] if label_column is None else [label_column],
              "nuisance": [] if nuisance is None else list(nuisance) if several else [nuisance]}
    for key, columns in wanted.items():
        for column in columns:
            if not isinstance(column, numbers.Integral) or isinstance(column, bool):
                raise DatasetError(f"{key} must be a column number such as -1 for a .csv "
                                   f"file, got {column!r} ({path})")
            if not -width <= column < width:
                raise DatasetError(f"{path}: {key}={column} is out of range for its "
                                   f"{width} columns")
    label = [c % width for c in wanted["label_column"]]
    side = [c % width for c in wanted["nuisance"]]
    if set(label) & set(side):
        raise DatasetError(f"{path}: column {label[0]} cannot hold both the labels and a "
                           "nuisance variable")
    y = table[:, label[0]] if label else None
    Z = None if not side else table[:, side] if several else table[:, side[0]]
    return np.delete(table, label + side, axis=1), y, None if Z is None else _labels_where_whole(Z)


def _labels_where_whole(Z: np.ndarray) -> np.ndarray:
    """CSV and MATLAB files store labels as floats: whole-number Z become integer labels
    (categorical, :mod:`causefs.model.nuisance`); with several columns, all or none."""
    if Z.dtype.kind == "f" and np.all(np.isfinite(Z)) and np.all(Z == np.round(Z)):
        return Z.astype(np.int64)
    return Z


def _archive_nuisance(contents, key, source):
    """The array stored under ``key`` in an .npz/.mat file, as Z."""
    if not isinstance(key, str):
        raise DatasetError(f"nuisance must name the array of {source} that holds Z, got "
                           f"{key!r}")
    if key not in contents:
        raise DatasetError(f"{source} has no array {key!r} for the nuisance variables; "
                           f"found {sorted(k for k in contents if not k.startswith('__'))}")
    Z = np.asarray(contents[key])
    return Z.ravel() if Z.ndim == 2 and 1 in Z.shape else Z


def load_file(path: str | os.PathLike, label_column: int | None = None,
              nuisance=None) -> Dataset:
    """Load a ``.npz``, ``.mat`` (v5 or v7.3) or ``.csv`` file.

    ``.npz`` and ``.mat`` files hold the features under one of ``X``, ``fea``,
    ``data``, ``features`` and optionally the labels under ``y``, ``gnd``, ``Y``,
    ``labels``, ``label``, ``target``. A ``.csv`` file is numbers only (a header line is
    skipped); ``label_column`` names the column holding labels (e.g. -1), if any.
    ``nuisance`` names where known nuisance variables Z are: the key of their array in
    an ``.npz``/``.mat`` file, a column number (or a list of them) of a ``.csv`` file,
    which then leaves the features (:attr:`Dataset.nuisance`). CSV and MATLAB files
    have no integer type: whole-number nuisance values are read as labels. Pickled
    content is never loaded.

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
        X, y, Z = _csv_columns(_read_csv(path), label_column, nuisance, path)
        X, y = _orient(X, y, source)
    else:
        contents = _load_npz(path) if suffix == ".npz" else _load_mat(path)
        key = _pick(contents, _FEATURE_KEYS, "feature", source)
        X = _as_features(contents[key], source, key)
        label_keys = [k for k in _LABEL_KEYS if k in contents]
        y = _as_labels(contents[label_keys[0]]) if label_keys else None
        X, y = _orient(X, y, source)
        _check_values(X, y, source, key)
        Z = None if nuisance is None else _archive_nuisance(contents, nuisance, source)
        if Z is not None and suffix == ".mat":
            Z = _labels_where_whole(Z)
    if Z is not None and Z.shape[0] != X.shape[0]:
        raise DatasetError(f"{source}: {X.shape[0]} samples but the nuisance variables "
                           f"have {Z.shape[0]} rows")
    return Dataset(name=path.stem, X=X, y=y, source=source, nuisance=Z)
