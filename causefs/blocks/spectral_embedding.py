"""Initial embedding: spectral embedding of the fused graph."""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from ..graphs import laplacian_matrix, symmetric_degree
from ..state import State
from .base import Block


def smallest_eigenvectors(A, h: int, seed: int = 0) -> np.ndarray:
    """Orthonormal eigenvectors of the h smallest eigenvalues of ``L_A``, (n, h).

    Shift-invert Lanczos (ARPACK) slightly below 0, where ``L_A`` is positive
    definite, seeded for reproducibility; below 200 samples (or when h is too large
    for ARPACK) a dense eigendecomposition is cheaper and exact.
    """
    L = laplacian_matrix(A)
    n = L.shape[0]
    if n < 200 or h >= n - 1:
        _, vectors = scipy.linalg.eigh(L.toarray(), subset_by_index=[0, h - 1])
        return vectors
    shift = -1e-6 * max(1.0, 2.0 * symmetric_degree(A).max())
    v0 = np.random.default_rng(seed).standard_normal(n)
    _, vectors = scipy.sparse.linalg.eigsh(L.tocsc(), k=h, sigma=shift, which="LM", v0=v0)
    # ARPACK's vectors are orthonormal to ~1e-12; make it exact for F'F = I
    Q, R = np.linalg.qr(vectors)
    return Q * np.sign(np.diag(R))


class SpectralEmbeddingBlock(Block):
    """``F`` = eigenvectors of the h smallest eigenvalues of ``L_G`` (spectral clustering)."""

    name = "spectral_embedding"
    kind = "init"
    reads = ("G",)
    writes = ("F",)

    def step(self, state: State) -> State:
        p = state.problem
        return state.replace(F=smallest_eigenvectors(state.G, p.n_clusters, p.seed))
