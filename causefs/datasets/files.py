"""Any ``.npz``, ``.mat`` (v5 or v7.3) or ``.csv`` file as a dataset; pickles are never loaded."""

from __future__ import annotations

import csv
import math
import numbers
import os
import warnings
import zipfile
from pathlib import Path

import numpy as np

from ..core.extras import require
from .base import Dataset, DatasetError, DatasetWarning

_FEATURE_KEYS = ("X", "fea", "data", "features")
_LABEL_KEYS = ("y", "gnd", "Y", "labels", "label", "target")
#: the optional array of an .npz file that names its features (strings, one per column)
FEATURE_NAMES_KEY = "feature_names"
#: CSV header names that mark the label column (compared in lower case)
LABEL_NAMES = ("y", "label", "labels", "target", "class", "gnd")
#: a last CSV column with at most this many distinct integers draws a warning
SMALL_INTEGER_LEVELS = 100


_NOT_FINITE = "missing and infinite values are not supported: drop or impute them first"
#: text cells of a nuisance column that mean "not known" (pandas' defaults, in any case):
#: read as a level, they would make the samples of unknown batch a batch of their own
MISSING_CELLS = frozenset({"", "na", "n/a", "null", "none", "#n/a", "<na>", "nat"})


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


def _check_classes(y, source) -> None:
    """Numeric labels are whole numbers: a measurement taken for the labels (a wrong
    label column) would otherwise reach the clustering metrics, whose error names
    neither the file nor the column."""
    if y is not None and y.dtype.kind == "f" and not np.array_equal(y, np.round(y)):
        row = int(np.flatnonzero(y != np.round(y))[0])
        raise DatasetError(f"{source}: the label of sample {row + 1} is {y[row]}, not a "
                           "class: labels are whole numbers (is the label column the "
                           "right one?)")


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


#: the members of an .npz file that ``scipy.sparse.save_npz`` wrote (its "data" member
#: would otherwise be read as the features, a 1-D array)
_SPARSE_MEMBERS = frozenset({"format", "shape", "data"})


def _load_npz(path: Path, nuisance=None) -> dict:
    """The feature and label arrays of an .npz file (and the array ``nuisance`` names),
    and only those: other members are never decompressed, and a member whose header
    declares more data than the archive holds is refused before anything is allocated."""
    # an .npz is a zip archive; anything else would reach numpy's pickle loader, whose
    # error suggests loading the file unsafely
    if not zipfile.is_zipfile(path):
        raise DatasetError(f"{path} is not an .npz file (not a zip archive)")
    try:
        with zipfile.ZipFile(path) as archive:
            members = {info.filename[:-4]: info for info in archive.infolist()
                       if info.filename.endswith(".npy")}
            if _SPARSE_MEMBERS <= members.keys():
                raise DatasetError(f"{path} holds a scipy.sparse matrix (scipy.sparse."
                                   "save_npz), not arrays: save X dense (np.savez(path, X="
                                   "matrix.toarray())), or fit it from Python, where "
                                   "CauseFS().fit takes sparse X")
            wanted = [_pick(members, _FEATURE_KEYS, "feature", path),
                      *[k for k in _LABEL_KEYS if k in members][:1],
                      *[k for k in (FEATURE_NAMES_KEY,) if k in members]]
            if nuisance is not None:
                _check_archive_key(members, nuisance, path)
                wanted.append(nuisance)
            return {key: _read_member(archive, members[key], path) for key in wanted}
    except DatasetError:
        raise
    except ValueError as error:
        raise DatasetError(f"{path} is not a readable .npz file: {error}") from None
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise DatasetError(f"{path} is truncated or corrupt: {error}") from None


#: where an HDF5 file's signature may start: MATLAB v7.3 files put it after a 512-byte header
_HDF5_SIGNATURE, _HDF5_OFFSETS = b"\x89HDF\r\n\x1a\n", (0, 512)


def _is_hdf5(path: Path) -> bool:
    with open(path, "rb") as handle:
        head = handle.read(_HDF5_OFFSETS[-1] + len(_HDF5_SIGNATURE))
    return any(head[i:i + len(_HDF5_SIGNATURE)] == _HDF5_SIGNATURE for i in _HDF5_OFFSETS)


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path):
    """One array of an .npz archive, its header checked before its data is read."""
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read_header(member)
    if dtype.hasobject:
        # np.savez of a scipy.sparse matrix stores it so, as a 0-d object array
        sparse = " (a scipy.sparse matrix saved with np.savez? save X.toarray(), or fit it " \
                 "from Python, where CauseFS().fit takes sparse X)" if shape == () else ""
        raise DatasetError(f"{path}: array {info.filename[:-4]!r} is an object (pickled) "
                           f"array, which is never loaded{sparse}: store numeric arrays only")
    size = math.prod(shape) * dtype.itemsize
    if size > info.file_size:
        raise DatasetError(f"{path}: array {info.filename[:-4]!r} declares shape {shape} "
                           f"({size} bytes) but the archive holds {info.file_size} bytes "
                           "for it: the file is truncated or corrupt")
    with archive.open(info) as member:
        return np.lib.format.read_array(member, allow_pickle=False)


def _load_mat(path: Path):
    import scipy.io

    try:
        if _is_hdf5(path):  # MATLAB v7.3
            h5py = require("h5py", "mat73", f"reading {path} (a MATLAB v7.3 .mat file)")
            with h5py.File(path, "r") as handle:
                # MATLAB stores arrays column-major: h5py sees them transposed
                return {key: np.asarray(handle[key]).T for key in handle.keys()
                        if isinstance(handle[key], h5py.Dataset)}
        return scipy.io.loadmat(path)
    except (ValueError, TypeError, OSError, EOFError, NotImplementedError,
            scipy.io.matlab.MatReadError) as error:
        raise DatasetError(f"{path} is not a readable .mat file: {error}") from None


def _csv_head(path: Path) -> tuple[list | None, int]:
    """The header line's cells (None when the first non-blank line holds a number) and
    the number of lines before the data."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:  # -sig: drop a BOM
            for number, row in enumerate(csv.reader(handle), start=1):
                if any(cell.strip() for cell in row):
                    # a header line: no cell is a number (a typo in data is an error)
                    if any(_numeric([cell]) for cell in row):
                        return None, number - 1
                    return [cell.strip() for cell in row], number
    except UnicodeDecodeError as error:
        raise DatasetError(f"{path} is not a text (CSV) file: {error}") from None
    return None, 0


def _read_csv(path: Path, skip: int, columns: list) -> np.ndarray:
    """Numbers of the ``columns`` of a comma-separated file, (rows, len(columns)), after
    its ``skip`` header lines.

    NumPy's parser reads a well-formed file; any file it refuses, or whose values are
    not all finite, is read again cell by cell (:func:`_read_csv_cells`) for an error
    naming the line and column.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "input contained no data": checked below
            table = np.loadtxt(path, delimiter=",", skiprows=skip, ndmin=2, comments=None,
                               quotechar='"', encoding="utf-8-sig", dtype=float,
                               usecols=columns)
        if table.size and np.isfinite(table).all():
            return table
    except (ValueError, UnicodeDecodeError):
        pass
    return _read_csv_cells(path, skip, columns)


def _csv_rows(path: Path, skip: int) -> list:
    """(line number, cells) of every non-blank row after the ``skip`` header lines."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return [(number, row) for number, row in enumerate(csv.reader(handle), start=1)
                if number > skip and any(cell.strip() for cell in row)]


def _read_csv_cells(path: Path, skip: int, columns: list) -> np.ndarray:
    """The slow path of :func:`_read_csv`: a cell that is not a number or not finite, a
    row of another width, or no data row raise a :class:`DatasetError` naming the line
    and column."""
    rows = _csv_rows(path, skip)
    if not rows:
        raise DatasetError(f"{path} holds no data rows")
    width = len(rows[0][1])
    table = np.empty((len(rows), len(columns)))
    for i, (line, row) in enumerate(rows):
        if len(row) != width:
            raise DatasetError(f"{path}, line {line}: {len(row)} columns, the first data "
                               f"row has {width}")
        for j, column in enumerate(columns):
            cell = row[column]
            if not cell.strip():
                raise DatasetError(f"{path}, line {line}, column {column + 1}: empty cell "
                                   f"({_NOT_FINITE})")
            try:
                table[i, j] = float(cell)
            except ValueError:
                raise DatasetError(f"{path}, line {line}, column {column + 1}: "
                                   f"{_shown(cell)} is not a number") from None
            if not np.isfinite(table[i, j]):
                raise DatasetError(f"{path}, line {line}, column {column + 1}: "
                                   f"{_shown(cell)} ({_NOT_FINITE})")
    return table


def _csv_width(path: Path, header: list | None, skip: int) -> int:
    """Columns of a CSV file: its header's, else its first data row's."""
    if header is not None:
        return len(header)
    rows = _csv_rows(path, skip)
    if not rows:
        raise DatasetError(f"{path} holds no data rows")
    return len(rows[0][1])


def _csv_nuisance(path: Path, skip: int, columns: list, header) -> np.ndarray:
    """The nuisance columns of a CSV file: numbers where every cell is one (whole numbers
    as integer labels), else text levels (categorical); an empty cell, a missing-value
    marker (:data:`MISSING_CELLS`: ``NA``, ``null``...) or a number that is not finite
    is an error naming its line, column and (with a header) the column's name."""
    rows = _csv_rows(path, skip)
    cells = np.array([[row[c].strip() if c < len(row) else "" for c in columns]
                      for _, row in rows], dtype=str)
    for (line, _), values in zip(rows, cells):
        missing = [j for j, value in enumerate(values) if _missing_cell(value)]
        if missing:
            value, column = values[missing[0]], columns[missing[0]]
            named = "" if header is None else f" ({header[column]!r})"
            what = f"is {_shown(str(value))} ({_NOT_FINITE})" if value else \
                "is missing (an empty cell)"
            raise DatasetError(f"{path}, line {line}, column {column + 1}{named}: the "
                               f"nuisance variable {what}")
    if _numeric(cells.ravel()):
        return _labels_where_whole(cells.astype(float))
    return cells  # text levels, such as batch names


def _missing_cell(cell: str) -> bool:
    """A nuisance cell that is empty, a missing-value marker or not a finite number."""
    if cell.lower() in MISSING_CELLS:
        return True
    try:
        return not math.isfinite(float(cell))
    except ValueError:
        return False


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


def _column_index(path: Path, header: list | None, width: int, key: str, column) -> int:
    """The column ``column`` names for ``key``: a number (``-1``: the last) or a header
    name."""
    if isinstance(column, str):
        if header is None:
            raise DatasetError(f"{path}: {key}={column!r} names a column, but the file has "
                               "no header line; give its number (e.g. -1)")
        if column not in header:
            raise DatasetError(f"{path}: {key}={column!r} is no column of its header "
                               f"{header}")
        where = [i + 1 for i, name in enumerate(header) if name == column]
        if len(where) > 1:
            raise DatasetError(f"{path}: {key}={column!r} names columns {where} of its "
                               "header; rename all but one, or give the column's number")
        return header.index(column)
    if not isinstance(column, numbers.Integral) or isinstance(column, bool):
        raise DatasetError(f"{key} must be a column number such as -1 or a header name for "
                           f"a .csv file, got {column!r} ({path})")
    if not -width <= column < width:
        raise DatasetError(f"{path}: {key}={column} is out of range for its {width} columns")
    return column % width


def _label_index(path: Path, header: list | None, width: int, label_column) -> int | None:
    """The column holding the labels: ``label_column`` (a number, or a header name), or
    the one header name of :data:`LABEL_NAMES`; None for no labels."""
    if label_column is None:
        named = [i for i, name in enumerate(header or ()) if name.lower() in LABEL_NAMES]
        if len(named) > 1:
            raise DatasetError(f"{path}: columns {[header[i] for i in named]} are all named "
                               "like labels; set label_column to the one that is")
        return named[0] if named else None
    return _column_index(path, header, width, "label_column", label_column)


def _warn_if_last_column_looks_like_labels(path: Path, table: np.ndarray,
                                           header: list | None) -> None:
    """A last column of few distinct small integers is most likely labels: say so (it
    stays a feature, since it was not named as the labels)."""
    n, width = table.shape
    values = np.unique(table[:, -1])
    if width < 2 or not (2 <= values.size <= min(SMALL_INTEGER_LEVELS, n // 2)) \
            or not np.array_equal(values, np.round(values)) or np.abs(values).max() > 1000:
        return
    name = f"column {width}" + (f" ({header[-1]!r})" if header else ", no header")
    warnings.warn(f"{path}: the last column ({name}) holds only {values.size} distinct small "
                  f"integers ({values[0]:g} to {values[-1]:g}), as labels do; it is used as a "
                  "feature. If it holds the labels, set label_column=-1 "
                  "(dataset.label_column=-1 on the command line)", DatasetWarning,
                  stacklevel=4)


def _load_csv(path: Path, label_column, nuisance):
    """Features, labels, nuisance variables and feature names (the header's, None
    without one) of a CSV file (see :func:`load_file`); ``nuisance`` is a column (number
    or header name) or a list of them, of numbers or of text levels."""
    header, skip = _csv_head(path)
    width = _csv_width(path, header, skip)
    column = _label_index(path, header, width, label_column)
    several = isinstance(nuisance, (list, tuple))
    side = [_column_index(path, header, width, "nuisance", c)
            for c in ([] if nuisance is None else nuisance if several else [nuisance])]
    if column in side:
        raise DatasetError(f"{path}: column {column} cannot hold both the labels and a "
                           "nuisance variable")
    twice = sorted({c for c in side if side.count(c) > 1})
    if twice:
        named = f" ({header[twice[0]]!r})" if header else ""
        raise DatasetError(f"{path}: nuisance names column {twice[0]}{named} more than "
                           f"once ({nuisance!r}): name each nuisance column once")
    numeric = [j for j in range(width) if j not in side]
    table = _read_csv(path, skip, numeric)
    if column is None and width - 1 not in side:
        _warn_if_last_column_looks_like_labels(path, table, header)
    label = [] if column is None else [numeric.index(column)]
    y = table[:, label[0]] if label else None
    Z = None if not side else _csv_nuisance(path, skip, side, header)
    names = None if header is None else tuple(header[j] for j in numeric if j != column)
    return np.delete(table, label, axis=1), y, Z if Z is None or several else Z[:, 0], names


def _labels_where_whole(Z: np.ndarray) -> np.ndarray:
    """CSV and MATLAB files store labels as floats: whole-number Z become integer labels
    (categorical, :mod:`causefs.model.nuisance_coding`); with several columns, all or none."""
    if Z.dtype.kind == "f" and np.all(np.isfinite(Z)) and np.all(Z == np.round(Z)):
        return Z.astype(np.int64)
    return Z


def _check_archive_key(names, key, source) -> None:
    """``key`` must name one of the arrays ``names`` of an .npz/.mat file (Z's)."""
    if not isinstance(key, str):
        raise DatasetError(f"nuisance must name the array of {source} that holds Z, got "
                           f"{key!r}")
    if key not in names:
        raise DatasetError(f"{source} has no array {key!r} for the nuisance variables; "
                           f"found {sorted(k for k in names if not k.startswith('__'))}")


def _archive_nuisance(contents, key, source):
    """The array stored under ``key`` in an .npz/.mat file, as Z."""
    _check_archive_key(contents, key, source)
    Z = np.asarray(contents[key])
    Z = Z.ravel() if Z.ndim == 2 and 1 in Z.shape else Z
    if Z.ndim not in (1, 2):
        raise DatasetError(f"{source}: nuisance {key!r} has shape {Z.shape}; Z is a 1-D "
                           "array of one value per sample or a 2-D array (n_samples, "
                           "n_variables)")
    if Z.dtype.kind in "fc" and not np.isfinite(Z).all():
        row = int(np.argwhere(~np.isfinite(Z))[0][0])
        raise DatasetError(f"{source}: nuisance {key!r}, sample {row + 1} (1-based) is "
                           f"{Z.reshape(Z.shape[0], -1)[row].tolist()} ({_NOT_FINITE})")
    return Z


def _feature_names(contents, n_features: int, source) -> tuple | None:
    """The strings of an .npz/.mat file's :data:`FEATURE_NAMES_KEY` array, one per
    feature, or None when it has none."""
    if FEATURE_NAMES_KEY not in contents:
        return None
    names = np.asarray(contents[FEATURE_NAMES_KEY])
    names = names.ravel() if names.ndim == 2 and 1 in names.shape else names
    if names.dtype.kind not in "US" or names.shape != (n_features,):
        raise DatasetError(f"{source}: {FEATURE_NAMES_KEY!r} must be an array of "
                           f"{n_features} strings (one per feature), got {names.dtype} of "
                           f"shape {names.shape}")
    return tuple(str(n.decode() if isinstance(n, bytes) else n).strip() for n in names)


def load_file(path: str | os.PathLike, label_column: int | str | None = None,
              nuisance=None) -> Dataset:
    """Load a ``.npz``, ``.mat`` (v5 or v7.3) or ``.csv`` file.

    ``.npz`` and ``.mat`` files hold the features under one of ``X``, ``fea``,
    ``data``, ``features`` and optionally the labels under ``y``, ``gnd``, ``Y``,
    ``labels``, ``label``, ``target``, and optionally the features' names (strings)
    under ``feature_names``. Pickled content is never loaded.

    A ``.csv`` file is comma-separated numbers with at most one header line of names.
    Its header's names are the features' names. Its labels are the column ``label_column`` names, by number (``-1``: the last) or
    by header name; without it, the one header column named ``y``, ``label``,
    ``labels``, ``target``, ``class`` or ``gnd`` (any case); else it has none. A label
    column is never a feature. A last column of few distinct small integers that was
    not chosen as the labels (nor as a nuisance variable) stays a feature, with a
    :class:`DatasetWarning` naming it.

    Parameters
    ----------
    path : str or path
    label_column : int, str or None
        ``.csv`` files only: the column of the labels, by number or header name.
    nuisance : str, int, list or None
        Where known nuisance variables Z are (:attr:`Dataset.nuisance`): the key of
        their array in an ``.npz``/``.mat`` file; a column (number or header name) or a
        list of them in a ``.csv`` file, which then leave the features (an empty cell,
        ``NA``, ``null``, ``nan`` or ``inf`` there is an error). CSV and MATLAB files
        have no integer type: whole-number nuisance values are read as labels.

    Returns
    -------
    Dataset
        ``X`` of shape (n_samples, n_features), ``y`` of shape (n_samples,) or None,
        ``nuisance`` of shape (n_samples,) or (n_samples, p) or None,
        ``feature_names`` of length n_features (the CSV header's, the ``.npz``/``.mat``
        file's ``feature_names``) or None.

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
    if label_column is not None and (not isinstance(label_column, (numbers.Integral, str))
                                     or isinstance(label_column, bool)):
        raise DatasetError(f"label_column must be a column number such as -1 or a header "
                           f"name, got {label_column!r} ({path})")
    if label_column is not None and suffix != ".csv":
        raise DatasetError(f"label_column applies to .csv files only ({path}); .npz/.mat "
                           f"files name their labels {', '.join(_LABEL_KEYS)}")
    if suffix == ".csv":
        X, y, Z, names = _load_csv(path, label_column, nuisance)
        X, y = _orient(X, y, source)
    else:
        contents = _load_npz(path, nuisance) if suffix == ".npz" else _load_mat(path)
        key = _pick(contents, _FEATURE_KEYS, "feature", source)
        X = _as_features(contents[key], source, key)
        label_keys = [k for k in _LABEL_KEYS if k in contents]
        y = _as_labels(contents[label_keys[0]]) if label_keys else None
        X, y = _orient(X, y, source)
        _check_values(X, y, source, key)
        names = _feature_names(contents, X.shape[1], source)
        taken = {key: "the features", **{k: "the labels" for k in label_keys[:1]},
                 FEATURE_NAMES_KEY: "the feature names"}
        if isinstance(nuisance, str) and nuisance in taken:
            raise DatasetError(f"{source}: array {nuisance!r} holds {taken[nuisance]}; the "
                               "nuisance variables are another array of the file (the "
                               "batch, site or camera of each sample)")
        Z = None if nuisance is None else _archive_nuisance(contents, nuisance, source)
        if Z is not None and suffix == ".mat":
            Z = _labels_where_whole(Z)
    if Z is not None and Z.shape[0] != X.shape[0]:
        raise DatasetError(f"{source}: {X.shape[0]} samples but the nuisance variables "
                           f"(nuisance={nuisance!r}) have {Z.shape[0]} rows")
    _check_classes(y, source)
    return Dataset(name=path.stem, X=X, y=y, source=source, nuisance=Z, feature_names=names)
