"""Block conjugate gradients (:mod:`causefs.numerics.conjugate_gradients`) against a dense
solve (``np.linalg.solve``): each column solved to its tolerance from its own start, a
zero right-hand side solved by zero, every iterate lowering the quadratic, and ``None``
where the matrix is not positive definite or the iterations run out."""

import warnings

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


def test_columns_that_converge_early_stay_where_they_stopped():
    """A column solved at its start, and one that converges before the other, take no
    more steps: each ends where it would alone, with no warning of a 0/0 on the way.
    Eigenvalues spanning 10: CG converges in 23 steps, fewer than the 25 of exact
    arithmetic, and the counts are the same under every OpenBLAS kernel tried (Haswell,
    Sandybridge, Katmai, Nehalem); at a spread of 1e4 CG ran past 25 steps on rounding
    alone, and the counts (50 to 53) depended on the kernel."""
    A = spd(25, 7, spread=10.0)
    rng = np.random.default_rng(7)
    B = rng.standard_normal((25, 3))
    exact = np.linalg.solve(A, B)
    start = np.hstack([exact[:, :1], np.zeros((25, 1)),
                       exact[:, 2:] + 1e-7 * rng.standard_normal((25, 1))])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        alone = [block_conjugate_gradients(lambda V: A @ V, B[:, [j]], start[:, [j]],
                                           np.diag(A).copy(), 1e-9, 500)
                 for j in range(3)]
        X, iterations = block_conjugate_gradients(lambda V: A @ V, B, start,
                                                  np.diag(A).copy(), 1e-9, 500)
    assert np.array_equal(X[:, 0], start[:, 0]) and alone[0][1] == 0
    assert 0 < alone[2][1] < alone[1][1] == iterations
    for j in (1, 2):
        assert np.allclose(X[:, j], alone[j][0][:, 0], rtol=1e-7, atol=1e-12)


def test_an_integer_start_is_a_float_one():
    A = spd(6, 9)
    b = np.ones((6, 1))
    X, _ = block_conjugate_gradients(lambda V: A @ V, b, np.zeros((6, 1), dtype=int),
                                     np.diag(A).copy(), 1e-10, 100)
    assert X.dtype == float and np.allclose(X, np.linalg.solve(A, b), rtol=1e-6)


def test_a_diagonal_below_one_is_positive_and_a_zero_curvature_is_refused():
    A = spd(10, 8) * 1e-3  # every diagonal entry below 1
    b = np.ones((10, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X, _ = block_conjugate_gradients(lambda V: A @ V, b, np.zeros((10, 1)),
                                         np.diag(A).copy(), 1e-10, 200)
        assert np.allclose(X, np.linalg.solve(A, b), rtol=1e-6)
        # a zero on the diagonal: refused before any division by it
        assert block_conjugate_gradients(lambda V: A @ V, b, np.zeros((10, 1)),
                                         np.r_[np.diag(A)[:-1], 0.0], 1e-10, 200) == (None, 0)
        # positive semi-definite and singular: the first direction has zero curvature
        singular = np.diag([1.0, 0.0])
        assert block_conjugate_gradients(lambda V: singular @ V, np.array([[0.0], [1.0]]),
                                         np.zeros((2, 1)), np.ones(2), 1e-10, 10) == (None, 0)
