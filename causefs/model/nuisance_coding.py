"""Known nuisance variables Z: checked and coded as a numeric design (docs/MODEL.md).

A user passes Z as labels of environments (batch, site, camera, background) or as
observed covariates; the blocks that use it (:mod:`causefs.blocks`) see the coded
design ``(n, q)`` with centred columns. How a column is coded follows its dtype:

* integers, booleans, strings, objects: **categorical**, one indicator column per level
  but the first (the levels sorted), centred. A column with one level carries nothing
  and codes to no column.
* floats: **continuous**, centred and scaled to unit variance; its effect is linear
  (bin it, or pass a basis of it, for another shape). A constant column codes to no
  column.

A 1-D array is one column; a 2-D array has one dtype for all of its columns; a
pandas DataFrame is coded column by column by each column's dtype.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: dtype kinds coded as categories (bool, signed and unsigned int, object, str, bytes)
CATEGORICAL_KINDS = "biuOUS"


def _columns(Z) -> list:
    """The columns of Z as 1-D arrays (a DataFrame's keep their own dtypes)."""
    if sp.issparse(Z):
        raise ValueError("nuisance: a sparse matrix is not supported; pass a dense array")
    if hasattr(Z, "dtypes") and hasattr(Z, "iloc"):  # a pandas DataFrame
        return [np.asarray(Z.iloc[:, j]) for j in range(Z.shape[1])]
    Z = np.asarray(Z)
    if Z.ndim == 1:
        return [Z]
    if Z.ndim == 2:
        return [Z[:, j] for j in range(Z.shape[1])]
    raise ValueError(f"nuisance: expected a 1-D array of labels or a 2-D array (n_samples, "
                     f"n_variables), got an array of shape {Z.shape}")


def _is_missing(value) -> bool:
    """None, a float NaN, or a missing-value singleton of pandas (``pd.NA``, ``pd.NaT``):
    compared with itself, the last two answer NA/False rather than True."""
    if value is None or (isinstance(value, float) and value != value):
        return True
    return type(value).__name__ in ("NAType", "NaTType")


def _code_column(column: np.ndarray, j: int) -> np.ndarray:
    kind = column.dtype.kind
    if kind in CATEGORICAL_KINDS:
        missing = [i for i, v in enumerate(column) if kind == "O" and _is_missing(v)]
        if missing:
            raise ValueError(f"nuisance column {j} has missing values (None, NaN, pandas' "
                             f"NA or NaT) at sample {missing[0]} (0-based; {len(missing)} "
                             "in all): give every sample a level, or drop those samples")
        try:
            _, codes = np.unique(column, return_inverse=True)
        except TypeError as error:  # objects that cannot be sorted
            raise ValueError(f"nuisance column {j}: labels must be comparable ({error})") \
                from None
        indicators = (codes.reshape(-1)[:, None] == np.arange(1, codes.max() + 1)).astype(float)
        return indicators - indicators.mean(axis=0)
    if kind != "f":
        raise ValueError(f"nuisance column {j} has dtype {column.dtype}: use integers or "
                         "strings for labels, floats for covariates")
    column = column.astype(np.float64)
    if not np.all(np.isfinite(column)):
        raise ValueError(f"nuisance column {j} has NaN or infinite values")
    centred = column - column.mean()
    scale = np.sqrt(np.mean(centred**2))
    return (centred / scale)[:, None] if scale > 0 else np.empty((column.size, 0))


def code_nuisance(Z, n_samples: int) -> np.ndarray:
    """The coded design of nuisance variables ``Z`` for ``n_samples`` samples.

    Parameters
    ----------
    Z : array-like of shape (n_samples,) or (n_samples, n_variables), or DataFrame
        Labels (categorical) or covariates (continuous), see the module docstring.
    n_samples : int
        Samples of the data Z belongs to.

    Returns
    -------
    ndarray of shape (n_samples, q)
        Centred columns; q = 0 when no column varies.

    Raises
    ------
    ValueError
        A sparse or 3-D input, a length other than ``n_samples``, missing or infinite
        values, a dtype that is neither labels nor numbers, or more columns than the
        samples can estimate (q >= n_samples - 1).
    """
    columns = _columns(Z)
    for j, column in enumerate(columns):
        if column.shape[0] != n_samples:
            raise ValueError(f"nuisance has {column.shape[0]} rows but X has {n_samples} "
                             "samples: Z needs one row per sample")
    coded = [_code_column(column, j) for j, column in enumerate(columns)]
    design = np.hstack(coded) if coded else np.empty((n_samples, 0))
    if design.shape[1] >= n_samples - 1:
        raise ValueError(f"nuisance codes to {design.shape[1]} columns for {n_samples} "
                         "samples: too many levels or variables to estimate their effects")
    return design
