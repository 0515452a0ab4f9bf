"""scipy.sparse input: the fit keeps sparse data sparse where it only multiplies by them,
and gives the fit of the same data held dense (up to rounding)."""

import numpy as np
import pytest
import scipy.sparse as sp

import causefs.engine as engine
from causefs import CauseFS
from causefs.blocks import Block
from causefs.numerics.correlation import pearson_similarity
from causefs.core.schedule import Schedule
from causefs.model.treatments import treatment_coding
from causefs.numerics.scaling import scale_features
from causefs.numerics.sparse import (column_nonzeros, column_squares, column_variance,
                                     gram_columns)

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)


def _text_like(n=90, d=200, density=0.05, seed=0):
    """Non-negative sparse data with three groups of samples using different columns."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="lil",
                  data_rvs=rng.random)
    for c in range(3):
        rows = np.arange(c, n, 3)
        X[rows[:, None], np.arange(10 * c, 10 * c + 10)] = 1.0 + rng.random((rows.size, 10))
    return X.tocsr()


@pytest.fixture
def problems(monkeypatch):
    """The data of every problem the engine builds (to see what the blocks got)."""
    seen = []
    make = engine.make_problem

    def spy(X, *args, **kwargs):
        seen.append(X)
        return make(X, *args, **kwargs)

    monkeypatch.setattr(engine, "make_problem", spy)
    return seen


@pytest.mark.parametrize("schedule", ["full", "ablation_I", "ablation_II"])
@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array, sp.csc_array])
def test_a_sparse_fit_is_the_dense_fit_and_stays_sparse(problems, schedule, container):
    X = _text_like()
    params = dict(n_clusters=3, max_iter=3, tol=0.0, random_state=0, schedule=schedule,
                  memory_limit=None)
    sparse_fit = CauseFS(**params).fit(container(X))
    assert sp.issparse(problems[-1])  # the blocks saw sparse data
    dense_fit = CauseFS(**params).fit(X.toarray())
    assert not sp.issparse(problems[-1])
    np.testing.assert_allclose(sparse_fit.objective_history_, dense_fit.objective_history_,
                               rtol=1e-5)
    np.testing.assert_allclose(sparse_fit.scores_, dense_fit.scores_, rtol=1e-4,
                               atol=1e-6 * dense_fit.scores_.max())
    top = np.argsort(dense_fit.ranking_)[:20]
    assert len(set(top) & set(np.argsort(sparse_fit.ranking_)[:20])) >= 19


class _DenseOnly(Block):
    """A plugin block that never said it handles sparse data."""

    name = "dense_only_probe"
    kind = "structural"
    reads = ("X",)
    writes = ()

    def step(self, state):
        assert isinstance(state.X, np.ndarray)
        return state


def test_a_part_that_does_not_accept_sparse_data_gets_them_dense(problems):
    X = _text_like()
    full = engine.resolve_schedule("full")
    schedule = Schedule("probe", full.init, (*full.loop, _DenseOnly()))
    CauseFS(n_clusters=3, max_iter=1, schedule=schedule, memory_limit=None).fit(X)
    assert isinstance(problems[-1], np.ndarray)
    CauseFS(n_clusters=3, max_iter=1, schedule="dwr", memory_limit=None).fit(X)
    assert isinstance(problems[-1], np.ndarray)  # DWR's weights need dense data


@pytest.mark.parametrize("method, stays_sparse", [("minmax", True), ("none", True),
                                                  ("standard", False)])
def test_scaling_keeps_zeros_at_zero_or_densifies(method, stays_sparse):
    X = _text_like().tolil()
    X[:, 5] = 0.0  # a constant column
    X = X.tocsr()
    scaled = scale_features(X, method)
    assert sp.issparse(scaled) == stays_sparse
    reference = scale_features(X.toarray(), method)
    np.testing.assert_allclose(scaled.toarray() if stays_sparse else scaled, reference,
                               atol=1e-12)


def test_minmax_shifts_a_column_whose_minimum_is_not_zero_and_stays_sparse():
    """A word in every document (minimum above 0) and a column of negative values are
    shifted as dense data are (scikit-learn's MinMaxScaler), storing their zeros; the
    other columns keep theirs, and X stays sparse."""
    from sklearn.preprocessing import MinMaxScaler

    X = _text_like().tolil()
    X[:, 7] = 2.0 + X[:, 7].toarray()  # every entry non-zero: its minimum is 2
    X[0, 7] = 2.0
    X[1, 9] = -0.5  # a negative value: the zeros of column 9 become 0.5 / range
    X[:, 5] = 0.0  # a constant column
    X = X.tocsr()
    scaled = scale_features(X, "minmax")
    assert sp.issparse(scaled)
    reference = MinMaxScaler().fit_transform(X.toarray())
    np.testing.assert_allclose(scaled.toarray(), reference, rtol=1e-12, atol=1e-14)
    stored = column_nonzeros(scaled)
    n = X.shape[0]
    assert stored[7] == n - np.count_nonzero(X[:, [7]].toarray() == 2.0)  # its minimum is 0
    assert stored[9] == n - 1  # the minimum, -0.5, became 0
    np.testing.assert_array_equal(np.delete(stored, [7, 9]),
                                  np.count_nonzero(np.delete(reference, [7, 9], axis=1), 0))


@pytest.mark.parametrize("n_shifted, stays_sparse", [(3, True), (4, False)])
def test_minmax_densifies_where_shifted_columns_fill_more_than_a_third(n_shifted,
                                                                      stays_sparse):
    """The shifted columns' cells all count as stored: 3 full columns of 10 and one entry
    are less than a third of the cells (sparse), 4 are more (dense: CSC would take more
    than half the memory)."""
    from sklearn.preprocessing import MinMaxScaler

    rng = np.random.default_rng(0)
    X = np.zeros((30, 10))
    X[:, :n_shifted] = 1.0 + rng.random((30, n_shifted))  # minima above 0, no zeros
    X[0, n_shifted] = 1.0  # a zero minimum: divided by its maximum, one entry stored
    scaled = scale_features(sp.csr_array(X), "minmax")
    assert sp.issparse(scaled) == stays_sparse
    np.testing.assert_allclose(scaled.toarray() if stays_sparse else scaled,
                               MinMaxScaler().fit_transform(X), rtol=1e-12, atol=1e-14)


def test_a_fit_of_sparse_data_with_a_word_in_every_document_stays_sparse(problems):
    """One column without a zero no longer densifies X: the blocks get it sparse, and
    the fit is the fit of the same data held dense (up to rounding)."""
    X = _text_like().tolil()
    X[:, 3] = 0.5 + X[:, 3].toarray()  # in every document
    X = X.tocsr()
    params = dict(n_clusters=3, max_iter=3, tol=0.0, random_state=0, memory_limit=None)
    sparse_fit = CauseFS(**params).fit(X)
    assert sp.issparse(problems[-1])
    column = X[:, [3]].toarray()
    # shifted: its entries above its minimum stay non-zero (its zeros in X were 0.5)
    assert column_nonzeros(problems[-1])[3] == np.count_nonzero(column > column.min()) > 0
    dense_fit = CauseFS(**params).fit(X.toarray())
    np.testing.assert_allclose(sparse_fit.objective_history_, dense_fit.objective_history_,
                               rtol=1e-5)
    np.testing.assert_allclose(sparse_fit.scores_, dense_fit.scores_, rtol=1e-4,
                               atol=1e-6 * dense_fit.scores_.max())


def test_sparse_helpers_equal_their_dense_definitions():
    X = _text_like().tocsc()
    D = X.toarray()
    np.testing.assert_allclose(column_variance(X), D.var(axis=0), atol=1e-12)
    np.testing.assert_allclose(gram_columns(X, [3, 1, 40]), D.T @ D[:, [3, 1, 40]])
    for data in (X, sp.csr_array(X), D):
        np.testing.assert_allclose(column_squares(data), (D**2).sum(axis=0), rtol=1e-12)
        np.testing.assert_array_equal(column_nonzeros(data), (D != 0).sum(axis=0))
    assert (D != 0).sum(axis=0).min() < (D != 0).sum(axis=0).max()  # counts that differ
    np.testing.assert_allclose(treatment_coding(X), treatment_coding(D))
    columns = [0, 5, 33]
    reference = np.abs(np.nan_to_num(np.corrcoef(D, rowvar=False)))[:, columns]
    np.testing.assert_allclose(pearson_similarity(X, columns), reference, atol=1e-10)
    np.testing.assert_allclose(pearson_similarity(X), pearson_similarity(D), atol=1e-10)


def test_sparse_data_with_nan_are_refused():
    X = _text_like()
    X.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        CauseFS(n_clusters=3).fit(X)
