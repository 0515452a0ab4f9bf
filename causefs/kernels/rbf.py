"""Gaussian (RBF) MMD kernel with a median-heuristic bandwidth per treatment."""

from __future__ import annotations

import numpy as np

from ..core.parts import Cost
from ..core.validation import Interval, check_choice, check_value
from ..numerics.sparse import dense
from .base import BalanceOperator, GramBalance, Kernel, active_pairs

APPROXIMATIONS = ("auto", "exact", "rff")


def median_bandwidths(XV, mask, rng, n_pairs=2000):
    """Squared bandwidth ``s_r^2`` = median squared distance over each treatment's confounders.

    Estimated on ``n_pairs`` random sample pairs; a zero median falls back to the mean,
    a zero mean (constant confounders) to 1.
    """
    n = XV.shape[0]
    i = rng.integers(0, n, size=n_pairs)
    j = (i + rng.integers(1, n, size=n_pairs)) % n  # j != i
    D2 = ((XV[i] - XV[j]) ** 2) @ mask  # (pairs, T)
    s2 = np.median(D2, axis=0)
    mean = D2.mean(axis=0)
    s2 = np.where(s2 > 0, s2, np.where(mean > 0, mean, 1.0))
    return s2


def _restricted(full, XV, mask_r, compute):
    """``compute`` on the confounders of one treatment: directly on the kept columns, or
    as the all-columns result ``full`` minus the dropped columns, whichever is cheaper."""
    kept = np.flatnonzero(mask_r)
    dropped = np.flatnonzero(~mask_r)
    if dropped.size < kept.size:
        return full - compute(XV[:, dropped], dropped)
    return compute(XV[:, kept], kept)


class ExactRBFBalance(GramBalance):
    """Dense ``H = sum_r (a_r a_r') o exp(-||x_i[K_r] - x_j[K_r]||^2 / (2 s_r^2))``; O(n^2) memory."""

    def __init__(self, XV, AT, mask, s2):
        n = XV.shape[0]
        sq = lambda Z: (Z * Z).sum(axis=1)  # noqa: E731
        dist = lambda Z, _cols: sq(Z)[:, None] + sq(Z)[None, :] - 2.0 * (Z @ Z.T)  # noqa: E731
        full = dist(XV, None)
        H = np.zeros((n, n))
        for r in range(AT.shape[1]):
            D2 = np.maximum(_restricted(full, XV, mask[:, r], dist), 0.0)
            H += np.outer(AT[:, r], AT[:, r]) * np.exp(-D2 / (2.0 * s2[r]))
        super().__init__(H)


class RandomFeatureRBFBalance(BalanceOperator):
    """Random Fourier features (Rahimi and Recht 2007): ``H ~ Psi Psi'``, linear in n.

    ``Psi`` stacks ``a_r * sqrt(2/D) cos(Omega z^r / s_r + b)`` over treatments: an
    ``(n, |T| * D)`` array; products cost ``O(n |T| D)``.
    """

    def __init__(self, XV, AT, mask, s2, n_components, rng):
        n, dV = XV.shape
        Omega = rng.standard_normal((n_components, dV))
        offset = rng.uniform(0.0, 2.0 * np.pi, size=n_components)
        project = lambda Z, cols: Z @ Omega[:, cols].T  # noqa: E731
        full = project(XV, np.arange(dV))
        # filled block by block: stacking the blocks afterwards held Psi twice
        self._Psi = np.empty((n, AT.shape[1] * n_components))
        for r in range(AT.shape[1]):
            proj = _restricted(full, XV, mask[:, r], project) / np.sqrt(s2[r])
            self._Psi[:, r * n_components:(r + 1) * n_components] = (
                AT[:, r : r + 1] * np.sqrt(2.0 / n_components) * np.cos(proj + offset))

    def quad(self, v):
        c = self._Psi.T @ v
        return float(c @ c)

    def matvec(self, v):
        return self._Psi @ (self._Psi.T @ v)

    def dense(self):
        return self._Psi @ self._Psi.T

    def diagonal(self):
        return np.einsum("ij,ij->i", self._Psi, self._Psi)


class _EmptyBalance(BalanceOperator):
    def __init__(self, n):
        self.n = n

    def quad(self, v):
        return 0.0

    def matvec(self, v):
        return np.zeros(self.n)

    def dense(self):
        return np.zeros((self.n, self.n))

    def diagonal(self):
        return np.zeros(self.n)


class RBFKernel(Kernel):
    """Gaussian kernel ``exp(-||z - z'||^2 / (2 s_r^2))`` with ``s_r^2`` the median heuristic.

    Parameters
    ----------
    approximation : {"auto", "exact", "rff"}, default="auto"
        ``exact`` forms the dense n x n balance Hessian (``O(n^2 sum_r |K_r|)`` time);
        ``rff`` uses ``n_components`` random Fourier features per treatment (time and
        memory linear in n); ``auto`` is exact when the worst case, ``n^2 d^2 / 2``
        multiply-adds, is at most ``exact_budget``, rff otherwise (decided once per fit).
    n_components : int, default=50
        Random features per treatment (rank of each ``H_r`` approximation).
    exact_budget : float, default=2e10
        Cost threshold of ``auto``.
    n_pairs : int, default=2000
        Sample pairs for the median heuristic.
    """

    name = "rbf"
    accepts_sparse = True  # densifies the confounders' columns

    def __init__(self, approximation: str = "auto", n_components: int = 50,
                 exact_budget: float = 2e10, n_pairs: int = 2000):
        self.approximation = check_choice("approximation", approximation, APPROXIMATIONS)
        self.n_components = check_value("n_components", n_components, Interval(int, 1))
        self.exact_budget = check_value("exact_budget", exact_budget, Interval(float, 0))
        self.n_pairs = check_value("n_pairs", n_pairs, Interval(int, 1))

    def resolved_approximation(self, n: int, d: int) -> str:
        """``exact`` or ``rff``: what ``auto`` picks for n samples and d features.

        Decided from the sizes alone (the worst case, ``n^2 d^2 / 2`` multiply-adds), so
        that a fit keeps one kernel while its confounder sets change.
        """
        if self.approximation != "auto":
            return self.approximation
        return "exact" if float(n) ** 2 * d * d / 2 <= self.exact_budget else "rff"

    def balance_operator(self, X, coding, K, seed=0):
        V, T, mask = active_pairs(coding, K)
        if not T.size:
            return _EmptyBalance(X.shape[0])
        rng = np.random.default_rng(seed)
        XV, AT = dense(X[:, V]), coding[:, T]
        s2 = median_bandwidths(XV, mask.astype(float), rng, self.n_pairs)
        if self.resolved_approximation(*X.shape) == "exact":
            return ExactRBFBalance(XV, AT, mask, s2)
        return RandomFeatureRBFBalance(XV, AT, mask, s2, self.n_components, rng)

    def cost(self, size) -> Cost:
        """A product: with the dense (n, n) Gram, or with ``(n, |T| D)`` random features.

        Declared, exact: ``2 n^2`` flops and ``7 n^2`` floats; random features:
        ``4 n |T| D`` flops and ``n |T| D + 4 n D + 3 n d`` floats."""
        n, d, T = size.n_samples, size.n_features, size.n_treatments
        if self.resolved_approximation(n, d) == "exact":
            # H, all pairs' squared distances, and a treatment's distances, kernel and
            # outer product of its coding being made (measured: 6 n^2 at the peak)
            return Cost(flops=2.0 * n * n, memory={"balance_operator": 7 * n * n * 8},
                        advice={"balance_operator": "use kernel='linear' or random "
                                "features (kernel={'name': 'rbf', 'approximation': 'rff'})"})
        D = self.n_components
        # Psi (n, |T| D), a treatment's projections and cosines (n, D) being made, the
        # confounders' columns (n, d)
        return Cost(flops=4.0 * n * T * D,
                    memory={"balance_operator": (n * T * D + 4 * n * D + 3 * n * d) * 8},
                    advice={"balance_operator": "use fewer random features (kernel={'name': "
                            "'rbf', 'n_components': ...}) or kernel='linear'"})
