"""The projection onto the scaled simplex against its definition, solved here by bisection:
``x = max(v - theta, 0)`` with the ``theta`` at which ``sum(x) = total`` (the sum falls
strictly with theta above max(v) - total and below max(v))."""

import numpy as np
import pytest

from causefs.numerics.simplex import project_simplex


def projection_by_bisection(v: np.ndarray, total: float) -> np.ndarray:
    low, high = v.max() - total, v.max()  # sum >= total at low, 0 at high
    for _ in range(200):
        theta = (low + high) / 2
        if np.maximum(v - theta, 0).sum() > total:
            low = theta
        else:
            high = theta
    return np.maximum(v - (low + high) / 2, 0)


@pytest.mark.parametrize("total", [1.0, 0.25, 7.0])
@pytest.mark.parametrize("seed", range(6))
def test_projection_is_the_threshold_of_the_definition(seed, total):
    rng = np.random.default_rng(seed)
    v = rng.normal(scale=[0.1, 1.0, 5.0][seed % 3], size=1 + 3 * seed)
    x = project_simplex(v, total)
    assert np.allclose(x, projection_by_bisection(v, total), atol=1e-10)
    assert x.min() >= 0 and x.sum() == pytest.approx(total)


def test_rows_of_a_matrix_are_projected_each_on_its_own():
    rng = np.random.default_rng(7)
    V = rng.normal(size=(5, 8)) * np.array([[0.01], [0.1], [1.0], [10.0], [100.0]])
    X = project_simplex(V, 2.0)
    for v, x in zip(V, X):
        assert np.allclose(x, projection_by_bisection(v, 2.0), atol=1e-9)


@pytest.mark.parametrize("v, total, expected", [
    ([0.2, 0.3, 0.5], 1.0, [0.2, 0.3, 0.5]),      # already on the simplex: unchanged
    ([1.0, 1.0, 1.0], 1.0, [1 / 3, 1 / 3, 1 / 3]),  # ties: shared equally
    ([3.0, 0.0, -2.0], 1.0, [1.0, 0.0, 0.0]),     # one coordinate carries the total
    ([0.5, 0.5, -9.0], 2.0, [1.0, 1.0, 0.0]),     # theta = -0.5: v - theta on the support
    ([5.0], 3.0, [3.0]),                          # a single coordinate is the total
])
def test_corner_cases_by_hand(v, total, expected):
    assert np.allclose(project_simplex(np.array(v), total), expected, atol=1e-12)


def test_integers_are_projected_as_floats():
    x = project_simplex(np.array([2, 0, 0]), 1.0)
    assert x.dtype == np.float64 and np.allclose(x, [1.0, 0.0, 0.0])


def test_booleans_are_projected_as_numbers():
    """A mask given as weights: read as 0/1 numbers (a boolean array cannot be negated,
    which the sort by decreasing value would need)."""
    assert np.allclose(project_simplex(np.array([True, False, True]), 1.0), [0.5, 0.0, 0.5])


def test_the_default_total_is_one():
    assert project_simplex(np.array([0.3, 2.0, -1.0])).sum() == pytest.approx(1.0)
