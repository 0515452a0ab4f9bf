"""Initial embedding: spectral embedding of the fused graph."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse.csgraph
import scipy.sparse.linalg

from ...core.parts import Cost
from ...core.state import State
from ...core.validation import SEED, check_value
from ...numerics.anchors import resolve_anchors
from ...numerics.laplacian import laplacian_matrix, symmetric_degree
from ...numerics.preconditioners import anchor_preconditioner, anchor_preconditioner_floats
from ..base import Block


def component_basis(A) -> np.ndarray:
    """Orthonormal basis of the null space of ``L_A``: one normalized indicator per
    connected component of ``(A + A')/2``, the largest components first (ties by their
    first node), so the basis is the same whatever the eigensolver."""
    _, labels = scipy.sparse.csgraph.connected_components(A, directed=False)
    sizes = np.bincount(labels)
    _, first = np.unique(labels, return_index=True)
    order = np.lexsort((first, -sizes))
    Z = np.zeros((labels.size, order.size))
    for column, component in enumerate(order):
        members = labels == component
        Z[members, column] = 1.0 / np.sqrt(sizes[component])
    return Z


#: up to this many samples the eigenvectors come from shift-invert Lanczos (a sparse LU
#: of the Laplacian is cheap there, and LOBPCG needs hundreds of iterations for the small
#: eigengaps of a kNN graph); above, the LU fills in superlinearly and LOBPCG is cheaper
SHIFT_INVERT_N = 5000


def dense_path(n: int, h: int) -> bool:
    """Whether :func:`smallest_eigenvectors` takes a dense eigendecomposition: below 200
    samples, or when h is too large for an iterative solver."""
    return n < 200 or 5 * h >= n


def smallest_eigenvectors(A, h: int, seed: int = 0, tol: float = 1e-8,
                          anchors: np.ndarray | None = None) -> np.ndarray:
    """Orthonormal eigenvectors of the h smallest eigenvalues of ``L_A``, (n, h).

    The null space (eigenvalue 0, one vector per connected component; a kNN graph often
    has several) is taken explicitly (:func:`component_basis`): iterative solvers resolve
    a multiple eigenvalue only partly, and any solver returns it in an arbitrary basis.
    The remaining ``h - c`` vectors are orthogonal to it: below 200 samples (or when h is
    too large for an iterative solver) from a dense eigendecomposition; up to
    :data:`SHIFT_INVERT_N` samples from shift-invert Lanczos; above, from LOBPCG in the
    null space's orthogonal complement with a Jacobi (inverse degree) preconditioner, or
    on a graph of ``anchors`` the exact inverse of ``L + sigma I`` through the anchors'
    Schur complement (:func:`~causefs.numerics.preconditioners.anchor_preconditioner`;
    ``sigma`` is :data:`ANCHOR_SHIFT` times the mean degree), seeded for
    reproducibility (it only needs sparse products, O(n k h) per iteration),
    with shift-invert as its fallback when it does not reach ``tol``
    (docs/PERFORMANCE.md, "Spectral initialization"). With ``c >= h`` components, F is
    the indicators of the h largest.

    LOBPCG runs at most 1000 iterations; its vectors are accepted when every column's
    residual norm ``||L v - lambda v||`` is at most ``sqrt(tol) * scale``, ``scale`` the
    Gershgorin bound on ``||L||`` (the largest row sum of ``|L|``) or 1 if that is
    smaller; a column whose residual exceeds it (or is not finite) refuses them all, and
    shift-invert takes over. Shift-invert factorizes ``L - sigma I`` once, about
    ``sigma = -1e-6 max(1, 2 d_max)``, ``d_max`` the largest degree (``2 d_max`` bounds
    ``||L||``, Gershgorin): below the spectrum's 0 by 1e-6 of that bound (or of 1), so the
    matrix factorized is positive definite, its smallest eigenvalue ``-sigma``, its
    condition number at most ``1e6 + 1``, and the h smallest eigenvalues the nearest to
    sigma.

    Parameters
    ----------
    A : sparse matrix of shape (n, n)
        The graph.
    h : int
    seed : int, default=0
        Seeds the iterative solvers' start vectors.
    tol : float, default=1e-8
        LOBPCG's tolerance; a column's residual above ``sqrt(tol) * scale`` (see
        above) falls back to shift-invert.
    anchors : ndarray of int, shape (m,), optional
        The fit's anchors (sorted sample indices), when every column of A has its
        support in them.
    """
    Z = component_basis(A)
    if Z.shape[1] >= h:
        return Z[:, :h]
    L = laplacian_matrix(A)
    n, c = L.shape[0], Z.shape[1]
    rng = np.random.default_rng(seed)
    if dense_path(n, h):
        _, vectors = scipy.linalg.eigh(L.toarray(), subset_by_index=[c, h - 1])
    else:
        vectors = (_lobpcg_complement(L, Z, h - c, rng, tol, anchors)
                   if n > SHIFT_INVERT_N else None)
        if vectors is None:
            vectors = _shift_invert(L, A, h, rng)[:, c:]
    # the solvers' vectors are orthonormal to ~1e-12; make it exact for F'F = I
    Q, R = np.linalg.qr(np.column_stack([Z, vectors]))
    return Q * np.sign(np.diag(R))


#: on a graph of anchors LOBPCG is preconditioned by ``(L + sigma I)^-1``, ``sigma`` this
#: times the mean degree: far below the degrees (a sample's is about 1), so it acts as
#: ``L^-1`` on the wanted eigenvectors; a positive definite Schur complement. At 100,000 x
#: 64 LOBPCG took 12 iterations for 1e-4 to 1e-2 (14 at 1e-1), 38 with Jacobi
#: (docs/PERFORMANCE.md, "The embedding with anchors")
ANCHOR_SHIFT = 1e-3
#: operations per sample and cluster of the spectral embedding of a graph of anchors
#: (LOBPCG with the anchors' exact preconditioner: about 12 iterations whatever n),
#: from the default fit at 10^6 x 64 (22.6 s; docs/PERFORMANCE.md, "The embedding with
#: anchors")
ANCHORED_OPS = 2000.0


def _lobpcg_complement(L, Z, wanted, rng, tol, anchors=None):
    """The ``wanted`` smallest eigenvectors of ``L`` orthogonal to ``Z``, or None when
    LOBPCG does not converge: when, after at most 1000 iterations, a column's residual
    norm exceeds ``sqrt(tol)`` times the Gershgorin bound on ``||L||`` (at least 1)."""
    L = L.tocsr()
    n, degrees = L.shape[0], L.diagonal()
    inverse = None if anchors is None else anchor_preconditioner(
        L + ANCHOR_SHIFT * float(degrees.mean()) * scipy.sparse.identity(n, format="csr"),
        anchors)
    if inverse is None:
        preconditioner = scipy.sparse.diags(1.0 / np.maximum(degrees, np.finfo(float).tiny))
    else:
        preconditioner = scipy.sparse.linalg.LinearOperator(
            (n, n), matvec=lambda v: inverse(v.reshape(n, -1)).reshape(v.shape),
            matmat=inverse, dtype=float)
    start = rng.standard_normal((n, wanted))
    with warnings.catch_warnings():
        # non-convergence is checked below from the residuals, not from the warning
        warnings.simplefilter("ignore", UserWarning)
        values, vectors = scipy.sparse.linalg.lobpcg(
            L, start, M=preconditioner, Y=Z, largest=False, tol=tol, maxiter=1000)
    scale = max(1.0, float(abs(L).sum(axis=1).max()))  # Gershgorin bound on ||L||
    residual = np.linalg.norm(L @ vectors - vectors * values, axis=0)
    if not np.all(np.isfinite(residual)) or residual.max() > np.sqrt(tol) * scale:
        return None
    return vectors


def _shift_invert(L, A, h, rng):
    """The h smallest eigenvectors of ``L``, by increasing eigenvalue, by shift-invert
    Lanczos about a shift just below the spectrum, ``-1e-6 max(1, 2 d_max)`` (1e-6 of the
    Gershgorin bound ``2 d_max`` on ``||L||``, or of 1 if that is smaller: ``L - shift I``
    is positive definite, its condition number at most ``1e6 + 1``), with one sparse LU
    whose symmetric ordering keeps its fill far below COLAMD's."""
    n = L.shape[0]
    shift = -1e-6 * max(1.0, 2.0 * symmetric_degree(A).max())
    lu = scipy.sparse.linalg.splu(
        (L - shift * scipy.sparse.identity(n, format="csr")).tocsc(),
        permc_spec="MMD_AT_PLUS_A")
    inverse = scipy.sparse.linalg.LinearOperator((n, n), matvec=lu.solve, dtype=float)
    values, vectors = scipy.sparse.linalg.eigsh(L, k=h, sigma=shift, which="LM",
                                                OPinv=inverse, v0=rng.standard_normal(n))
    return vectors[:, np.argsort(values, kind="stable")]


class SpectralEmbeddingBlock(Block):
    """``F`` = eigenvectors of the h smallest eigenvalues of ``L_G`` (spectral clustering).

    Parameters
    ----------
    seed : int, default=0
        Seed of the eigensolver's start vectors.
    """

    name = "spectral_embedding"
    accepts_sparse = True
    kind = "init"
    reads = ("G",)
    writes = ("F",)
    requires = ("seed",)

    def __init__(self, seed: int = 0):
        self.seed = check_value("seed", seed, SEED)

    def cost(self, size) -> Cost:
        """LOBPCG's sparse products and Rayleigh-Ritz steps: its iterations grow with n
        (the graph's conditioning), about 7 h n^1.6 operations in the default fits of
        n = 20,000 to 100,000 x 64 (0.6 to 6.3 s wall, two threads; 55 h n^1.6 had been
        CPU seconds of one thread on uniform data, benchmarks/bench_estimate.py, 7-10x
        above these: docs/PERFORMANCE.md, "Large n, now"). Memory: the block vectors
        and the QR's copies (12 n h floats), the graph's sparse Laplacian and its
        factors (8 n k), the Lanczos basis and work vectors (30 n), and on the dense path
        (:func:`dense_path`) the dense Laplacian and the eigensolver's copy of it
        (3 n^2): 1.5 to 2.6 times the peak measured by
        ``tests/test_initial_blocks.py``. A graph of many components adds an (n, c)
        basis of them, not counted.

        With m anchors (beyond :data:`SHIFT_INVERT_N` samples) LOBPCG's preconditioner is
        exact and its iterations no longer grow with n (12 at 100,000 x 64): priced
        :data:`ANCHORED_OPS` per sample and cluster (the fit at 10^6 x 64 took 22.6 s,
        the one at 10^5 1.1 s, half its price), plus the anchors' Schur complement
        (``2 m^2 + 2 min(m^2, n k^2)`` floats, as the embedding block's).

        Declared: ``7 h n^1.6`` operations, or ``ANCHORED_OPS n h`` with anchors;
        ``(12 h + 8 k + 30) n`` floats, plus ``3 n^2`` on the dense path, plus
        ``2 m^2 + 2 min(m^2, n k^2)`` with m anchors on the LOBPCG path."""
        n, h, k = size.n_samples, size.n_clusters, size.n_neighbors
        floats = (12 * h + 8 * k + 30) * n + (3 * n * n if dense_path(n, h) else 0)
        m = resolve_anchors(size.settings.n_anchors, n)
        if m is None or n <= SHIFT_INVERT_N or dense_path(n, h):
            return Cost(ops=7.0 * h * n**1.6, memory={"spectral_embedding": floats * 8})
        floats += anchor_preconditioner_floats(n, k, m)
        return Cost(ops=ANCHORED_OPS * n * h, memory={"spectral_embedding": floats * 8})

    def step(self, state: State) -> State:
        return state.replace(F=smallest_eigenvectors(state.G, state.problem.n_clusters,
                                                     self.seed, anchors=state.problem.anchors))
