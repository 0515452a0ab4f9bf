"""The coding of nuisance variables (:func:`causefs.model.nuisance_coding.code_nuisance`)
against its module docstring: centred indicators of every level but the first, missing
values of every kind refused by sample, the number of columns the samples can estimate,
and each message and warning in full (where the warnings point: the line that called the
estimator's ``fit``). The codings against their definitions: tests/test_nuisance.py."""

import inspect
import os
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from causefs.model.nuisance_coding import NuisanceWarning, code_nuisance

try:  # pandas is not a dependency: its missing values and frames are tested where it is
    import pandas as pd
except ImportError:
    pd = None
needs_pandas = pytest.mark.skipif(pd is None, reason="pandas is not installed")
MISSING = [None, float("nan")] + ([] if pd is None else [pd.NA, pd.NaT])


def refused(Z, n, message):
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        code_nuisance(Z, n)


def test_each_refusal_says_why_in_full():
    refused(sp.csr_array(np.eye(4)), 4,
            "nuisance: a sparse matrix is not supported; pass a dense array")
    refused(np.array(["a", "b", None, "a", float("nan")], dtype=object), 5,
            "nuisance column 0 has missing values (None, NaN, pandas' NA or NaT) at sample "
            "2 (0-based; 2 in all): give every sample a level, or drop those samples")
    refused(np.zeros(4), 5, "nuisance has 4 rows but X has 5 samples: Z needs one row per "
                            "sample")
    refused(np.array([3]), 1, "nuisance does not vary (one level, or a constant "
                              "covariate): it carries no nuisance to adjust for; pass "
                              "nuisance=None")
    refused(np.random.default_rng(0).random((5, 4)), 5,
            "nuisance codes to 4 columns for 5 samples: too many levels or variables to "
            "estimate their effects")
    with pytest.raises(ValueError, match=r"^nuisance column 0: labels must be comparable"):
        code_nuisance(np.array([1, "a", 2.5, "b"], dtype=object), 4)
    with pytest.raises(ValueError, match=r"^nuisance cannot be read as an array of one row "
                                         r"per sample \(setting an array element"):
        code_nuisance([[1, 2], [1, 2], [1]], 3)


@pytest.mark.parametrize("scale", [1e307, 1e-300])
def test_covariates_near_the_float_limits_are_standardised_like_any_other(scale):
    """A covariate of values near 1e308 (whose squares overflow) or 1e-300 (whose squares
    underflow) codes to the standardised column of the same values at scale 1, computed
    here from its definition; it was coded as a column of zeros, or refused as constant."""
    values = np.array([3.0, -1.0, 2.0, 0.0, -4.0, 1.5])
    expected = (values - values.mean()) / values.std()
    coded = code_nuisance(values * scale, 6)
    assert coded.shape == (6, 1) and np.allclose(coded[:, 0], expected)


@needs_pandas
def test_a_frame_column_of_another_dtype_is_refused_by_its_position():
    refused(pd.DataFrame({"age": np.arange(6.0), "phase": [1 + 2j] * 6}), 6,
            "nuisance column 1 has dtype complex128: use integers or strings for labels, "
            "floats for covariates")
    refused(np.array(["a", "b", None, "a", pd.NA], dtype=object), 5,
            "nuisance column 0 has missing values (None, NaN, pandas' NA or NaT) at sample "
            "2 (0-based; 2 in all): give every sample a level, or drop those samples")


@pytest.mark.parametrize("missing", MISSING)
def test_every_kind_of_missing_value_is_found(missing):
    Z = np.array(["a", "b", "a", missing, "b"], dtype=object)
    with pytest.raises(ValueError, match="at sample 3 "):
        code_nuisance(Z, 5)


def test_numbers_held_as_objects_are_labels_not_missing_values():
    Z = np.array([1.5, 2.5, 1.5, 2.5, 0.5, 0.5], dtype=object)
    coded = code_nuisance(Z, 6)
    expected = np.column_stack([Z == 1.5, Z == 2.5]).astype(float)  # levels sorted
    assert np.allclose(coded, expected - expected.mean(axis=0))


def test_indicators_are_centred_column_by_column():
    """Levels of unequal frequency: each indicator column has mean 0 (not the matrix)."""
    Z = np.array([0, 1, 1, 1, 2, 2, 0, 1, 1, 1])
    coded = code_nuisance(Z, 10)
    raw = np.column_stack([Z == 1, Z == 2]).astype(float)
    assert np.allclose(coded, raw - raw.mean(axis=0))
    assert np.allclose(coded.mean(axis=0), 0.0)


def test_the_samples_can_estimate_up_to_n_minus_2_columns():
    rng = np.random.default_rng(1)
    assert code_nuisance(rng.random((5, 3)), 5).shape == (5, 3)


def single_levels(count):
    """Two labels of two samples each, then ``count`` labels of one sample."""
    return np.array(["p", "p", "q", "q"] + [f"s{i}" for i in range(count)])


@pytest.mark.parametrize(("count", "shown"), [
    (1, "'s0'"), (5, "'s0', 's1', 's2', 's3', 's4'"),
    (6, "'s0', 's1', 's2', 's3', 's4' and 1 more"),
    (8, "'s0', 's1', 's2', 's3', 's4' and 3 more")])
@needs_pandas
def test_levels_of_one_sample_are_named_five_at_most(count, shown):
    frame = pd.DataFrame({"age": np.arange(4.0 + count), "site": single_levels(count)})
    with pytest.warns(NuisanceWarning) as record:
        code_nuisance(frame, 4 + count)
    assert [str(w.message) for w in record] == [
        f"nuisance column 1: level(s) {shown} hold one sample each; the effect of such a "
        "level is that sample's own values, which the adjustment then removes (merge rare "
        "levels, or drop those samples)"]


def test_two_levels_one_of_one_sample_are_warned_about_and_one_sample_is_not():
    with pytest.warns(NuisanceWarning, match="level\\(s\\) 'b' hold one sample"):
        code_nuisance(np.array(["a", "a", "a", "b"]), 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one level: refused, with no word on its sample
        with pytest.raises(ValueError, match="does not vary"):
            code_nuisance(np.array(["a"]), 1)


def fit(Z, n):
    """Stands for the estimator's ``fit``, which calls ``code_nuisance`` itself."""
    return code_nuisance(Z, n)


@pytest.mark.skipif("MUTANT_UNDER_TEST" in os.environ,
                    reason="mutmut's trampoline adds a frame to every call of a mutated "
                           "module: no stacklevel holds under it (docs/MUTATION.md)")
def test_the_warnings_point_at_the_line_that_called_fit():
    Z = np.column_stack([np.zeros(6), np.arange(6.0)])  # a constant column
    line = inspect.currentframe().f_lineno + 2
    with pytest.warns(NuisanceWarning) as record:
        fit(Z, 6)
    assert [(w.filename, w.lineno) for w in record] == [(__file__, line)]
    with pytest.warns(NuisanceWarning) as record:  # a level of one sample
        fit(np.array(["a", "a", "a", "b"]), 4)
    assert [(w.filename, w.lineno) for w in record] == [(__file__, line + 3)]


def test_masked_values_are_refused_by_column_and_sample():
    # np.asarray drops the mask: the hidden values were coded as if given
    labels = np.arange(8) % 2
    refused(np.ma.masked_array(labels, mask=np.arange(8) == 3), 8,
            "nuisance column 0 has a masked (missing) value at sample 3 (0-based; 1 in "
            "all): give every sample a value, or drop those samples")
    two = np.column_stack([labels, np.arange(8) % 4])
    mask = np.zeros_like(two, dtype=bool)
    mask[5, 1] = mask[6, 0] = True  # the first masked value by sample is in column 1
    refused(np.ma.masked_array(two, mask=mask), 8,
            "nuisance column 1 has a masked (missing) value at sample 5 (0-based; 2 in "
            "all): give every sample a value, or drop those samples")
    # nothing masked: coded as the arrays themselves, 1-D and 2-D, labels and covariates
    for plain in (labels, two, np.linspace(0.0, 1.0, 8), np.array(list("abababab"))):
        np.testing.assert_array_equal(code_nuisance(np.ma.masked_array(plain), 8),
                                      code_nuisance(plain, 8))


def test_a_covariate_of_zeros_is_constant_without_a_division_by_zero():
    # the largest magnitude scales a covariate first; of an all-zero column it is 0,
    # which must not be divided by (0/0: a RuntimeWarning and NaN before the drop)
    Z = np.column_stack([np.zeros(6), np.arange(6.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.warns(NuisanceWarning, match=r"column\(s\) \[0\] do not vary"):
            coded = code_nuisance(Z, 6)
    centred = np.arange(6.0) - 2.5
    np.testing.assert_allclose(coded[:, 0], centred / np.sqrt(np.mean(centred**2)))


def test_an_iterator_is_named_as_such():
    refused((level for level in [0, 1, 0, 1]), 4,
            "nuisance is an iterator (generator), read once and of no length: pass a list "
            "or an array of one row per sample")
    refused(iter([0, 1, 0, 1]), 4,
            "nuisance is an iterator (list_iterator), read once and of no length: pass a "
            "list or an array of one row per sample")
