"""MCFS, multi-cluster feature selection (Cai, Zhang & He, KDD 2010)."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import Lars

from ..core.validation import Interval, check_value
from ..numerics.scaling import constant_features
from .affinity import (
    NeighborGraphSelector,
    SpectralGraph,
    check_graph_options,
    knn_affinity,
)

#: score of a constant feature: below 0, the score of every feature no regression picks
CONSTANT_SCORE = -1.0


class MCFS(NeighborGraphSelector):
    """MCFS: sparse regressions of the data onto the graph's spectral embedding.

    Cai, D., Zhang, C. & He, X. (2010). Unsupervised Feature Selection for Multi-Cluster
    Data. KDD. Section 3, with the kNN graph ``W``, ``D = diag(W1)``, ``L = D - W``:

    1. spectral embedding (3.1): the K = ``n_clusters`` eigenvectors ``y_1..y_K`` of
       ``L y = lambda D y`` with the smallest eigenvalues, the trivial constant ``y``
       (``lambda = 0``) excluded as in the authors' Laplacian-eigenmap code; on a
       disconnected graph the other ``lambda = 0`` eigenvectors are the components'
       indicators (:meth:`~.affinity.SpectralGraph.null_space`), not a solver's
       arbitrary basis;
    2. sparse coefficients (3.2): for each ``y_k``,
       ``min_a ||y_k - X a_k||^2 s.t. |a_k|_1 <= gamma``, solved by LARS stopped at
       ``n_features_to_select`` non-zero coefficients (the paper controls the sparsity
       through this cardinality);
    3. the score (3.3): ``MCFS(j) = max_k |a_{k,j}|``.

    Parameters
    ----------
    n_neighbors : int, default 5
        p of the p-nearest-neighbour graph (5, the default of the authors' code).
    weight : {"heat", "binary", "cosine"}, default "heat"
        The paper's three weightings: heat kernel, 0-1, dot-product (cosine, i.e. the
        dot product of normalized samples).
    t : float, optional
        Heat-kernel width; default the mean squared kNN distance (the authors' code derives
        it from the mean pairwise distance instead).

    Notes
    -----
    LARS fits an intercept (data and embedding centred). Constant features are left out
    of the regressions and score -1, below the 0 of features no regression selects.
    ``random_state`` seeds the sparse eigensolver's start vector (for more than
    :data:`~.affinity.DENSE_EIGEN_MAX_N` samples).
    """

    name = "mcfs"
    display_name = "MCFS"

    def __init__(self, n_neighbors=5, weight="heat", t=None):
        self.n_neighbors, self.weight, self.t = check_graph_options(n_neighbors, weight, t)

    def coefficients(self, X, *, n_clusters, n_features_to_select, random_state=0):
        """The sparse coefficients ``a_k`` as rows, shape (n_clusters, d)."""
        X = np.asarray(X, dtype=float)
        n_clusters = check_value("n_clusters", n_clusters, Interval(int, 1))
        n_features_to_select = check_value("n_features_to_select", n_features_to_select,
                                           Interval(int, 1))
        A = knn_affinity(X, n_neighbors=self.n_neighbors, weight=self.weight, t=self.t)
        embedding = SpectralGraph.from_affinity(A).laplacian_eigenmap(n_clusters, random_state)
        varying = ~constant_features(X)
        coef = np.zeros((n_clusters, X.shape[1]))
        if varying.any():
            lars = Lars(n_nonzero_coefs=min(n_features_to_select, int(varying.sum())),
                        fit_path=False)
            coef[:, varying] = lars.fit(X[:, varying], embedding).coef_.reshape(n_clusters, -1)
        return coef

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        coef = self.coefficients(X, n_clusters=n_clusters,
                                 n_features_to_select=n_features_to_select,
                                 random_state=random_state)
        return np.where(constant_features(np.asarray(X)), CONSTANT_SCORE,
                        np.abs(coef).max(axis=0))
