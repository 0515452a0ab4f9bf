"""Laplacian algebra on sparse graphs against dense computations of its definition
(``L_A = D_A - (A + A')/2``, ``D_A`` the row sums of ``(A + A')/2``) and of the pairwise
form ``Tr(Y' L_A Y) = 1/2 sum_ij A_ij ||Y_i - Y_j||^2``, on asymmetric graphs (an
adaptive-neighbour graph is one), in one chunk and in many."""

import numpy as np
import pytest
import scipy.sparse as sp

import causefs.numerics.laplacian as laplacian
from causefs.numerics.laplacian import (column_sq_norms, laplacian_matmul, laplacian_matrix,
                                        laplacian_quadratic, symmetric_degree)


def graph(n=12, density=0.3, seed=0):
    """An asymmetric non-negative graph without self-loops (as every graph of a fit),
    with an empty row and an empty column."""
    A = sp.random(n, n, density=density, random_state=seed).toarray()
    np.fill_diagonal(A, 0.0)
    A[3, :] = 0.0
    A[:, 5] = 0.0
    return sp.csc_array(A)


def dense_laplacian(A):
    A = A.toarray()
    sym = (A + A.T) / 2
    return np.diag(sym.sum(axis=1)) - sym


def pairwise_form(A, Y):
    A = A.toarray()
    n = A.shape[0]
    return 0.5 * sum(A[i, j] * np.sum((Y[i] - Y[j]) ** 2) for i in range(n) for j in range(n))


def test_the_degree_is_the_diagonal_of_the_laplacian():
    A = graph()
    np.testing.assert_allclose(symmetric_degree(A), ((A + A.T) / 2).toarray().sum(axis=1))
    np.testing.assert_allclose(symmetric_degree(A), np.diag(dense_laplacian(A)))
    assert np.ptp(A.sum(axis=0) - A.sum(axis=1)) > 0  # the graph is not symmetric


def test_the_laplacian_matrix_and_product_follow_the_definition():
    A = graph()
    Y = np.random.default_rng(1).normal(size=(12, 3))
    L = laplacian_matrix(A)
    assert sp.issparse(L) and L.format == "csr"
    np.testing.assert_allclose(L.toarray(), dense_laplacian(A), atol=1e-15)
    np.testing.assert_allclose(laplacian_matmul(A, Y), dense_laplacian(A) @ Y, atol=1e-14)


FORMATS = [sp.csc_array, sp.csr_array, sp.coo_array, sp.csr_matrix, sp.lil_array]


@pytest.mark.parametrize("chunk", [2**21, 7, 1])
@pytest.mark.parametrize("sparse_format", FORMATS)
def test_the_quadratic_form_is_the_pairwise_sum_in_any_chunks(monkeypatch, chunk,
                                                              sparse_format):
    # CHUNK_ELEMENTS bounds the (entries x columns) temporary; 7 elements of 3 columns
    # is 2 entries a chunk, 1 is one entry a chunk (the max(1, ...) floor). Every sparse
    # format gives the same sum (the compressed ones are read as they are)
    monkeypatch.setattr(laplacian, "CHUNK_ELEMENTS", chunk)
    A = sparse_format(graph())
    Y = np.random.default_rng(2).normal(size=(12, 3))
    expected = pairwise_form(sp.csc_array(A), Y)
    assert expected == pytest.approx(np.trace(Y.T @ dense_laplacian(sp.csc_array(A)) @ Y))
    assert laplacian_quadratic(A, Y) == pytest.approx(expected, rel=1e-12)
    assert laplacian_quadratic(A, Y[:, :0]) == 0.0  # no columns: nothing to sum


@pytest.mark.parametrize("sparse_format", [sp.csc_array, sp.csr_array, sp.csr_matrix])
def test_a_compressed_graph_is_summed_as_it_is_without_a_conversion(monkeypatch,
                                                                   sparse_format):
    # a conversion's checks cost more than the sum on the small graphs of a fit
    A = sparse_format(graph(seed=4))

    def no_conversion(*args, **kwargs):
        raise AssertionError("converted")

    monkeypatch.setattr(laplacian.sp, "coo_array", no_conversion)
    Y = np.random.default_rng(5).normal(size=(12, 2))
    assert laplacian_quadratic(A, Y) == pytest.approx(pairwise_form(A, Y), rel=1e-12)


def test_column_norms_are_the_dense_columns_norms():
    A = graph(seed=3)
    np.testing.assert_allclose(column_sq_norms(A), (A.toarray() ** 2).sum(axis=0))
    np.testing.assert_allclose(column_sq_norms(sp.csr_array(A)),
                               (A.toarray() ** 2).sum(axis=0))
    wide = sp.csc_array(np.array([[0.0, 2.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]))
    np.testing.assert_array_equal(column_sq_norms(wide), [1.0, 4.0, 0.0, 0.0])
