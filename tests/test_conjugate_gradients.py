"""Block conjugate gradients (:mod:`causefs.numerics.conjugate_gradients`) against a dense
solve (``np.linalg.solve``): each column solved to its tolerance from its own start, a
zero right-hand side solved by zero, every iterate lowering the quadratic, and ``None``
where the matrix is not positive definite or the iterations run out."""

import numpy as np
import pytest

from causefs.numerics.conjugate_gradients import block_conjugate_gradients


def spd(d, seed=0, spread=1e3):
    """A symmetric positive definite matrix whose eigenvalues span ``spread``."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return (Q * np.geomspace(1.0, spread, d)) @ Q.T


def counted(A):
    calls = []

    def apply(V):
        calls.append(V.copy())
        return A @ V
    return apply, calls


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_column_meets_its_tolerance_against_the_dense_solve(seed):
    rng = np.random.default_rng(seed)
    A = spd(40, seed)
    B = rng.standard_normal((40, 3)) * np.array([1.0, 1e-3, 1e4])  # columns of any scale
    apply, _ = counted(A)
    X, iterations = block_conjugate_gradients(apply, B, np.zeros((40, 3)), np.diag(A).copy(),
                                              1e-10, 500)
    exact = np.linalg.solve(A, B)
    assert 0 < iterations <= 500
    residual = np.linalg.norm(B - A @ X, axis=0)
    assert np.all(residual <= 1e-10 * np.linalg.norm(B, axis=0))
    assert np.allclose(X, exact, rtol=1e-6, atol=0)


def test_a_start_at_the_solution_takes_no_iteration_and_a_zero_column_is_zero():
    A = spd(12, 3)
    rng = np.random.default_rng(3)
    B = rng.standard_normal((12, 2))
    B[:, 1] = 0.0
    start = np.linalg.solve(A, B)
    start[:, 1] = 5.0  # any start: a zero right-hand side is solved by zero
    apply, calls = counted(A)
    X, iterations = block_conjugate_gradients(apply, B, start, np.diag(A).copy(), 1e-8, 50)
    assert iterations == 0 and len(calls) == 1  # the start's residual only
    assert np.array_equal(X[:, 1], np.zeros(12))
    assert np.allclose(X[:, 0], start[:, 0], rtol=0, atol=1e-12)


def test_every_iterate_lowers_the_quadratic_from_the_start():
    """x'Ax - 2b'x never rises along the iterates (a warm start is never made worse):
    runs to tolerances ever smaller stop at ever later iterates."""
    A = spd(30, 4, spread=1e5)
    b = np.random.default_rng(4).standard_normal((30, 1))
    start = np.random.default_rng(5).standard_normal((30, 1))

    def quadratic(x):
        return float((x.T @ A @ x - 2 * b.T @ x)[0, 0])
    values, stops = [], []
    for rtol in np.geomspace(0.9, 1e-9, 25):
        X, iterations = block_conjugate_gradients(lambda V: A @ V, b, start,
                                                  np.diag(A).copy(), rtol, 1000)
        values.append(quadratic(X))
        stops.append(iterations)
    assert len(set(stops)) > 10  # the runs stop at many different iterates
    assert values[0] <= quadratic(start)
    assert all(later <= earlier + 1e-12 * abs(earlier)
               for earlier, later in zip(values, values[1:]))
    assert values[-1] == pytest.approx(quadratic(np.linalg.solve(A, b)), rel=1e-9)


def test_a_matrix_that_is_not_positive_definite_is_refused():
    A = np.diag([2.0, -1.0, 3.0])
    b = np.ones((3, 1))
    assert block_conjugate_gradients(lambda V: A @ V, b, np.zeros((3, 1)),
                                     np.abs(np.diag(A)), 1e-8, 50)[0] is None
    # a non-positive diagonal already shows it
    assert block_conjugate_gradients(lambda V: A @ V, b, np.zeros((3, 1)),
                                     np.diag(A).copy(), 1e-8, 50) == (None, 0)


def test_running_out_of_iterations_returns_none():
    A = spd(50, 6, spread=1e6)
    b = np.ones((50, 1))
    X, iterations = block_conjugate_gradients(lambda V: A @ V, b, np.zeros((50, 1)),
                                              np.diag(A).copy(), 1e-12, 3)
    assert X is None and iterations == 3
