"""VCSDFS, variance-covariance subspace distance feature selection (Karami et al., 2023)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core.validation import Interval, check_value
from .base import Selector
from .udfs import has_converged, row_norm_scores


class VCSDFSResult(NamedTuple):
    W: np.ndarray  #: (d_varying, k) non-negative feature weights
    objective: list  #: the objective after every update


class VCSDFSUpdate(NamedTuple):
    """The two non-negative parts of the gradient: ``grad = 2 (descent_part - ascent_part)``
    is ``ascent_part`` the negative part's magnitude; the update multiplies W by
    ``(ascent_part / descent_part)^(1/4)``."""

    ascent_part: np.ndarray  #: ``(X'X)^2 W + rho W``
    descent_part: np.ndarray  #: ``X'X W W' X'X W + rho 1 1' W``


def vcsdfs_objective(X: np.ndarray, W: np.ndarray, rho: float) -> float:
    """``1/2 ||XX' - XWW'X'||_F^2 + rho (Tr(11'WW') - Tr(WW'))``, through n x n and
    k x k products (never d x d)."""
    XW = X @ W
    gap = X @ X.T - XW @ XW.T
    column_sums = W.sum(axis=0)
    return float(0.5 * np.einsum("ij,ij->", gap, gap)
                 + rho * (column_sums @ column_sums - np.einsum("ij,ij->", W, W)))


def gradient_parts(X: np.ndarray, W: np.ndarray, rho: float) -> VCSDFSUpdate:
    """The parts of the objective's gradient (:class:`VCSDFSUpdate`), through products
    with ``X`` (n, d): ``(X'X)^2 W = X'(XX')(XW)`` and ``X'XW W'X'XW = A (W'A)`` with
    ``A = X'XW``."""
    XW = X @ W
    A = X.T @ XW
    ascent = X.T @ (X @ A) + rho * W
    descent = A @ (W.T @ A) + rho * np.broadcast_to(W.sum(axis=0), W.shape)
    return VCSDFSUpdate(ascent, descent)


class VCSDFS(Selector):
    """VCSDFS: a subspace of k features that reproduces the data's inner products.

    Karami, S., Saberi-Movahed, F., Tiwari, P., Marttinen, P. & Vahdati, S. (2023).
    Unsupervised feature selection based on variance-covariance subspace distance.
    Neural Networks 166. With ``X`` (n, d) and ``W`` (d, k) non-negative, the paper
    solves

        min_{W >= 0} 1/2 ||XX' - XWW'X'||_F^2 + rho (Tr(1_d 1_d' W W') - Tr(W W'))

    (the variance-covariance subspace distance between X and its projection XW, and an
    inner-product regularizer that pushes the columns of W onto distinct features) by
    the multiplicative update

        W <- W * [((X'X)^2 W + rho W) / (X'X W W' X'X W + rho 1 1' W)]^(1/4).

    The score of feature i is ``||w_i||``; k = ``n_features_to_select``.

    Parameters
    ----------
    rho : float, default 1.0
        Weight of the inner-product regularizer (the paper tunes it over
        {1e-3, ..., 1e3}; 1 is the centre of that grid).
    max_iter : int, default 100
    tol : float, default 1e-6
        Stop when the objective changes by at most ``tol`` times its magnitude.

    Notes
    -----
    W starts uniform in [0, 1) (seeded by ``random_state``), as the authors' code.
    Every product goes through ``X``: no d x d matrix is formed (the authors' code forms
    ``(X'X)^2``). Constant features are left out and score -1. A zero denominator (a
    zero row of W) leaves that entry at 0.
    """

    name = "vcsdfs"
    display_name = "VCSDFS"

    def __init__(self, rho=1.0, max_iter=100, tol=1e-6):
        self.rho = check_value("rho", rho, Interval(float, 0, closed="neither"))
        self.max_iter = check_value("max_iter", max_iter, Interval(int, 1))
        self.tol = check_value("tol", tol, Interval(float, 0))

    def solve(self, X, *, n_components, random_state=0) -> VCSDFSResult:
        """Run the multiplicative updates on ``X`` (n, d) for ``n_components`` columns."""
        X = np.asarray(X, dtype=float)
        W = np.random.default_rng(random_state).random((X.shape[1], n_components))
        history = []
        for _ in range(self.max_iter):
            ascent, descent = gradient_parts(X, W, self.rho)
            ratio = np.divide(ascent, descent, out=np.zeros_like(W), where=descent > 0)
            W = W * ratio ** 0.25
            history.append(vcsdfs_objective(X, W, self.rho))
            if has_converged(history, self.tol):
                break
        return VCSDFSResult(W, history)

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        def fit_weights(X, constant):
            k = min(n_features_to_select, int((~constant).sum()))
            return self.solve(X[:, ~constant], n_components=k, random_state=random_state).W

        return row_norm_scores(X, fit_weights)
