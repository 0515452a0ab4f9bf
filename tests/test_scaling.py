"""Feature scaling against scikit-learn's scalers and the formulas its docstring states
(``minmax`` to [0, 1], ``standard`` to zero mean and unit variance, constant features 0),
at ordinary and at extreme magnitudes, dense and sparse."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from causefs.numerics.scaling import constant_features, scale_features

SCALERS = {"minmax": MinMaxScaler, "standard": StandardScaler}


def data(rng, n=30, d=5):
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 100, size=d) + rng.normal(size=d) * 50
    X[:, 2] = 7.25  # a constant feature
    return X


@pytest.mark.parametrize("method", SCALERS)
def test_scaling_is_scikit_learns_with_constant_features_at_zero(method):
    X = data(np.random.default_rng(0))
    expected = SCALERS[method]().fit_transform(X)
    expected[:, 2] = 0.0  # scikit-learn keeps a constant feature's offset; ours is 0
    np.testing.assert_allclose(scale_features(X, method), expected, atol=1e-12)


def test_none_returns_a_copy_of_the_values():
    X = data(np.random.default_rng(1))
    scaled = scale_features(X, "none")
    np.testing.assert_array_equal(scaled, X)
    assert not np.shares_memory(scaled, X)


@pytest.mark.parametrize("method", SCALERS)
def test_finite_values_near_the_largest_float_do_not_overflow(method):
    # the data times 2**1012 or 2**-1000 (exact): ranges and sums of squares overflow or
    # underflow there, yet the scaled result is that of the data
    X = data(np.random.default_rng(2))
    expected = SCALERS[method]().fit_transform(X)
    expected[:, 2] = 0.0
    for power in (1012, -1000):
        np.testing.assert_allclose(scale_features(np.ldexp(X, power), method), expected,
                                   atol=1e-12)


def test_a_range_of_the_largest_magnitudes_is_scaled():
    top = np.finfo(float).max
    X = np.array([[-top, 0.0], [top, 1.0], [0.0, 2.0]])
    np.testing.assert_allclose(scale_features(X), [[0, 0], [1, 0.5], [0.5, 1]])


@pytest.mark.parametrize("method", ["minmax", "none"])
def test_non_negative_sparse_data_stay_sparse_and_scale_as_dense(method):
    dense = sp.random(25, 6, density=0.3, random_state=4).toarray() * 10
    dense[:, 4] = 0.0  # constant columns: all zero, and all 3
    dense[:, 1] = 3.0
    X = sp.csr_array(dense)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division by a zero maximum, even discarded
        scaled = scale_features(X, method)
    assert sp.issparse(scaled)
    expected = dense.copy()
    if method == "minmax":
        expected[:, [1, 4]] = 0.0
        expected /= np.where(expected.max(0) > 0, expected.max(0), 1.0)
    np.testing.assert_allclose(scaled.toarray(), expected, atol=1e-12)
    assert scaled.nnz == np.count_nonzero(expected)  # no stored zeros


def test_sparse_data_that_must_shift_are_densified_and_scaled():
    X = sp.csc_array(np.array([[-1.0, 0.0, 3.0], [1.0, 2.0, 3.0], [0.0, 4.0, 3.0]]))
    for method in SCALERS:
        scaled = scale_features(X, method)
        assert not sp.issparse(scaled)
        expected = SCALERS[method]().fit_transform(X.toarray())
        expected[:, 2] = 0.0
        np.testing.assert_allclose(scaled, expected, atol=1e-12)


def test_minmax_shifts_a_sparse_column_whose_minimum_is_not_zero_and_stays_sparse():
    """A word in every document (minimum above 0) and a column of negative values are
    shifted as dense data are (scikit-learn's MinMaxScaler), storing their zeros; the
    other columns keep theirs, constant ones become 0, and X stays sparse."""
    rng = np.random.default_rng(5)
    dense = (rng.random((40, 12)) < 0.1) * rng.random((40, 12)) * 10
    dense[:, 7] += 2.0  # every entry non-zero: its minimum is 2
    dense[0, 7] = 2.0
    dense[:, 9] = 0.0
    dense[1, 9], dense[2, 9] = -0.5, 4.0  # negative: its zeros become 0.5 / 4.5
    dense[:, 5] = 3.0  # a constant column
    dense[:, 3] = 0.0  # and an empty one
    scaled = scale_features(sp.csr_array(dense), "minmax")
    assert sp.issparse(scaled)
    expected = MinMaxScaler().fit_transform(dense)
    expected[:, 5] = 0.0
    np.testing.assert_allclose(scaled.toarray(), expected, rtol=1e-12, atol=1e-14)
    stored = np.diff(sp.csc_array(scaled).indptr)
    np.testing.assert_array_equal(stored, np.count_nonzero(expected, axis=0))
    assert stored[7] == 40 - np.count_nonzero(dense[:, 7] == 2.0)  # all but its minimum
    assert stored[9] == 39  # all but its minimum, -0.5


@pytest.mark.parametrize("entries, stays_sparse", [(10, True), (11, False)])
def test_minmax_densifies_sparse_data_whose_shifted_columns_fill_over_a_third(entries,
                                                                             stays_sparse):
    """The shifted columns' cells all count as stored: 3 full columns of 10 and 10 more
    entries are a third of the 300 cells (sparse); one entry more is over a third (dense:
    CSC would take more than half the memory)."""
    rng = np.random.default_rng(6)
    dense = np.zeros((30, 10))
    dense[:, :3] = 1.0 + rng.random((30, 3))  # minima above 0
    dense[:entries, 3] = 1.0 + rng.random(entries)  # minimum 0: divided by its maximum
    scaled = scale_features(sp.csr_array(dense), "minmax")
    assert sp.issparse(scaled) == stays_sparse
    np.testing.assert_allclose(scaled.toarray() if stays_sparse else scaled,
                               MinMaxScaler().fit_transform(dense), rtol=1e-12, atol=1e-14)


def test_constant_features_are_found_by_comparison_dense_and_sparse():
    X = np.array([[1.0, 2.0, 0.0, 1e308], [1.0, 3.0, 0.0, -1e308], [1.0, 2.0, 0.0, 1e308]])
    expected = [True, False, True, False]
    assert constant_features(X).tolist() == expected
    assert constant_features(sp.csr_array(X)).tolist() == expected


def test_an_unknown_scaling_is_refused_by_name():
    from causefs.core.validation import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="^preprocessing='l2': must be one of "
                                                    "'minmax', 'standard', 'none'$"):
        scale_features(np.ones((3, 2)), "l2")


@pytest.mark.parametrize("method", SCALERS)
def test_boolean_data_are_scaled_as_numbers_without_warnings(method):
    X = np.array([[True, False, True], [False, False, True], [True, True, True]])
    expected = SCALERS[method]().fit_transform(X.astype(float))
    expected[:, 2] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 from the constant column, even discarded
        np.testing.assert_allclose(scale_features(X, method), expected, atol=1e-12)


@pytest.mark.parametrize("method", SCALERS)
def test_columns_of_very_different_magnitudes_are_each_scaled(method):
    # one power of two for all columns would flush the 2**-1000 column to zero
    X = data(np.random.default_rng(5))
    X[:, 0] = np.ldexp(X[:, 0], 1000)
    X[:, 1] = np.ldexp(X[:, 1], -1000)
    expected = SCALERS[method]().fit_transform(data(np.random.default_rng(5)))
    expected[:, 2] = 0.0
    np.testing.assert_allclose(scale_features(X, method), expected, atol=1e-12)


def test_non_negative_sparse_data_are_standardized_densely():
    dense = sp.random(20, 4, density=0.4, random_state=6).toarray()
    scaled = scale_features(sp.csr_array(dense), "standard")
    assert not sp.issparse(scaled)
    np.testing.assert_allclose(scaled, StandardScaler().fit_transform(dense), atol=1e-12)
