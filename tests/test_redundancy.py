"""The redundancy-aware selection rule (max_correlation): the greedy order against a
case worked by hand, and the estimator's ranking with it."""

import numpy as np
import pytest

from causefs import CauseFS
from causefs.numerics.correlation import decorrelated_order

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)


def test_decorrelated_order_by_hand():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=50), rng.normal(size=50)
    # 0 and 1 are copies of a (corr 1), 2 is -a (|corr| 1), 3 is b, 4 is a + b
    # (|corr| with a and with b about 0.7), 5 is constant
    X = np.column_stack([a, 2 * a + 1, -a, b, a + b, np.ones(50)])
    order = np.array([0, 1, 2, 4, 3, 5])
    # 0 taken; 1, 2 blocked by it; 4: corr(a, a+b) ~ 0.7 > 0.6 blocked; 3 taken; then
    # 5 (constant: correlates 0) taken; the passed-over follow in order
    np.testing.assert_array_equal(decorrelated_order(X, order, 0.6, 3), [0, 3, 5, 1, 2, 4])
    # a looser threshold keeps a + b
    np.testing.assert_array_equal(decorrelated_order(X, order, 0.9, 3), [0, 4, 3, 1, 2, 5])
    # one block only: the passed-over fill the selection by order
    np.testing.assert_array_equal(decorrelated_order(X[:, :3], [0, 1, 2], 0.5, 2), [0, 1, 2])


def test_estimator_spreads_its_selection_over_blocks():
    rng = np.random.default_rng(1)
    labels = np.repeat(np.arange(3), 30)
    signal = np.eye(3)[labels] * 3.0
    # cluster 0's indicator copied 12 times (one block), clusters 1 and 2 once each
    X = np.hstack([np.repeat(signal[:, :1], 12, axis=1), signal[:, 1:]])
    X = X + rng.normal(scale=0.4, size=X.shape)
    est = CauseFS(n_clusters=3, n_features_to_select=3, max_correlation=0.8,
                  random_state=0, max_iter=5).fit(X)
    selected = np.flatnonzero(est.support_)
    corr = np.abs(np.corrcoef(X[:, selected].T))
    assert corr[np.triu_indices(3, 1)].max() <= 0.8
    assert sorted(est.ranking_) == list(range(1, X.shape[1] + 1))
    plain = CauseFS(n_clusters=3, n_features_to_select=3, random_state=0, max_iter=5).fit(X)
    np.testing.assert_array_equal(est.scores_, plain.scores_)


@pytest.mark.parametrize("value", [0, 1, 1.5, -0.1])
def test_max_correlation_out_of_range_is_refused(value):
    with pytest.raises(ValueError, match="max_correlation"):
        CauseFS(max_correlation=value).fit(np.random.default_rng(0).random((10, 4)))
