"""The small numerics of sparse data and of correlations (:mod:`causefs.numerics.sparse`,
:mod:`causefs.numerics.correlation`) against their dense definitions, written here with
NumPy: each helper on dense and sparse input, constant columns, implicit zeros, and the
chunks of a sparse Gram product."""

import gc
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from causefs.numerics import sparse as sparse_module
from causefs.numerics.correlation import decorrelated_order, pearson_similarity, standardized
from causefs.numerics.sparse import (as_sparse_data, column_extremes, column_variance, dense,
                                     gram_columns, scale_rows)


def _data(seed=0):
    """Mostly zeros, a constant non-zero column (2), an all-zero column (4), a column
    whose non-zeros are all positive (so its minimum is an implicit zero, 0)."""
    rng = np.random.default_rng(seed)
    D = rng.random((12, 6)) * (rng.random((12, 6)) < 0.4)
    D[:, 2], D[:, 4] = 3.0, 0.0
    D[:, 5] = np.where(np.arange(12) % 3 == 0, 0.0, 1.0 + np.arange(12))
    return D


def test_dense_returns_an_ndarray_of_any_input():
    D = _data()
    for given in (D, sp.csr_array(D), sp.csc_matrix(D), D.tolist()):
        out = dense(given)
        assert type(out) is np.ndarray
        np.testing.assert_array_equal(out, D)
    assert dense(D) is D  # an ndarray as it is, no copy


def test_sparse_data_are_float64_columns():
    X = as_sparse_data(sp.csr_array(_data().astype(np.float32)))
    assert isinstance(X, sp.csc_array) and X.dtype == np.float64
    np.testing.assert_array_equal(X.toarray(), _data().astype(np.float32))


@pytest.mark.parametrize("container", [np.asarray, sp.csr_array, sp.csc_array])
def test_scaled_rows_are_diag_weights_times_x(container):
    D, weights = _data(), np.linspace(0.5, 2.0, 12)
    out = scale_rows(weights, container(D))
    np.testing.assert_allclose(dense(out), np.diag(weights) @ D)
    assert sp.issparse(out) == sp.issparse(container(D))
    if sp.issparse(out):
        assert isinstance(out, sp.csc_array)


@pytest.mark.parametrize("container", [np.asarray, sp.csr_array, sp.csc_array])
def test_column_extremes_count_implicit_zeros(container):
    D = _data()
    low, high = column_extremes(container(D))
    np.testing.assert_array_equal(low, [min(D[:, j]) for j in range(6)])
    np.testing.assert_array_equal(high, [max(D[:, j]) for j in range(6)])
    assert low[5] == 0.0 and high[5] == 12.0 and low[2] == high[2] == 3.0
    assert low.shape == high.shape == (6,)


@pytest.mark.parametrize("container", [np.asarray, sp.csr_array, sp.csc_array])
def test_column_variance_is_the_mean_squared_deviation(container):
    D = _data()
    expected = [np.mean((D[:, j] - np.mean(D[:, j])) ** 2) for j in range(6)]
    out = column_variance(container(D))
    np.testing.assert_allclose(out, expected, atol=1e-12)
    assert out.shape == (6,) and np.all(out >= 0.0)


def test_a_constant_sparse_column_has_variance_0_not_a_rounding_below():
    # 0.1 in 7 rows: the sparse route's E[x^2] - E[x]^2 rounds to -1.7e-18 (seen with
    # SciPy's means); a variance is never negative
    D = np.full((7, 1), 0.1)
    assert column_variance(sp.csc_array(D))[0] == 0.0


@pytest.mark.parametrize("columns", [None, [3, 0, 5], [1]])
@pytest.mark.parametrize("chunk", [1024, 2])
def test_gram_columns_is_xt_x_of_the_columns_in_chunks(monkeypatch, columns, chunk):
    monkeypatch.setattr(sparse_module, "COLUMN_CHUNK", chunk)
    D = _data()
    picked = list(range(6)) if columns is None else columns
    expected = np.array([[D[:, f] @ D[:, g] for g in picked] for f in range(6)])
    for given in (D, sp.csc_array(D), sp.csr_array(D)):
        np.full((6, len(picked)), np.nan)  # what np.empty may hand out next: not a result
        out = gram_columns(given, columns)
        assert type(out) is np.ndarray and out.shape == (6, len(picked))
        np.testing.assert_allclose(out, expected, atol=1e-12)


def _reference_pearson(D, columns):
    """|corr| by its definition, column pair by column pair; 0 for a constant column."""
    def corr(f, g):
        a, b = D[:, f] - D[:, f].mean(), D[:, g] - D[:, g].mean()
        norm = np.sqrt((a @ a) * (b @ b))
        return 0.0 if norm == 0 else abs(a @ b) / norm
    return np.array([[corr(f, g) for g in columns] for f in range(D.shape[1])])


@pytest.mark.parametrize("columns", [None, [5, 1, 2]])
@pytest.mark.parametrize("container", [np.asarray, sp.csc_array])
def test_pearson_similarity_is_the_absolute_correlation(container, columns):
    D = _data()
    picked = list(range(6)) if columns is None else columns
    out = pearson_similarity(container(D), columns)
    np.testing.assert_allclose(out, _reference_pearson(D, picked), atol=1e-12)
    assert out.shape == (6, len(picked))


def test_a_negative_correlation_is_a_similarity_of_its_size():
    x = np.arange(10.0)
    D = np.column_stack([x, -2 * x + 1])
    for given in (D, sp.csc_array(D)):
        np.testing.assert_allclose(pearson_similarity(given), np.ones((2, 2)))


def test_standardized_columns_have_mean_0_and_variance_1_constant_ones_0():
    D = _data()
    out = standardized(D)
    for j in range(6):
        column = D[:, j]
        if np.all(column == column[0]):
            np.testing.assert_array_equal(out[:, j], 0.0)
        else:
            expected = (column - column.mean()) / np.sqrt(np.mean((column - column.mean()) ** 2))
            np.testing.assert_allclose(out[:, j], expected)


def test_sparse_correlations_are_found_without_densifying_the_data():
    # 20000 x 100 at 0.1 % density: 16 MB dense, 0.02 MB of values sparse
    X = sp.random_array((20000, 100), density=0.001, format="csc", rng=0)
    tracemalloc.start()
    try:
        pearson_similarity(X, [0, 1])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2e6, f"peak {peak / 1e6:.1f} MB"


def _blocks():
    """0: a; 1: 2a + 1 (|corr| 1 with 0); 2: b; 3: c (a, b, c independent draws)."""
    rng = np.random.default_rng(0)
    a, b, c = rng.normal(size=(3, 60))
    return np.column_stack([a, 2 * a + 1, b, c])


def test_a_feature_stays_blocked_by_every_feature_taken_before():
    # 0 blocks 1; 2 taken after it must not unblock 1
    order = decorrelated_order(_blocks(), np.array([0, 2, 1, 3]), 0.9, 3)
    np.testing.assert_array_equal(order, [0, 2, 3, 1])


def test_each_taken_feature_blocks_what_correlates_with_it_not_with_the_first_column():
    # 2 is taken first and blocks only itself; 0 is then free, and blocks 1
    order = decorrelated_order(_blocks(), np.array([2, 0, 1, 3]), 0.9, 3)
    np.testing.assert_array_equal(order, [2, 0, 3, 1])


def test_a_correlation_equal_to_the_threshold_is_allowed():
    # columns 0 and 1 are exactly uncorrelated (orthogonal, centred); 2 copies 0
    x, y = np.array([1.0, -1, 1, -1]), np.array([1.0, 1, -1, -1])
    X = np.column_stack([x, y, 2 * x])
    assert pearson_similarity(X, [0])[1, 0] == 0.0
    np.testing.assert_array_equal(decorrelated_order(X, np.array([0, 2, 1]), 0.0, 2),
                                  [0, 1, 2])


@pytest.mark.parametrize("n_features", [0, 2])
def test_the_order_keeps_its_integer_type(n_features):
    order = np.array([3, 0, 1, 2], dtype=np.int32)
    out = decorrelated_order(_blocks(), order, 0.9, n_features)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [3, 0, 1, 2])


@pytest.mark.parametrize("columns", [None, np.arange(0, 1500, 5)])
def test_the_similarity_is_the_one_large_array_a_call_allocates(columns):
    """tracemalloc's peak of a call: the (d, s) result, and the data's centred and scaled
    (n, d) copies, no second (d, s) array (its absolute value was one: twice the memory
    the feature groups' block declares)."""
    n, d = 40, 1500
    X = np.random.default_rng(0).random((n, d))
    s = d if columns is None else columns.size
    gc.collect()
    tracemalloc.start()
    try:
        pearson_similarity(X, columns)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 1.1 * 8 * (d * s + 2 * n * d + n * s)
