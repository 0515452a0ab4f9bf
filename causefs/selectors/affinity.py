"""kNN affinity graphs and the spectral helpers shared by the baseline selectors.

Every graph-based baseline (Laplacian score, SPEC, MCFS, NDFS) builds its graph with
:func:`knn_affinity`, and the spectral ones take eigenvectors through
:class:`SpectralGraph`, so an option such as ``n_neighbors`` or ``weight`` always reaches
the graph (scikit-feature's ``construct_W`` honours them, but its MCFS and other ports
drop the options one level up, before they reach it). No n x n dense matrix is formed
above :data:`DENSE_EIGEN_MAX_N` samples.

A kNN graph is often disconnected (5-NN: 8 or 9 components on JAFFE and COIL20): its
Laplacian then has a multiple eigenvalue 0, which an iterative eigensolver resolves only
partly and any solver returns in an arbitrary basis. :meth:`SpectralGraph.eigenpairs`
therefore takes the null space from the connected components, explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import LinearOperator, eigsh
from sklearn.neighbors import NearestNeighbors

from ..core.validation import Interval, InvalidParameterError, check_choice, check_value
from .base import Selector

#: edge weights of :func:`knn_affinity`
WEIGHTS = ("heat", "binary", "cosine")

#: up to this many samples the eigenvectors come from a dense solver (exact and faster
#: there); above, from ARPACK's Lanczos (``eigsh``) on the sparse normalized affinity
DENSE_EIGEN_MAX_N = 300

#: the null space (xi_1 and the other components' vectors) is moved to this eigenvalue
#: (below the spectrum [-1, 1] of D^-1/2 A D^-1/2) so that the largest eigenpairs of the
#: deflated operator are the wanted non-zero ones
_DEFLATED = -2.0


class NeighborGraphSelector(Selector):
    """A baseline built on a kNN graph of the samples (its option ``n_neighbors``)."""

    def check_data(self, n_samples, n_features, n_clusters) -> None:
        if self.n_neighbors >= n_samples:
            raise InvalidParameterError(f"n_neighbors={self.n_neighbors}: needs more than "
                                        f"{self.n_neighbors} samples, the data has "
                                        f"{n_samples}")


def check_graph_options(n_neighbors, weight, t):
    """Validated ``(n_neighbors, weight, t)`` of :func:`knn_affinity`."""
    n_neighbors = check_value("n_neighbors", n_neighbors, Interval(int, 1))
    check_choice("weight", weight, WEIGHTS)
    if t is not None:
        t = check_value("t", t, Interval(float, 0, closed="neither"))
        if weight != "heat":
            raise ValueError(f"t is the heat-kernel width: it needs weight='heat', "
                             f"got weight={weight!r}")
    return n_neighbors, weight, t


def knn_indices(X: np.ndarray, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
    """Squared distances and indices, (n, n_neighbors), of each sample's nearest others.

    A sample is never its own neighbour, even when it has duplicates (those are other
    samples, at distance 0). Ties are broken by scikit-learn's ``NearestNeighbors``.
    """
    n = X.shape[0]
    # a squared distance is at most 4 d max|x|^2: it must stay below the float64 maximum
    largest = float(np.abs(X).max()) if X.size else 0.0
    if largest > np.sqrt(np.finfo(float).max / (4 * X.shape[1])):
        raise ValueError(f"values up to {largest:.3g} overflow squared distances: scale "
                         "the features first (causefs.numerics.scaling.scale_features)")
    if n_neighbors >= n:
        raise ValueError(f"n_neighbors={n_neighbors} needs at least {n_neighbors + 1} "
                         f"samples, got {n}")
    distances, indices = NearestNeighbors(n_neighbors=n_neighbors).fit(X).kneighbors()
    return distances**2, indices


def knn_affinity(X, n_neighbors: int = 5, weight: str = "heat", t: float | None = None):
    """Symmetric kNN affinity ``A`` (n, n) of the samples (rows) of ``X``.

    Parameters
    ----------
    X : array-like of shape (n, d)
    n_neighbors : int
        ``k``: samples i and j are linked when either is among the other's k nearest
        (Euclidean distance; the sample itself excluded).
    weight : {"heat", "binary", "cosine"}
        ``heat``: ``exp(-||x_i - x_j||^2 / t)``; ``binary``: 1; ``cosine``:
        ``x_i'x_j / (||x_i|| ||x_j||)``, clipped at 0 (a negative similarity is not an
        affinity; it cannot arise for data in [0, 1]), and 0 next to an all-zero sample.
        Zero weights are dropped.
    t : float, optional
        Heat-kernel width (only with ``weight="heat"``). Default: the mean of the n k
        squared kNN distances (1 when they are all 0, i.e. every sample has k duplicates,
        where every weight is exp(0) = 1 whatever t).

    Returns
    -------
    A : scipy.sparse.csr_array of shape (n, n)
        ``max(A0, A0')`` of the directed kNN weights ``A0``: the weight of a pair does not
        depend on its direction, so this is the union of both neighbourhoods with that
        weight. No self loops.
    """
    X = np.asarray(X, dtype=float)
    n_neighbors, weight, t = check_graph_options(n_neighbors, weight, t)
    sq, cols = knn_indices(X, n_neighbors)
    sq, cols = sq.ravel(), cols.ravel()
    rows = np.repeat(np.arange(X.shape[0]), n_neighbors)
    if weight == "heat":
        mean = sq.mean()
        values = np.exp(-sq / (t if t is not None else mean if mean > 0 else 1.0))
    elif weight == "binary":
        values = np.ones_like(sq)
    else:
        # x_i'x_j from the kNN distance: ||x_i||^2 + ||x_j||^2 - ||x_i - x_j||^2 = 2 x_i'x_j
        sq_norms = np.einsum("ij,ij->i", X, X)
        scale = np.sqrt(sq_norms[rows] * sq_norms[cols])
        dots = 0.5 * (sq_norms[rows] + sq_norms[cols] - sq)
        values = np.clip(np.divide(dots, scale, out=np.zeros_like(dots), where=scale > 0),
                         0.0, 1.0)
    A = sp.csr_array((values, (rows, cols)), shape=(X.shape[0],) * 2)
    A = sp.csr_array(A.maximum(A.T))
    A.eliminate_zeros()
    return A


@dataclass(frozen=True)
class SpectralGraph:
    """An affinity ``A`` with its degrees and normalized forms.

    ``normalized`` is ``D^-1/2 A D^-1/2``; the normalized Laplacian is
    ``I - D^-1/2 A D^-1/2`` with eigenvalues ``0 = lambda_1 <= ... <= 2`` and trivial
    eigenvector ``xi_1 = D^1/2 1 / ||D^1/2 1||`` (``trivial``). A node of degree 0 (only
    possible with cosine weights next to an all-zero sample, or a heat weight that
    underflows) gets ``D^-1/2 = 0``: it is a row of the identity in the Laplacian.
    """

    affinity: sp.csr_array
    degree: np.ndarray
    inv_sqrt_degree: np.ndarray
    normalized: sp.csr_array
    trivial: np.ndarray

    @classmethod
    def from_affinity(cls, A) -> "SpectralGraph":
        A = sp.csr_array(A)
        degree = np.asarray(A.sum(axis=1)).ravel()
        inv_sqrt = np.zeros_like(degree)
        inv_sqrt[degree > 0] = 1.0 / np.sqrt(degree[degree > 0])
        scale = sp.diags_array(inv_sqrt)
        trivial = np.sqrt(degree) / np.sqrt(degree.sum())
        return cls(A, degree, inv_sqrt, sp.csr_array(scale @ A @ scale), trivial)

    @property
    def n_samples(self) -> int:
        return self.affinity.shape[0]

    def normalized_laplacian_matmul(self, Y: np.ndarray) -> np.ndarray:
        """``(I - D^-1/2 A D^-1/2) Y`` without forming the Laplacian."""
        return Y - self.normalized @ Y

    def null_space(self) -> np.ndarray:
        """Orthonormal basis, shape (n, c - 1), of the normalized Laplacian's null space
        orthogonal to ``xi_1``; ``c`` = connected components with edges.

        The null space is spanned by ``u_j = D^1/2 1_{C_j} / ||D^1/2 1_{C_j}||`` over the
        components ``C_j`` with positive volume (an isolated node has ``D^-1/2 = 0`` and
        eigenvalue 1). With the components ordered by volume (largest first, ties by
        first node), ``xi_1 = U w`` with ``w_j = sqrt(vol_j / vol)``; the Householder
        reflection ``H`` mapping ``w`` to ``e_1`` gives the basis ``U H e_2, ..., U H e_c``:
        column k is component k's indicator made orthogonal to ``xi_1`` (a deterministic
        basis, the same for every solver).
        """
        _, labels = connected_components(self.affinity, directed=False)
        volume = np.bincount(labels, weights=self.degree)
        # largest volume first; np.unique's first index breaks ties deterministically
        _, first = np.unique(labels, return_index=True)
        order = [c for c in np.lexsort((first, -volume)) if volume[c] > 0]
        if len(order) <= 1:
            return np.empty((self.n_samples, 0))
        U = np.zeros((self.n_samples, len(order)))
        for j, c in enumerate(order):
            members = labels == c
            U[members, j] = np.sqrt(self.degree[members] / volume[c])
        w = np.sqrt(volume[order] / volume.sum())
        v = w.copy()
        v[0] -= 1.0  # w_1 is the largest weight, so v = w - e_1 is far from 0
        H = np.eye(len(order)) - 2.0 * np.outer(v, v) / (v @ v)
        return U @ H[:, 1:]

    def laplacian_eigenmap(self, n_components: int, random_state=0) -> np.ndarray:
        """``D^-1/2 xi_2, ..., D^-1/2 xi_{n_components + 1}``, shape (n, n_components): the
        eigenvectors of ``L y = lambda D y`` with the smallest non-trivial eigenvalues
        (Belkin & Niyogi's eigenmap; MCFS's embedding), from :meth:`eigenpairs`."""
        _, xi = self.eigenpairs(n_components, random_state)
        return self.inv_sqrt_degree[:, None] * xi

    def eigenpairs(self, n_components: int, random_state=0):
        """The ``n_components`` smallest non-trivial eigenpairs of the normalized Laplacian.

        Returns
        -------
        eigenvalues : ndarray of shape (n_components,)
            ``lambda_2 <= ... <= lambda_{n_components + 1}``.
        eigenvectors : ndarray of shape (n, n_components)
            Orthonormal ``xi_2, ...``, orthogonal to ``xi_1``. The first ``c - 1`` (zero
            eigenvalues of a graph with ``c`` components) are :meth:`null_space`'s basis;
            each other column's entry of largest magnitude is positive (a deterministic
            sign). ``D^-1/2 xi_j`` solves the generalized problem ``L y = lambda D y``
            (``L = D - A``).

        Notes
        -----
        The null space (``xi_1`` and :meth:`null_space`) is deflated (``D^-1/2 A D^-1/2 -
        3 Z Z'`` moves it to -2), so the remaining wanted pairs are the largest of that
        operator: a dense ``eigh`` up to :data:`DENSE_EIGEN_MAX_N` samples, ``eigsh`` with
        a start vector drawn from ``random_state`` above (deterministic for a given seed).
        """
        n = self.n_samples
        if n_components > n - 1:
            raise ValueError(f"{n_components} non-trivial eigenvectors need at least "
                             f"{n_components + 1} samples, got {n}")
        full_null = self.null_space()
        null = full_null[:, :n_components]
        wanted = n_components - null.shape[1]
        if wanted == 0:
            return np.zeros(n_components), null
        shift = _DEFLATED - 1.0
        Z = np.column_stack([self.trivial, full_null])
        if n <= DENSE_EIGEN_MAX_N:
            B = self.normalized.toarray() + shift * (Z @ Z.T)
            mu, V = scipy.linalg.eigh(B, subset_by_index=[n - wanted, n - 1])
        else:
            op = LinearOperator((n, n), dtype=float,
                                matvec=lambda v: self.normalized @ v + shift * Z @ (Z.T @ v))
            v0 = np.random.default_rng(random_state).uniform(-1.0, 1.0, n)
            mu, V = eigsh(op, k=wanted, which="LA", v0=v0)
        order = np.argsort(-mu, kind="stable")
        mu, V = mu[order], V[:, order]
        peak = np.abs(V).argmax(axis=0)
        V = V * np.sign(V[peak, np.arange(V.shape[1])])
        return np.concatenate([np.zeros(null.shape[1]), 1.0 - mu]), np.column_stack([null, V])
