"""UDFS, l2,1-norm regularized discriminative feature selection (Yang et al., IJCAI 2011)."""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ..core.validation import Interval, check_value
from ..numerics.scaling import constant_features
from .affinity import NeighborGraphSelector, knn_indices

#: score of a constant feature: below 0, the smallest row norm ||w_i||
CONSTANT_SCORE = -1.0

#: floor of ||w_i|| in the reweighting D_ii = 1 / (2 ||w_i||)
ROW_NORM_FLOOR = 1e-8

_CHUNK_ELEMENTS = 2**22  # bound on the (samples x (k+1) x d) local blocks held at once


def l21_reweights(W: np.ndarray) -> np.ndarray:
    """``D_ii = 1 / (2 max(||w_i||, ROW_NORM_FLOOR))``: the iterative reweighting that
    turns ``||W||_2,1`` into the quadratic ``Tr(W' D W)`` (UDFS and NDFS)."""
    return 0.5 / np.maximum(np.linalg.norm(W, axis=1), ROW_NORM_FLOOR)


def row_norm_scores(X, fit_weights) -> np.ndarray:
    """Scores ``||w_i||`` of a method whose weights ``W`` cover the non-constant features:
    ``fit_weights(X, constant)`` returns them (``constant`` the bool mask); constant
    features score :data:`CONSTANT_SCORE` (NDFS, FSDK, VCSDFS)."""
    X = np.asarray(X, dtype=float)
    constant = constant_features(X)
    scores = np.full(X.shape[1], CONSTANT_SCORE)
    if not constant.all():
        scores[~constant] = np.linalg.norm(fit_weights(X, constant), axis=1)
    return scores


def has_converged(history: list, tol: float) -> bool:
    """The last objective changed by at most ``tol`` times the one before (UDFS, NDFS)."""
    return len(history) > 1 and abs(history[-2] - history[-1]) <= tol * abs(history[-2])


def local_discriminative_matrix(X: np.ndarray, n_neighbors: int, lam: float) -> np.ndarray:
    """``M = X' [sum_i S_i H B_i H S_i'] X`` (d, d) of the UDFS paper.

    ``S_i`` selects the local set of sample i (itself and its ``n_neighbors`` nearest
    samples), ``H = I - 11'/(k+1)`` centres it and ``B_i = (X~_i' X~_i + lam I)^-1``
    with ``X~_i`` the centred local set. The n x n middle matrix is sparse (at most
    ``n (k+1)^2`` non-zeros); it is applied to ``X`` and never formed densely.
    """
    n, d = X.shape
    _, neighbors = knn_indices(X, n_neighbors)
    sets = np.column_stack([np.arange(n), neighbors])
    size = n_neighbors + 1
    H = np.eye(size) - 1.0 / size
    blocks = np.empty((n, size, size))
    step = max(1, _CHUNK_ELEMENTS // (size * max(d, 1)))
    for start in range(0, n, step):
        local = X[sets[start:start + step]]
        local = local - local.mean(axis=1, keepdims=True)
        gram = local @ local.transpose(0, 2, 1)
        blocks[start:start + step] = H @ np.linalg.inv(gram + lam * np.eye(size)) @ H
    rows = np.repeat(sets, size, axis=1).ravel()
    cols = np.tile(sets, (1, size)).ravel()
    middle = sp.csr_array((blocks.ravel(), (rows, cols)), shape=(n, n))
    M = X.T @ (middle @ X)
    return 0.5 * (M + M.T)


class UDFS(NeighborGraphSelector):
    """UDFS: local discriminative analysis with a row-sparse projection.

    Yang, Y., Shen, H. T., Ma, Z., Huang, Z. & Zhou, X. (2011). l2,1-Norm Regularized
    Discriminative Feature Selection for Unsupervised Learning. IJCAI. With the local
    discriminative matrix ``M`` (:func:`local_discriminative_matrix`, built from every
    sample's k-nearest set), the paper solves

        min_W Tr(W' M W) + gamma ||W||_2,1   s.t.  W'W = I,   W in R^(d x c)

    by its iterative algorithm: ``D = I``; repeat ``W`` = the c eigenvectors of
    ``M + gamma D`` with the smallest eigenvalues, ``D_ii = 1 / (2 ||w_i||)``. The
    score of feature i is ``||w_i||`` (c = ``n_clusters``).

    Parameters
    ----------
    n_neighbors : int, default 5
        k of the local sets (5, as for the other kNN baselines and scikit-feature's port).
    gamma : float, default 0.1
        Weight of ``||W||_2,1``. The paper tunes it by grid search and fixes no value;
        0.1 is the default of scikit-feature's port.
    lam : float, default 1000.0
        The ``lam I`` that makes the local total scatter invertible in ``B_i``; the paper
        fixes no value, 1000 is the default of the ``LocalDisAna`` MATLAB routine that
        builds ``M`` in public UDFS benchmark code.
    max_iter : int, default 30
    tol : float, default 1e-4
        Stop when the objective changes by at most ``tol`` times its magnitude.

    Notes
    -----
    ``D_ii`` uses ``max(||w_i||, 1e-8)``. Constant features would give
    ``Tr(W'MW) = 0`` along their axes and be chosen first (``M`` measures only local
    scatter); they are left out of ``M`` and score -1, below every ``||w_i|| >= 0``.
    gamma acts relative to ``M``, which grows with n and shrinks as ``1/lam`` for large
    ``lam``: on small data the l2,1 term dominates and W concentrates on about c
    features (their ``||w_i||`` near 1, the rest near 0, still ordered).
    Duplicate samples are harmless (``lam I`` keeps ``B_i`` invertible). Cost:
    ``O(n k^2 d + n d^2)`` to build ``M`` (d x d) and one partial d x d eigenproblem
    per iteration. ``random_state`` is unused (the method is deterministic).
    """

    name = "udfs"
    display_name = "UDFS"
    depends_on_count = False

    def __init__(self, n_neighbors=5, gamma=0.1, lam=1000.0, max_iter=30, tol=1e-4):
        self.n_neighbors = check_value("n_neighbors", n_neighbors, Interval(int, 1))
        self.gamma = check_value("gamma", gamma, Interval(float, 0, closed="neither"))
        self.lam = check_value("lam", lam, Interval(float, 0, closed="neither"))
        self.max_iter = check_value("max_iter", max_iter, Interval(int, 1))
        self.tol = check_value("tol", tol, Interval(float, 0))

    def projection(self, X, *, n_clusters):
        """``W`` (d_varying, c) over the non-constant features, and the objective history."""
        X = np.asarray(X, dtype=float)
        n_clusters = check_value("n_clusters", n_clusters, Interval(int, 1))
        M = local_discriminative_matrix(X[:, ~constant_features(X)], self.n_neighbors,
                                        self.lam)
        c = min(n_clusters, M.shape[0])
        reweights = np.ones(M.shape[0])
        history = []
        for _ in range(self.max_iter):
            _, W = scipy.linalg.eigh(M + self.gamma * np.diag(reweights),
                                     subset_by_index=[0, c - 1])
            row_norms = np.linalg.norm(W, axis=1)
            history.append(float(np.einsum("ij,ij->", W, M @ W) + self.gamma * row_norms.sum()))
            reweights = l21_reweights(W)
            if has_converged(history, self.tol):
                break
        return W, history

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        X = np.asarray(X, dtype=float)
        constant = constant_features(X)
        scores = np.full(X.shape[1], CONSTANT_SCORE)
        if not constant.all():
            W, _ = self.projection(X, n_clusters=n_clusters)
            scores[~constant] = np.linalg.norm(W, axis=1)
        return scores
