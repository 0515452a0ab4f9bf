"""Initial embedding: spectral embedding of the fused graph."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from ..core.parts import Cost
from ..core.state import State
from ..core.validation import SEED, check_value
from ..numerics.laplacian import laplacian_matrix, symmetric_degree
from .base import Block


def smallest_eigenvectors(A, h: int, seed: int = 0, tol: float = 1e-8) -> np.ndarray:
    """Orthonormal eigenvectors of the h smallest eigenvalues of ``L_A``, (n, h).

    LOBPCG with a Jacobi (inverse degree) preconditioner, seeded for reproducibility:
    it only needs sparse products, O(n k h) per iteration. Shift-invert Lanczos needs
    a sparse LU of ``L_A`` whose fill-in grows superlinearly with n (docs/PERFORMANCE.md,
    "Spectral initialization"); it stays as the fallback when LOBPCG does not reach
    ``tol``. Below
    200 samples (or when h is too large for either) a dense eigendecomposition is
    cheaper and exact.
    """
    L = laplacian_matrix(A)
    n = L.shape[0]
    if n < 200 or 5 * h >= n:
        _, vectors = scipy.linalg.eigh(L.toarray(), subset_by_index=[0, h - 1])
        return vectors
    rng = np.random.default_rng(seed)
    L = L.tocsr()
    preconditioner = scipy.sparse.diags(1.0 / np.maximum(L.diagonal(), np.finfo(float).tiny))
    with warnings.catch_warnings():
        # non-convergence is checked below from the residuals, not from the warning
        warnings.simplefilter("ignore", UserWarning)
        values, vectors = scipy.sparse.linalg.lobpcg(
            L, rng.standard_normal((n, h)), M=preconditioner, largest=False, tol=tol,
            maxiter=1000)
    scale = max(1.0, float(abs(L).sum(axis=1).max()))  # Gershgorin bound on ||L||
    residual = np.linalg.norm(L @ vectors - vectors * values, axis=0)
    if not np.all(np.isfinite(residual)) or residual.max() > np.sqrt(tol) * scale:
        shift = -1e-6 * max(1.0, 2.0 * symmetric_degree(A).max())
        lu = scipy.sparse.linalg.splu(
            (L - shift * scipy.sparse.identity(n, format="csr")).tocsc(),
            permc_spec="MMD_AT_PLUS_A")  # symmetric ordering: far less fill than COLAMD
        inverse = scipy.sparse.linalg.LinearOperator((n, n), matvec=lu.solve, dtype=float)
        _, vectors = scipy.sparse.linalg.eigsh(L, k=h, sigma=shift, which="LM",
                                               OPinv=inverse, v0=rng.standard_normal(n))
    # the solvers' vectors are orthonormal to ~1e-12; make it exact for F'F = I
    Q, R = np.linalg.qr(vectors)
    return Q * np.sign(np.diag(R))


class SpectralEmbeddingBlock(Block):
    """``F`` = eigenvectors of the h smallest eigenvalues of ``L_G`` (spectral clustering).

    Parameters
    ----------
    seed : int
        Seed of the eigensolver's start vectors.
    """

    name = "spectral_embedding"
    kind = "init"
    reads = ("G",)
    writes = ("F",)
    requires = ("seed",)

    def __init__(self, seed: int = 0):
        self.seed = check_value("seed", seed, SEED)

    def cost(self, size) -> Cost:
        """LOBPCG's sparse products and Rayleigh-Ritz steps: its iterations grow with n
        (the graph's conditioning), about 55 h n^1.6 operations as measured from n =
        10,000 to 160,000 (within 0.7x to 1.5x; benchmarks/bench_estimate.py); the block
        vectors in memory."""
        n, h = size.n_samples, size.n_clusters
        return Cost(ops=55.0 * h * n**1.6, memory={"spectral_embedding": 12 * n * h * 8})

    def step(self, state: State) -> State:
        return state.replace(F=smallest_eigenvectors(state.G, state.problem.n_clusters,
                                                     self.seed))
