"""FSDK, fast sparse discriminative k-means feature selection (Nie et al., TNNLS 2023)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core.validation import Interval, check_value
from ..numerics.scaling import constant_features
from .base import Selector
from .udfs import ROW_NORM_FLOOR, row_norm_scores


class FSDKResult(NamedTuple):
    W: np.ndarray  #: (d_varying, c) feature weights over the non-constant features
    labels: np.ndarray  #: (n,) the discrete cluster assignment Y
    objective: list  #: ||XW + 1b' - G||^2 + gamma sum_j ||w_j||^p per outer iteration


def scaled_indicator(labels: np.ndarray, n_clusters: int) -> np.ndarray:
    """``G = Y (Y'Y)^-1/2`` (n, c); an empty cluster's column is 0."""
    Y = np.eye(n_clusters)[labels]
    sizes = Y.sum(axis=0)
    return Y / np.sqrt(np.where(sizes > 0, sizes, 1.0))


def _cluster_terms(sums: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``m_k / sqrt(n_k)`` per cluster (0 for an empty one): Tr(G'M) is their sum."""
    return np.divide(sums, np.sqrt(sizes), out=np.zeros_like(sums), where=sizes > 0)


def reassign_rows(M: np.ndarray, labels: np.ndarray, max_sweeps: int = 10) -> np.ndarray:
    """Coordinate ascent of ``Tr(G'M)`` over the discrete assignment (the paper's Y step).

    Each row moves to the cluster with the largest increase of ``Tr(G'M)`` (its own
    cluster when no move increases it), updating the cluster sizes and sums as it goes;
    sweeps stop when no row moves. Returns the new labels (a copy).
    """
    n, c = M.shape
    labels = labels.copy()
    sizes = np.bincount(labels, minlength=c).astype(float)
    sums = np.array([M[labels == k, k].sum() for k in range(c)])
    for _ in range(max_sweeps):
        moved = False
        for i in range(n):
            own, row = labels[i], M[i]
            current = _cluster_terms(sums, sizes)
            gain = _cluster_terms(sums + row, sizes + 1) - current
            gain[own] = current[own] - _cluster_terms(sums[own:own + 1] - row[own],
                                                      sizes[own:own + 1] - 1)[0]
            best = int(np.argmax(gain))
            if best != own and gain[best] > gain[own]:
                sizes[own] -= 1
                sums[own] -= row[own]
                sizes[best] += 1
                sums[best] += row[best]
                labels[i] = best
                moved = True
        if not moved:
            break
    return labels


def weights_step(X: np.ndarray, G: np.ndarray, reweights: np.ndarray, gamma: float):
    """``W = (X'X + gamma U)^-1 X'G`` for centred ``X`` (n, d) and ``U = diag(reweights)``.

    With d > n the same matrix is computed as ``U^-1 X' (X U^-1 X' + gamma I)^-1 G``
    (the push-through identity), an n x n system instead of a d x d one.
    """
    n, d = X.shape
    if d <= n:
        return np.linalg.solve(X.T @ X + gamma * np.diag(reweights), X.T @ G)
    scaled = X / reweights
    return scaled.T @ np.linalg.solve(scaled @ X.T + gamma * np.eye(n), G)


def lp_reweights(W: np.ndarray, p: float) -> np.ndarray:
    """``U_jj = (p/2) ||w_j||^(p-2)``, the reweighting that majorizes ``||W||_2,p^p``
    (row norms floored at :data:`~.udfs.ROW_NORM_FLOOR`)."""
    return 0.5 * p * np.maximum(np.linalg.norm(W, axis=1), ROW_NORM_FLOOR) ** (p - 2.0)


class FSDK(Selector):
    """FSDK: feature selection embedded in discriminative k-means.

    Nie, F., Ma, Z., Wang, J. & Li, X. (2023). Fast Sparse Discriminative K-Means for
    Unsupervised Feature Selection. IEEE TNNLS. With ``X`` (n, d) centred, the discrete
    cluster indicator ``Y`` (n, c) and ``G = Y (Y'Y)^-1/2``, the paper solves

        min_{W, b, Y} ||X W + 1 b' - G||_F^2 + gamma ||W||_2,p^p

    by alternating: ``b = G'1 / n``, ``W = (X'X + gamma U)^-1 X'G`` with
    ``U_jj = (p/2) ||w_j||^(p-2)`` (one reweighted step an iteration, ``U = I`` at the
    start), and the Y step, which with ``||G||_F^2 = c`` fixed maximizes
    ``Tr(G'M)``, ``M = XW + 1b'``, one row at a time (:func:`reassign_rows`). The score
    of feature j is ``||w_j||``.

    Parameters
    ----------
    gamma : float, default 100.0
        Weight of the sparsity term (the authors' code's default; their paper tunes it).
    p : float in (0, 2], default 1.0
        The row-norm exponent (1: the convex l2,1 norm; the authors' default).
    max_iter : int, default 30
        Outer iterations (the authors' 30).
    assignment_iter : int, default 20
        Y steps an outer iteration (the authors' 20): each is one :func:`reassign_rows`.
    tol : float, default 1e-3
        Stop when the objective changes by at most ``tol`` (absolute, as the authors').

    Notes
    -----
    Y starts as a seeded uniformly random assignment (the authors' default
    initialization; ``random_state`` seeds it). Constant features are left out (after
    centring they are 0 columns) and score -1. An empty cluster's column of ``G`` is 0
    and adds nothing to ``Tr(G'M)``. With d > n the W step solves an n x n system
    (:func:`weights_step`).
    """

    name = "fsdk"
    display_name = "FSDK"
    depends_on_count = False

    def __init__(self, gamma=100.0, p=1.0, max_iter=30, assignment_iter=20, tol=1e-3):
        self.gamma = check_value("gamma", gamma, Interval(float, 0, closed="neither"))
        self.p = check_value("p", p, Interval(float, 0, 2, closed="right"))
        self.max_iter = check_value("max_iter", max_iter, Interval(int, 1))
        self.assignment_iter = check_value("assignment_iter", assignment_iter,
                                           Interval(int, 1))
        self.tol = check_value("tol", tol, Interval(float, 0))

    def solve(self, X, *, n_clusters, random_state=0) -> FSDKResult:
        """Alternate the W, b and Y steps on the non-constant features of ``X``."""
        X = np.asarray(X, dtype=float)
        X = X[:, ~constant_features(X)]
        X = X - X.mean(axis=0)
        n_clusters = check_value("n_clusters", n_clusters, Interval(int, 1))
        labels = np.random.default_rng(random_state).integers(0, n_clusters, X.shape[0])
        reweights = np.ones(X.shape[1])
        history = []
        for _ in range(self.max_iter):
            G = scaled_indicator(labels, n_clusters)
            b = G.mean(axis=0)
            W = weights_step(X, G, reweights, self.gamma)
            reweights = lp_reweights(W, self.p)
            M = X @ W + b
            for _ in range(self.assignment_iter):
                updated = reassign_rows(M, labels)
                if np.array_equal(updated, labels):
                    break
                labels = updated
            residual = M - scaled_indicator(labels, n_clusters)
            history.append(float(np.einsum("ij,ij->", residual, residual) + self.gamma
                                 * (np.linalg.norm(W, axis=1) ** self.p).sum()))
            if len(history) > 2 and abs(history[-1] - history[-2]) < self.tol:
                break
        return FSDKResult(W, labels, history)

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        return row_norm_scores(X, lambda X, _: self.solve(
            X, n_clusters=n_clusters, random_state=random_state).W)
