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
