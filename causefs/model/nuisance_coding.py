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

A 1-D array or a pandas Series is one column; a 2-D array has one dtype for all of its
columns; a pandas DataFrame is coded column by column by each column's dtype (a
categorical Series or column by its categories' values).

A Z in which no column varies is an error (it carries no nuisance: pass none). A column
that does not vary beside others that do, and a level held by one sample (whose effect is
that sample's own values, so the adjustment erases it), are warned about
(:class:`NuisanceWarning`).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from ..core.validation import masked_positions

#: dtype kinds coded as categories (bool, signed and unsigned int, object, str, bytes)
CATEGORICAL_KINDS = "biuOUS"


class NuisanceWarning(UserWarning):
    """Nuisance variables that can be coded but carry little: a column that does not
    vary, or a level of one sample."""


def _columns(Z) -> list:
    """The columns of Z as 1-D arrays (a DataFrame's keep their own dtypes)."""
    if sp.issparse(Z):
        raise ValueError("nuisance: a sparse matrix is not supported; pass a dense array")
    if hasattr(Z, "__next__"):  # np.asarray makes one object of an iterator
        raise ValueError(f"nuisance is an iterator ({type(Z).__name__}), read once and of "
                         "no length: pass a list or an array of one row per sample")
    masked = masked_positions(Z)
    if masked.size:
        column = masked[0][1] if masked.shape[1] > 1 else 0
        raise ValueError(f"nuisance column {column} has a masked (missing) value at "
                         f"sample {masked[0][0]} (0-based; {len(masked)} in all): give "
                         "every sample a value, or drop those samples")
    if hasattr(Z, "iloc") and len(getattr(Z, "shape", ())) == 2:  # a pandas DataFrame
        return [np.asarray(Z.iloc[:, j]) for j in range(Z.shape[1])]
    try:
        Z = np.asarray(Z)  # a pandas Series is one column
    except ValueError as error:  # rows of different lengths: numpy's words only
        raise ValueError(f"nuisance cannot be read as an array of one row per sample "
                         f"({error})") from None
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
            levels, codes, counts = np.unique(column, return_inverse=True,
                                              return_counts=True)
        except TypeError as error:  # objects that cannot be sorted
            raise ValueError(f"nuisance column {j}: labels must be comparable ({error})") \
                from None
        _warn_if_single_sample_levels(levels, counts, j)
        indicators = (codes.reshape(-1)[:, None] == np.arange(1, codes.max() + 1)).astype(float)
        return indicators - indicators.mean(axis=0)
    if kind != "f":
        raise ValueError(f"nuisance column {j} has dtype {column.dtype}: use integers or "
                         "strings for labels, floats for covariates")
    column = column.astype(np.float64)
    if not np.all(np.isfinite(column)):
        raise ValueError(f"nuisance column {j} has NaN or infinite values")
    # standardising is scale-free: dividing by the largest magnitude first keeps the sum
    # and the squares of values near the float limits (1e308) finite, and lifts tiny
    # ones (1e-300) above underflow, where either would code a varying Z as constant
    largest = np.abs(column).max()
    centred = column / (largest if largest > 0 else 1.0)
    centred -= centred.mean()
    scale = np.sqrt(np.mean(centred**2))
    return (centred / scale)[:, None] if scale > 0 else np.empty((column.size, 0))


def _warn_if_single_sample_levels(levels: np.ndarray, counts: np.ndarray, j: int) -> None:
    single = levels[counts == 1]
    if single.size and levels.size > 1:
        shown = ", ".join(repr(v) for v in single[:5].tolist()) \
            + (f" and {single.size - 5} more" if single.size > 5 else "")
        warnings.warn(f"nuisance column {j}: level(s) {shown} hold one sample each; the "
                      "effect of such a level is that sample's own values, which the "
                      "adjustment then removes (merge rare levels, or drop those samples)",
                      NuisanceWarning, stacklevel=5)  # the caller of the estimator's fit


def code_nuisance(Z, n_samples: int, *, without: str = "pass nuisance=None") -> np.ndarray:
    """The coded design of nuisance variables ``Z`` for ``n_samples`` samples.

    Parameters
    ----------
    Z : array-like of shape (n_samples,) or (n_samples, n_variables), or DataFrame
        Labels (categorical) or covariates (continuous), see the module docstring.
    n_samples : int
        Samples of the data Z belongs to.
    without : str, default "pass nuisance=None"
        How the caller leaves Z out, as the refusal of a Z that does not vary says it
        (the command line: ``set dataset.nuisance=null``).

    Returns
    -------
    ndarray of shape (n_samples, q)
        Centred columns.

    Raises
    ------
    ValueError
        A sparse or 3-D input, rows of different lengths, a length other than
        ``n_samples``, missing (or masked) or infinite values, a dtype that is neither
        labels nor numbers, no column that varies (one level, or a constant covariate),
        or more columns than the samples can estimate (q >= n_samples - 1).

    Warns
    -----
    NuisanceWarning
        A column that does not vary beside others that do (it is dropped), or a level
        held by one sample.
    """
    columns = _columns(Z)
    for j, column in enumerate(columns):
        if column.shape[0] != n_samples:
            raise ValueError(f"nuisance has {column.shape[0]} rows but X has {n_samples} "
                             "samples: Z needs one row per sample")
    coded = []
    for j, column in enumerate(columns):  # a loop, not a comprehension: the warnings'
        coded.append(_code_column(column, j))  # stacklevel is the same on every Python
    constant = [j for j, part in enumerate(coded) if part.shape[1] == 0]
    if len(constant) == len(coded):
        raise ValueError("nuisance does not vary (one level, or a constant covariate): it "
                         f"carries no nuisance to adjust for; {without}")
    if constant:
        warnings.warn(f"nuisance column(s) {constant} do not vary and are ignored",
                      NuisanceWarning, stacklevel=3)  # the caller of the estimator's fit
    design = np.hstack(coded)
    if design.shape[1] >= n_samples - 1:
        raise ValueError(f"nuisance codes to {design.shape[1]} columns for {n_samples} "
                         "samples: too many levels or variables to estimate their effects")
    return design
