"""F update (paper eq. F.2) by generalized power iteration (Nie et al. 2017)."""

from __future__ import annotations

import numpy as np

from ...core.parts import Cost
from ...core.state import State
from ...core.validation import Interval, check_value
from ...model.subproblems import EmbeddingSystem
from ..base import Block


def polar_factor(M: np.ndarray) -> np.ndarray:
    """``argmax_{F'F=I} Tr(F'M) = U V'`` for the thin SVD ``M = U s V'``.

    Computed as ``M (M'M)^(-1/2)`` from the (h, h) eigendecomposition of ``M'M``: n h^2
    work instead of a tall SVD (docs/PERFORMANCE.md, "Smaller pieces"). Squaring the
    condition number costs accuracy, so the result is kept only when it is orthonormal
    to 1e-12 (no entry of ``F'F - I`` larger than 1e-12 in magnitude: at 1e-12 it is
    kept); otherwise the SVD decides.
    """
    values, vectors = np.linalg.eigh(M.T @ M)
    if values[0] > 0:
        F = M @ ((vectors / np.sqrt(values)) @ vectors.T)
        gram = F.T @ F
        gram[np.diag_indices_from(gram)] -= 1.0
        if np.abs(gram).max() <= 1e-12:
            return F
    U, _, Vt = np.linalg.svd(M, full_matrices=False)
    return U @ Vt


class EmbeddingBlock(Block):
    """Minimize the objective's F subproblem ``Tr(F'AF) - 2 Tr(F'B)`` over ``F'F = I``
    (:class:`~causefs.model.subproblems.EmbeddingSystem`; CAUSE-FS: ``A = alpha I +
    L_G``, ``B = alpha X~ W``).

    Generalized power iteration maximizes ``Tr(F'(eta I - A)F) + 2 Tr(F'B)`` by
    ``F <- polar(2 (eta I - A) F + 2 B)``; every iteration is monotone when
    ``eta >= lambda_max(A)``. The terms bound the largest eigenvalue of their parts
    (Gershgorin's ``2 max degree`` for a graph Laplacian: an iterative eigensolver for
    lambda_max was seen to stall); the identity parts are constant on ``F'F = I``.
    Warm-started from the current F; only products with the (sparse) operators are
    needed.

    Parameters
    ----------
    max_iter : int, default=200
        Most GPI iterations per call.
    tol : float, default=1e-10
        Stop when the decrease of the subproblem objective is at most
        ``tol * (|value| + 1e-300)`` (``value`` the new one; the ``1e-300`` makes a
        value of 0 stop on an absolute bound).
    """

    name = "embedding"
    accepts_sparse = True
    kind = "descent"
    reads = ("X_adjusted", "mu", "W", "F", "G")
    writes = ("F",)
    subproblem = EmbeddingSystem

    def __init__(self, max_iter: int = 200, tol: float = 1e-10):
        self.max_iter = check_value("max_iter", max_iter, Interval(int, 0))
        self.tol = check_value("tol", tol, Interval(float, 0))

    def cost(self, size) -> Cost:
        """At most ``max_iter`` iterations of a sparse product with L_G and a polar
        factor, memory-bound passes over (n, h) arrays (measured: benchmarks/
        bench_estimate.py). Memory: the (n, h) iterates and their products, and the
        sparse Laplacian of the k-neighbour graph G formed from it (2 n k entries and
        the copies made forming them), an upper bound measured with tracemalloc
        (tests/test_descent_block_costs.py).

        Declared: ``30 max_iter n h`` operations; ``8 n h + 12 n k`` floats."""
        n, h, k = size.n_samples, size.n_clusters, size.n_neighbors
        return Cost(ops=30.0 * self.max_iter * n * h,
                    memory={"embedding": (8 * n * h + 12 * n * k) * 8})

    def step(self, state: State) -> State:
        system = state.problem.objective.subproblem(EmbeddingSystem, state, "F")
        B, shift = system.rhs, system.shift  # shift: eta less the identity parts
        L = system.apply  # the operators are formed once: every iteration multiplies

        def value(F, LF):  # Tr(F'A F) - 2 Tr(F'B) less the constant identity part
            return float(np.einsum("ij,ij->", F, LF) - 2.0 * np.einsum("ij,ij->", F, B))

        F = state.F
        LF = L(F)
        current = value(F, LF)
        for _ in range(self.max_iter):
            F_new = polar_factor(shift * F - LF + B)
            LF_new = L(F_new)
            new = value(F_new, LF_new)
            if new >= current:  # GPI is monotone: a rise is rounding, a tie no progress
                break  # (a subproblem constant in F keeps F, not polar(0)'s arbitrary basis)
            F, LF, decrease, current = F_new, LF_new, current - new, new
            if decrease <= self.tol * (abs(current) + 1e-300):
                break
        return state.replace(F=F)
