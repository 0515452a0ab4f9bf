"""Laplacian Score (He, Cai & Niyogi, NIPS 2005)."""

from __future__ import annotations

import numpy as np

from ..numerics.laplacian import laplacian_matmul
from ..numerics.scaling import constant_features
from .affinity import NeighborGraphSelector, check_graph_options, knn_affinity

#: quotient given to a feature whose denominator vanishes: above 2, the largest value
#: that f'Lf / f'Df can take (the spectrum of the normalized Laplacian lies in [0, 2])
WORST_QUOTIENT = 3.0


def laplacian_quotients(A, X: np.ndarray, *, centered: bool):
    """Per feature ``f'Lf / f'Df`` with ``L = D - A``, and where it is defined.

    Parameters
    ----------
    A : sparse (n, n)
        Symmetric affinity.
    X : ndarray of shape (n, d)
    centered : bool
        Replace each f by ``f~ = f - (f'D1 / 1'D1) 1`` first (the Laplacian score;
        ``f~'Lf~ = f'Lf`` since ``L1 = 0``, so only the denominator changes).

    Returns
    -------
    quotients : ndarray of shape (d,)
        In [0, 2]; :data:`WORST_QUOTIENT` where undefined.
    defined : ndarray of bool, shape (d,)
        False for constant features and where the denominator is 0 (a feature that is
        0, or constant after centering, on every node of positive degree).
    """
    degree = np.asarray(A.sum(axis=1)).ravel()
    if centered:
        X = X - (degree @ X) / degree.sum()
    numerator = np.einsum("ij,ij->j", X, laplacian_matmul(A, X))
    denominator = degree @ X**2
    defined = ~constant_features(X) & (denominator > 0)
    quotients = np.full(X.shape[1], WORST_QUOTIENT)
    quotients[defined] = numerator[defined] / denominator[defined]
    return quotients, defined


class LaplacianScore(NeighborGraphSelector):
    """Laplacian Score: features that respect the kNN graph's locality score high.

    He, X., Cai, D. & Niyogi, P. (2005). Laplacian Score for Feature Selection. NIPS 18.
    Steps 1-4 of the paper's algorithm: the kNN graph with heat-kernel weights ``S``,
    ``D = diag(S1)``, ``L = D - S``, ``f~ = f - (f'D1 / 1'D1) 1`` and

        L_r = f~' L f~ / f~' D f~         (smaller is better).

    :meth:`score` returns ``-L_r`` (higher is better). ``L_r`` is the Rayleigh quotient
    of the normalized Laplacian at ``D^1/2 f~``, which Zhao & Liu's SPEC calls phi_2
    (:class:`~.spec.SPEC` with ``style=0`` gives the same scores on the same graph).

    Parameters
    ----------
    n_neighbors : int, default 5
        k of the kNN graph (the paper leaves k open; 5 is the default of the authors'
        graph code and of the other baselines here).
    weight : {"heat", "binary", "cosine"}, default "heat"
        Edge weights: the paper's heat kernel ``exp(-||x_i - x_j||^2 / t)``, 0/1, or
        cosine; see :func:`~.affinity.knn_affinity`.
    t : float, optional
        Heat-kernel width; default the mean squared kNN distance.

    Notes
    -----
    A feature with ``f~'Df~ = 0`` (constant, or constant wherever the graph has edges)
    has no score in the paper; it gets ``L_r = 3``, worse than any attainable value (the
    quotient lies in [0, 2]), so its score ``-3`` ranks it last, never NaN.
    ``random_state`` is unused (the method is deterministic).
    """

    name = "laplacian_score"
    display_name = "LapScore"
    depends_on_count = False

    def __init__(self, n_neighbors=5, weight="heat", t=None):
        self.n_neighbors, self.weight, self.t = check_graph_options(n_neighbors, weight, t)

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        X = np.asarray(X, dtype=float)
        A = knn_affinity(X, n_neighbors=self.n_neighbors, weight=self.weight, t=self.t)
        quotients, _ = laplacian_quotients(A, X, centered=True)
        return -quotients
