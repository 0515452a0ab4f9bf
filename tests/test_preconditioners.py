"""The subspace descent's preconditioners against dense inverses computed with numpy."""

import numpy as np
import pytest
import scipy.sparse as sp

from causefs.blocks.descent.embedding import subspace_descent
from causefs.numerics.anchors import choose_anchors
from causefs.numerics.preconditioners import anchor_preconditioner, jacobi_preconditioner
from causefs.testing import random_graph


def dense_system(graph, identity: float) -> np.ndarray:
    """``identity I + D - (G + G')/2`` written from the definition (docs/MODEL.md)."""
    sym = 0.5 * (graph + graph.T).toarray()
    return identity * np.eye(len(sym)) + np.diag(sym.sum(axis=1)) - sym


@pytest.mark.parametrize(("n", "m", "k", "identity"),
                         [(60, 8, 3, 1.0), (200, 20, 5, 0.01), (150, 7, 5, 100.0),
                          (40, 40, 4, 1.0)])
@pytest.mark.parametrize("seed", range(3))
def test_the_anchor_preconditioner_is_the_inverse_on_anchored_graphs(n, m, k, identity, seed):
    """On a graph whose columns all have their support in the anchors (every graph of an
    anchored fit), R -> P R is A^-1 R, A^-1 from numpy's dense solve (m = n: every
    sample an anchor, no sample eliminated)."""
    rng = np.random.default_rng(seed)
    anchors = choose_anchors(n, m, seed)
    graph = random_graph(rng, n, k, anchors)
    dense = dense_system(graph, identity)
    precondition = anchor_preconditioner(sp.csr_array(dense), anchors)
    R = rng.standard_normal((n, 4))
    np.testing.assert_allclose(precondition(R), np.linalg.solve(dense, R), rtol=1e-9,
                               atol=1e-9 * np.abs(np.linalg.solve(dense, R)).max())


def test_the_anchor_preconditioner_refuses_samples_coupled_outside_the_anchors():
    """An edge between two samples that are not anchors: the elimination would not be
    exact, so None (the caller falls back to Jacobi)."""
    rng = np.random.default_rng(0)
    anchors = choose_anchors(80, 10, 0)
    graph = random_graph(rng, 80, 4, anchors).tolil()
    others = np.setdiff1d(np.arange(80), anchors)
    graph[others[0], others[1]] = 0.3
    A = sp.csr_array(dense_system(sp.csc_array(graph), 1.0))
    assert anchor_preconditioner(A, anchors) is None
    # the same graph without that edge is accepted
    graph[others[0], others[1]] = 0.0
    assert anchor_preconditioner(sp.csr_array(dense_system(sp.csc_array(graph), 1.0)),
                                 anchors) is not None


def test_the_anchor_preconditioner_refuses_a_singular_system():
    """``L_G`` alone (no identity part) is singular: its Schur complement on the anchors
    is too, and the preconditioner is refused instead of amplifying rounding."""
    rng = np.random.default_rng(1)
    anchors = choose_anchors(100, 12, 1)
    graph = random_graph(rng, 100, 4, anchors)
    assert anchor_preconditioner(sp.csr_array(dense_system(graph, 0.0)), anchors) is None


def test_jacobi_divides_by_the_diagonal_and_leaves_non_positive_entries():
    diagonal = np.array([2.0, 0.0, 4.0, -1.0])
    R = np.arange(8.0).reshape(4, 2)
    expected = R / np.array([2.0, 1.0, 4.0, 1.0])[:, None]
    np.testing.assert_array_equal(jacobi_preconditioner(diagonal)(R), expected)


@pytest.mark.parametrize("seed", range(3))
def test_the_subspace_descent_reaches_the_ky_fan_minimum_with_the_anchor_preconditioner(seed):
    """With B = 0 the minimum of Tr(F'AF) over F'F = I is the sum of A's h smallest
    eigenvalues (numpy's eigvalsh); the exact preconditioner gets there in fewer steps
    than Jacobi on the same problem."""
    rng = np.random.default_rng(seed)
    n, h, identity = 400, 4, 0.05
    anchors = choose_anchors(n, 30, seed)
    # clustered samples linked to their nearest anchors, as an anchored fit's graphs
    X = rng.standard_normal((n, 2)) + 4.0 * rng.integers(0, h, n)[:, None]
    distances = ((X[:, None, :] - X[anchors][None, :, :]) ** 2).sum(axis=2)
    distances[anchors, np.arange(len(anchors))] = np.inf
    nearest = np.argsort(distances, axis=1)[:, :5]
    graph = sp.csc_array((np.full(5 * n, 0.2), anchors[nearest].ravel(),
                          np.arange(0, 5 * n + 1, 5)), shape=(n, n))
    dense = dense_system(graph, identity)
    L = dense - identity * np.eye(n)
    F, _ = np.linalg.qr(rng.standard_normal((n, h)))
    B = np.zeros((n, h))
    minimum = np.linalg.eigvalsh(dense)[:h].sum()
    steps = {}
    for name, precondition in [("anchors", anchor_preconditioner(sp.csr_array(dense), anchors)),
                               ("jacobi", jacobi_preconditioner(np.diag(dense)))]:
        for steps[name] in range(1, 500):
            F_sub = subspace_descent(lambda Z: L @ Z, precondition, B, F, steps[name], 0.0)
            if np.trace(F_sub.T @ dense @ F_sub) <= minimum * (1 + 1e-8):
                break
        assert np.trace(F_sub.T @ dense @ F_sub) == pytest.approx(minimum, rel=1e-8)
    assert steps["anchors"] < steps["jacobi"]
