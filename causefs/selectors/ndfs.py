"""NDFS, nonnegative discriminative feature selection (Li et al., AAAI 2012)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg
from sklearn.cluster import KMeans

from ..core.validation import Interval, check_value
from ..numerics.scaling import constant_features
from .affinity import NeighborGraphSelector, SpectralGraph, knn_affinity
from .udfs import has_converged, l21_reweights, row_norm_scores

#: F0 = Y (Y'Y)^-1/2 + INIT_OFFSET / sqrt(n): no entry of F0 is 0 (a multiplicative
#: update never moves a zero), and the offset is small next to the indicator's 1/sqrt(n_c)
INIT_OFFSET = 0.2


class NDFSResult(NamedTuple):
    W: np.ndarray  #: (d_varying, c) feature weights over the non-constant features
    F: np.ndarray  #: (n, c) non-negative scaled cluster indicator
    objective: list  #: Tr(F'LF) + alpha (||XW - F||^2 + beta ||W||_2,1) per iteration


def spectral_clustering_indicator(graph: SpectralGraph, n_clusters: int, random_state=0):
    """Scaled indicator ``Y (Y'Y)^-1/2`` of spectral clustering, plus the offset.

    Ng-Jordan-Weiss: the ``n_clusters`` smallest eigenvectors of the normalized
    Laplacian, rows scaled to unit length (a zero row is kept), k-means with 10 seeded
    restarts. On a disconnected graph these include the whole null space (component
    indicators, :meth:`~.affinity.SpectralGraph.null_space`) when ``n_clusters`` is at
    least the number of components. An empty cluster (possible only with fewer distinct points than clusters)
    leaves its column at the offset.
    """
    _, xi = graph.eigenpairs(n_clusters - 1, random_state)
    embedding = np.column_stack([graph.trivial, xi])
    norms = np.linalg.norm(embedding, axis=1, keepdims=True)
    embedding = np.divide(embedding, norms, out=np.zeros_like(embedding), where=norms > 0)
    labels = KMeans(n_clusters=n_clusters, n_init=10,
                    random_state=random_state).fit_predict(embedding)
    Y = np.eye(n_clusters)[labels]
    return Y / np.sqrt(np.maximum(Y.sum(axis=0), 1.0)) + INIT_OFFSET / np.sqrt(len(labels))


class NDFS(NeighborGraphSelector):
    """NDFS: non-negative spectral clustering and l2,1 regression learned jointly.

    Li, Z., Yang, Y., Liu, J., Zhou, X. & Lu, H. (2012). Unsupervised Feature Selection
    Using Nonnegative Spectral Analysis. AAAI. With our ``X`` (n, d), the normalized
    Laplacian ``L = I - D^-1/2 S D^-1/2`` of the heat-kernel kNN graph ``S`` and the
    scaled cluster indicator ``F`` (n, c), the paper solves

        min_{F, W} Tr(F'LF) + alpha (||XW - F||_F^2 + beta ||W||_2,1)
        s.t. F'F = I, F >= 0,

    by its alternating algorithm: ``W = (X'X + beta D)^-1 X'F`` with
    ``D_ii = 1 / (2 ||w_i||)``, which leaves ``Tr(F'MF)`` with
    ``M = L + alpha (I - X (X'X + beta D)^-1 X')``, and the multiplicative update of
    ``min Tr(F'MF) + gamma/2 ||F'F - I||^2 s.t. F >= 0`` (the orthogonality constraint
    as a penalty; 1/2 is the scaling for which this update is the KKT iteration),

        F <- F * (gamma F) / (M F + gamma F F'F).

    The score of feature i is ``||w_i||`` (c = ``n_clusters``).

    Parameters
    ----------
    n_neighbors : int, default 5
        k of the kNN graph (the paper's k = 5).
    alpha, beta : float, default 1.0
        The paper tunes both over {1e-6, 1e-4, ..., 1e6}; 1 is the centre of that grid
        (and scikit-feature's default).
    gamma : float, default 1e8
        Weight of the orthogonality penalty: "large enough" in the paper, which uses 1e8.
    max_iter : int, default 100
    tol : float, default 1e-4
        Stop when the objective changes by at most ``tol`` times its magnitude.

    Notes
    -----
    ``M`` is n x n and dense; it is applied to F only through products,
    ``M F = L F + alpha (F - X W_F)`` with ``W_F = (X'X + beta D)^-1 X'F`` (one Cholesky
    factor of the d x d matrix per iteration). Deviation: the paper's update is the case
    ``M F >= 0`` of ``F <- F * (gamma F + [MF]^-) / (gamma F F'F + [MF]^+)`` (``[.]^+``,
    ``[.]^-`` the positive and negative parts), used here; it has the same fixed points
    (the KKT conditions ``F * (MF + gamma F F'F - gamma F) = 0``) and keeps ``F >= 0``
    where ``M F`` has negative entries, which the paper's form would turn negative.
    Second deviation: each column of F is rescaled to unit norm after the update (as
    public NDFS implementations do, and as ``F'F = I`` requires). Without it the
    update maps a column of norm s to norm about 1/s, so F's scale and the objective
    alternate between two values and never settle.
    ``F`` starts from seeded spectral clustering (:func:`spectral_clustering_indicator`);
    ``D`` starts at ``I``. ``D_ii`` uses ``max(||w_i||, 1e-8)``. A non-zero constant
    feature would act as an intercept; constant features are left out and score -1,
    below every ``||w_i|| >= 0``. ``random_state`` seeds the eigensolver and k-means.
    """

    name = "ndfs"
    display_name = "NDFS"
    depends_on_count = False

    def __init__(self, n_neighbors=5, alpha=1.0, beta=1.0, gamma=1e8, max_iter=100, tol=1e-4):
        self.n_neighbors = check_value("n_neighbors", n_neighbors, Interval(int, 1))
        self.alpha = check_value("alpha", alpha, Interval(float, 0, closed="neither"))
        self.beta = check_value("beta", beta, Interval(float, 0, closed="neither"))
        self.gamma = check_value("gamma", gamma, Interval(float, 0, closed="neither"))
        self.max_iter = check_value("max_iter", max_iter, Interval(int, 1))
        self.tol = check_value("tol", tol, Interval(float, 0))

    def solve(self, X, *, n_clusters, random_state=0) -> NDFSResult:
        """Run the alternating updates on the non-constant features of ``X``."""
        X = np.asarray(X, dtype=float)
        n_clusters = check_value("n_clusters", n_clusters, Interval(int, 1))
        graph = SpectralGraph.from_affinity(
            knn_affinity(X, n_neighbors=self.n_neighbors, weight="heat"))
        X = X[:, ~constant_features(X)]
        F = spectral_clustering_indicator(graph, n_clusters, random_state)
        LF = graph.normalized_laplacian_matmul(F)
        gram = X.T @ X
        reweights = np.ones(X.shape[1])
        history = []
        for _ in range(self.max_iter):
            factor = scipy.linalg.cho_factor(gram + self.beta * np.diag(reweights))
            MF = LF + self.alpha * (F - X @ scipy.linalg.cho_solve(factor, X.T @ F))
            numerator = self.gamma * F + np.maximum(-MF, 0.0)
            denominator = self.gamma * F @ (F.T @ F) + np.maximum(MF, 0.0)
            # a zero denominator means F_ij = 0 (else gamma (FF'F)_ij > 0): it stays 0
            F = F * np.divide(numerator, denominator, out=np.ones_like(F),
                              where=denominator > 0)
            F = F / np.linalg.norm(F, axis=0)
            W = scipy.linalg.cho_solve(factor, X.T @ F)
            reweights = l21_reweights(W)
            LF = graph.normalized_laplacian_matmul(F)
            residual = X @ W - F
            history.append(float(np.einsum("ij,ij->", F, LF) + self.alpha * (
                np.einsum("ij,ij->", residual, residual)
                + self.beta * np.linalg.norm(W, axis=1).sum())))
            if has_converged(history, self.tol):
                break
        return NDFSResult(W, F, history)

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        return row_norm_scores(X, lambda X, _: self.solve(
            X, n_clusters=n_clusters, random_state=random_state).W)
