"""The thresholds of :mod:`causefs.numerics.nuisance_effects` at their bounds: what a
feature that Z or the clusters explain to exactly the documented fraction gets, and a
Z effect smaller than noise where its squares underflow.

A tie with a relative bound such as ``total <= 1e-8 * scale`` is reached exactly in the
subnormal range: a product below ``2^-1022`` is rounded to a whole multiple of
``u = 2^-1074``, so data ``a_i 2^-537`` with integer ``a_i < 2^26`` have exact squares
``a_i^2 u`` and the bound ``1e-8 * S`` rounds to a whole number of u, which the data are
chosen to meet. The rounding of a basis the library computes (LAPACK's) then moves the
squares by far less than half a u, so the sums are the exact ones (docs/MUTATION.md:
a tie is reached, not pinned to a BLAS)."""

import numpy as np
import pytest

from causefs.numerics.nuisance_effects import (
    RANK_RTOL,
    _orthonormal_design,
    cluster_pvalues,
    nuisance_regression,
    variance_share,
)

UNIT = 2.0**-1074
STEP = 2.0**-537  # an integer a times STEP squares to a^2 UNIT, exactly


def tied_column(k=3360, below=0):
    """Four values ``(a + k, a + k, a - k, a - k) 2^-537`` with ``a = 10^4 k - below``:
    their centred sum of squares ``4 k^2 u`` is ``RANK_RTOL`` times their sum of squares
    ``4 (a^2 + k^2) u`` rounded to a whole u (for ``below = 0``: the product is
    ``4 k^2 (1 + 1e-8) u`` within 1e-16), and a below that lowers the bound."""
    a = 10_000 * k - below
    return (a + np.array([k, k, -k, -k], dtype=float)) * STEP


def test_the_tied_column_reaches_the_bound_exactly():
    """The premise of the tests below, computed here from the definitions: the centred
    sum of squares of the tied column is ``RANK_RTOL`` times its sum of squares, to the
    bit; two steps below the bound is lower by several u."""
    for below, tie in ((0, True), (2, False)):
        x = tied_column(below=below)
        squares = float(np.sum(x * x))
        centred = float(np.sum((x - np.sum(x) / 4) ** 2))
        assert centred == 4 * 3360**2 * UNIT
        assert (centred == RANK_RTOL * squares) is tie
        assert tie or centred > RANK_RTOL * squares


def test_a_feature_at_the_bound_counts_as_constant_in_the_variance_share():
    """``variance_share`` is 0 for a feature whose centred sum of squares is at most
    RANK_RTOL times its sum of squares (constant up to round-off), here exactly that,
    though Z = (1, 1, -1, -1) explains all of its variation; just above, all of it."""
    Z = np.array([[1.0], [1.0], [-1.0], [-1.0]])
    X = np.column_stack([tied_column(), tied_column(below=2)])
    share = variance_share(X, Z)
    assert share[0] == 0.0
    assert share[1] == pytest.approx(1.0, abs=1e-6)


def test_a_feature_at_the_bound_counts_as_constant_in_the_cluster_test():
    """``cluster_pvalues`` gives 1 to a feature whose residual sum of squares on
    ``[1, Z]`` is at most RANK_RTOL times its sum of squares, here exactly that, though
    the clusters (0, 0, 1, 1) carry all of its variation; just above, p = 0."""
    X = np.column_stack([tied_column(), tied_column(below=2)])
    p = cluster_pvalues(X, np.zeros((4, 0)), np.array([0, 0, 1, 1]))
    assert p.tolist() == [1.0, 0.0]


def test_a_feature_the_clusters_explain_to_the_bound_has_p_zero():
    """The clusters explain a feature exactly (p = 0) when the residual sum of squares
    beside them, rss1, is at most 1e-12 of the one without them, rss0 (and of the
    smallest normal number, ``tiny = 2^52 u``, where rss0 is smaller: the bound is then
    ``1e-12 tiny``, 4504 u once rounded). Three clusters of two samples, no Z, values
    ``(m_c + r_c, m_c - r_c) 2^-537`` with means m = (10000, -3000, -7000) summing to 0:
    ``rss0 = 2 sum(m^2 + r^2) u`` (below tiny) and ``rss1 = 2 sum(r^2) u``, which
    r = (2, 22, 42) makes 4504 u, the bound (p = 0); r = (2, 22, 43) makes 4674 u above
    it, and p is the partial F test's: F on (2, 3) degrees of freedom."""
    from scipy.stats import f as f_distribution

    means = np.array([10000.0, -3000.0, -7000.0])
    labels = np.repeat([0, 1, 2], 2)

    def column(r):
        return np.column_stack([means + r, means - r]).ravel() * STEP

    tied, above = np.array([2.0, 22.0, 42.0]), np.array([2.0, 22.0, 43.0])
    assert 2 * np.sum(tied**2) * UNIT == 1e-12 * np.finfo(float).tiny  # the tie
    X = np.column_stack([column(tied), column(above)])
    assert np.all(np.sum(X * X, axis=0) < np.finfo(float).tiny)
    p = cluster_pvalues(X, np.zeros((6, 0)), labels)
    assert p[0] == 0.0
    rss1 = 2 * np.sum(above**2)
    F = (2 * np.sum(means**2) / 2) / (rss1 / 3)  # (rss0 - rss1) / df1 over rss1 / df2
    assert p[1] == pytest.approx(f_distribution.sf(F, 2, 3), rel=1e-6)


def test_a_design_direction_at_the_rank_bound_is_dropped(monkeypatch):
    """Directions of ``[1, design]`` whose singular value is at most RANK_RTOL times the
    largest are not identified and dropped: ``[1, t (1, -1, 1, -1)]`` (n = 4) has the
    orthogonal columns of norms 2 and 2t, so its exact SVD is ``U = [1, (1, -1, 1, -1)] /
    2``, ``s = (2, 2t)``, ``V = I``, all exact binary fractions: given that SVD (LAPACK's
    rounds), t = 1e-8 puts ``s_2 = 2e-8`` exactly on the bound and one ulp more above
    it."""
    def exact_svd(columns, full_matrices=True):
        signs = np.array([1.0, -1.0, 1.0, -1.0])
        assert np.array_equal(columns[:, 0], np.ones(4))
        t = columns[0, 1]
        assert np.array_equal(columns[:, 1], t * signs)
        U, s = np.column_stack([np.ones(4), signs]) / 2, np.array([2.0, 2.0 * t])
        Vt = np.eye(2)
        assert np.array_equal((U * s) @ Vt, columns) and np.array_equal(U.T @ U, np.eye(2))
        return U, s, Vt

    monkeypatch.setattr(np.linalg, "svd", exact_svd)
    signs = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    assert 2.0 * 1e-8 == RANK_RTOL * 2.0
    assert _orthonormal_design(1e-8 * signs, 4).shape == (4, 1)
    above = _orthonormal_design(np.nextafter(1e-8, 1.0) * signs, 4)
    assert np.array_equal(above, np.column_stack([np.ones(4), signs[:, 0]]) / 2)


def test_an_effect_whose_squares_underflow_is_no_larger_than_noise():
    """A feature's Z coefficient is kept, shrunk by ``1 - 1/F``, only where its F
    statistic exceeds 1. Here Z's share of the feature is ``1e-170 z``, whose sum of
    squares (1e-340) underflows to 0 beside a residual of sum 2 on 6 degrees of
    freedom: F is about 1e-340, and the coefficient is 0, not the unshrunk least-squares
    1e-170. (The factor is then the bound of the division guard, never memory the
    division leaves unset: the residual's share on the same features is below 1.)"""
    z = np.array([1.0, -1.0, 0, 0, 0, 0, 0, 0])
    residual = np.array([0, 0, 1.0, -1.0, 0, 0, 0, 0])
    X = np.column_stack([residual + 1e-170 * z, residual + 0.5 * z])
    unshrunk = nuisance_regression(X, z[:, None], shrink=False)
    assert unshrunk[0, 0] == pytest.approx(1e-170, rel=1e-9, abs=0)
    Theta = nuisance_regression(X, z[:, None])
    assert Theta[0, 0] == 0.0
    # the ordinary feature: F = (0.5^2 * 2 / 1) / (2 / 6) = 1.5, shrunk by 1 - 1/F
    assert Theta[0, 1] == pytest.approx(0.5 * (1.0 - 1.0 / 1.5), rel=1e-9)
