"""The example plugin's pieces, found through its entry point, pass causefs.testing."""

import numpy as np
import pytest

from causefs import CauseFS
from causefs.plugins import available, get_block, get_term, make_kernel, make_qp_backend
from causefs.selectors import available_selectors, make_selector
from causefs.testing import check_block, check_kernel, check_qp_backend, check_term


def test_the_entry_point_registers_every_piece():
    assert "procrustes_embedding" in available("block")
    assert "ridge" in available("term")
    assert "laplace" in available("kernel")
    assert "osqp" in available("qp")
    assert {"procrustes", "elastic_net"} <= set(available("schedule"))
    assert "variance" in available_selectors()


def test_term_contract():
    """Its value against a sum written out, its W system and gradient against
    differences of its value."""
    def reference(state):
        return 0.3 * sum(w * w for w in state.W.ravel())

    check_term(get_term("ridge")(weight=0.3), reference)


# three iterations are enough to check the pieces are run, not to converge (the host
# project's test configuration turns an unexpected ConvergenceWarning into an error)
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_fit_with_the_term_by_name():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 1.0, size=(20, 6)) for c in (0.0, 4.0, 8.0)])
    est = CauseFS(n_clusters=3, schedule="elastic_net", max_iter=3, check="strict",
                  random_state=0).fit(X)
    assert {"name": "ridge", "weight": 0.1} in est.terms_
    ridge = [record["terms"]["ridge"] for record in est.trace_ if record["terms"]]
    assert ridge and ridge[-1] == pytest.approx(0.1 * np.sum(est.W_ ** 2))


def test_block_contract():
    check_block(get_block("procrustes_embedding")())


def test_kernel_contract():
    check_kernel(make_kernel("laplace"))


def test_qp_backend_contract():
    check_qp_backend(make_qp_backend("osqp"), rtol=1e-6)


# three iterations are enough to check the pieces are run, not to converge (the host
# project's test configuration turns an unexpected ConvergenceWarning into an error)
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_fit_with_every_piece_by_name():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 1.0, size=(20, 6)) for c in (0.0, 4.0, 8.0)])
    est = CauseFS(n_clusters=3, schedule="procrustes", kernel="laplace", qp="osqp",
                  max_iter=3, check="strict", random_state=0).fit(X)
    assert "procrustes_embedding" in {record["block"] for record in est.trace_}
    assert np.all(np.isfinite(est.scores_))


def test_variance_selector_ranks_by_variance():
    X = np.column_stack([np.zeros(10), np.arange(10.0), np.arange(10.0) % 2])
    ranking = make_selector("variance").ranking(X, n_clusters=2, n_features_to_select=2)
    assert list(ranking) == [1, 2, 0]


def test_the_laplace_kernel_matches_its_definition():
    rng = np.random.default_rng(1)
    X = rng.random((7, 3))
    coding = np.where(rng.random((7, 3)) < 0.5, 1.0, -1.0) / 7
    K = np.array([[False, True, True], [True, False, False], [False, False, False]])
    H = make_kernel("laplace").balance_operator(X, coding, K).dense()
    expected = np.zeros((7, 7))
    for r in range(3):
        if not K[:, r].any():
            continue
        Z = X[:, K[:, r]]
        L1 = np.abs(Z[:, None, :] - Z[None, :, :]).sum(axis=2)
        s = np.median(L1[np.triu_indices(7, 1)])
        expected += np.outer(coding[:, r], coding[:, r]) * np.exp(-L1 / s)
    np.testing.assert_allclose(H, expected, rtol=1e-12)
    with pytest.raises(ValueError, match="bandwidth_scale"):
        make_kernel("laplace", bandwidth_scale=0)
