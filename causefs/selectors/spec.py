"""SPEC, spectral feature selection (Zhao & Liu, ICML 2007)."""

from __future__ import annotations

import numpy as np

from ..core.validation import Interval, Options, check_value
from ..numerics.scaling import constant_features
from .affinity import (
    NeighborGraphSelector,
    SpectralGraph,
    check_graph_options,
    knn_affinity,
)
from .laplacian_score import laplacian_quotients

#: phi_3 given to a feature without a normalized f^ (constant, or 0 wherever the graph
#: has edges): below 0, the smallest value phi_3 can take
WORST_PHI3 = -1.0


def check_style(style) -> int:
    """``style``: -1 (phi_1), 0 (phi_2) or k >= 2 (phi_3 over xi_2..xi_k; k = 1 would
    sum over no eigenvector)."""
    return int(check_value("style", style, Options([-1, 0]), Interval(int, 2)))


class SPEC(NeighborGraphSelector):
    """SPEC: how well each feature agrees with the spectrum of the kNN graph.

    Zhao, Z. & Liu, H. (2007). Spectral Feature Selection for Supervised and Unsupervised
    Learning. ICML. With the normalized Laplacian ``L = I - D^-1/2 W D^-1/2``, its
    eigenpairs ``(lambda_j, xi_j)`` (``lambda_1 = 0``, ``xi_1 = D^1/2 1 / ||D^1/2 1||``),
    ``f^ = D^1/2 f / ||D^1/2 f||`` and ``alpha_j = f^' xi_j``, the three ranking functions
    of section 3 are

    - ``style=-1``: ``phi_1 = f^' L f^ = sum_j lambda_j alpha_j^2`` (smaller is better);
    - ``style=0``: ``phi_2 = f^' L f^ / (1 - (f^' xi_1)^2)`` (smaller is better);
    - ``style=k >= 2``: ``phi_3 = sum_{j=2..k} (2 - lambda_j) alpha_j^2`` (larger is
      better).

    :meth:`score` returns ``-phi_1``, ``-phi_2`` or ``phi_3``, so higher is always better
    (scikit-feature ranks phi_1 and phi_2 in descending order, i.e. backwards).

    Parameters
    ----------
    style : int, default 0
        Ranking function. The default is phi_2, the function the paper builds to correct
        phi_1: since ``lambda_1 = 0``, phi_1 ignores ``alpha_1`` and is small for any
        feature close to the trivial ``xi_1`` (a nearly constant feature, which separates
        nothing); dividing by ``1 - alpha_1^2`` removes that bias. phi_3 needs the number
        of leading eigenvectors k that carry the cluster structure, which a sweep sets
        explicitly (e.g. ``style=n_clusters``); phi_2 needs no such choice. phi_2 equals
        the Laplacian score (the paper shows Laplacian Score is a special case of SPEC):
        on the same graph ``SPEC(style=0)`` and :class:`~.laplacian_score.LaplacianScore`
        give the same scores.
    n_neighbors : int, default 5
    weight : {"heat", "binary", "cosine"}, default "heat"
    t : float, optional
        The kNN graph of :func:`~.affinity.knn_affinity` (the paper uses a dense RBF
        similarity; a sparse kNN graph keeps the method usable for large n).

    Notes
    -----
    The paper's spectrum modifier gamma(.) is the identity here. A feature without a
    normalized ``f^`` or with ``alpha_1^2 = 1`` (constant, or 0 on every node with
    edges) gets phi_1 = phi_2 = 3 (above their largest value 2) and phi_3 = -1 (below
    its smallest value 0): it ranks last, never NaN. With ``style=k``, ``random_state``
    seeds the sparse eigensolver's start vector; the other styles are deterministic.
    """

    name = "spec"
    display_name = "SPEC"
    depends_on_count = False

    def __init__(self, style=0, n_neighbors=5, weight="heat", t=None):
        self.style = check_style(style)
        self.n_neighbors, self.weight, self.t = check_graph_options(n_neighbors, weight, t)

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        X = np.asarray(X, dtype=float)
        A = knn_affinity(X, n_neighbors=self.n_neighbors, weight=self.weight, t=self.t)
        if self.style <= 0:
            # phi_1 = f'(D - W)f / f'Df; phi_2 = phi_1 / (1 - alpha_1^2) = f~'Lf~ / f~'Df~
            phi, _ = laplacian_quotients(A, X, centered=self.style == 0)
            return -phi
        graph = SpectralGraph.from_affinity(A)
        eigenvalues, xi = graph.eigenpairs(self.style - 1, random_state)
        f_hat = np.sqrt(graph.degree)[:, None] * X
        norms = np.linalg.norm(f_hat, axis=0)
        defined = ~constant_features(X) & (norms > 0)
        alphas = xi.T @ (f_hat[:, defined] / norms[defined])
        phi3 = np.full(X.shape[1], WORST_PHI3)
        phi3[defined] = (2.0 - eigenvalues) @ alphas**2
        return phi3
