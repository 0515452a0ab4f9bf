"""Any ``.npz``, ``.mat`` (v5 or v7.3) or ``.csv`` file as a dataset; pickles are never loaded."""

from __future__ import annotations

import csv
import math
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
    """The feature and label arrays of an .npz file, and only those: other members are
    never decompressed, and a member whose header declares more data than the archive
    holds is refused before anything is allocated."""
    # an .npz is a zip archive; anything else would reach numpy's pickle loader, whose
    # error suggests loading the file unsafely
    if not zipfile.is_zipfile(path):
        raise DatasetError(f"{path} is not an .npz file (not a zip archive)")
    try:
        with zipfile.ZipFile(path) as archive:
            members = {info.filename[:-4]: info for info in archive.infolist()
                       if info.filename.endswith(".npy")}
            wanted = [_pick(members, _FEATURE_KEYS, "feature", path),
                      *[k for k in _LABEL_KEYS if k in members][:1]]
            return {key: _read_member(archive, members[key], path) for key in wanted}
    except DatasetError:
        raise
    except ValueError as error:
        raise DatasetError(f"{path} is not a readable .npz file: {error}") from None
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise DatasetError(f"{path} is truncated or corrupt: {error}") from None


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path):
    """One array of an .npz archive, its header checked before its data is read."""
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read_header(member)
    if dtype.hasobject:
        raise DatasetError(f"{path} holds object (pickled) arrays, which are never loaded: "
                           "store numeric arrays only")
    size = math.prod(shape) * dtype.itemsize
    if size > info.file_size:
        raise DatasetError(f"{path}: array {info.filename[:-4]!r} declares shape {shape} "
                           f"({size} bytes) but the archive holds {info.file_size} bytes "
                           "for it: the file is truncated or corrupt")
    with archive.open(info) as member:
        return np.lib.format.read_array(member, allow_pickle=False)


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
                raise DatasetError(f"{path}, line {line}, column {column + 1}: "
                                   f"{_shown(cell)} is not a number") from None
            if not np.isfinite(table[i, column]):
                raise DatasetError(f"{path}, line {line}, column {column + 1}: "
                                   f"{_shown(cell)} ({_NOT_FINITE})")
    return table


def _shown(cell: str, width: int = 12) -> str:
    """A cell as an error shows it: whole if short, else its start and its length (a
    file that is not data, such as a linked system file, is not echoed)."""
    if len(cell) <= width:
        return repr(cell)
    return f"{cell[:8]!r}... ({len(cell)} characters)"


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
    if not str(path).strip():
        raise DatasetError(f"the data file's path is empty ({str(path)!r})")
    path = Path(path).expanduser()
    if not path.exists():
        raise DatasetError(f"no file at {path.absolute()}")
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
