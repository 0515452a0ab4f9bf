"""F update (paper eq. F.2): a preconditioned subspace descent, or the paper's
generalized power iteration (Nie et al. 2017)."""

from __future__ import annotations

import numpy as np

from ...core.parts import Cost
from ...core.state import State
from ...core.validation import Interval, check_choice, check_value
from ...model.subproblems import EmbeddingSystem
from ...numerics.anchors import resolve_anchors
from ...numerics.preconditioners import (anchor_preconditioner,
                                        anchor_preconditioner_floats, jacobi_preconditioner)
from ..base import Block

#: solvers of the F subproblem: "gpi" (the paper's generalized power iteration),
#: "subspace" (Rayleigh-Ritz on the current F, its preconditioned gradient and its last
#: step, as LOBPCG searches) and "auto" (GPI up to SUBSPACE_N samples, subspace above)
EMBEDDING_SOLVERS = ("auto", "gpi", "subspace")
#: "auto" takes the subspace solver above this many samples. GPI's iterations to its
#: tolerance grow with n (the graph's small eigengaps): up to USPS's 9298 samples it
#: stopped by its tolerance (27 to 99 iterations a call, faster there than the subspace
#: solver, whose steps cost about eight GPI iterations), from 20,000 it stopped at its
#: 200 iterations short of the minimum, which the subspace solver reached in 9 steps
#: (docs/PERFORMANCE.md, "The embedding's subproblem")
SUBSPACE_N = 10_000
#: ``max_iter=None``: at most this many iterations (GPI) or steps (subspace) a call
DEFAULT_MAX_ITER = {"gpi": 200, "subspace": 30}
#: steps a subspace call is priced at (at most its max_iter): the calls of the default
#: fits at 100,000 x 64 stopped by the tolerance after 3 to 8 steps with anchors (the
#: exact preconditioner) and 5 to 10 without (Jacobi); pricing the cap of 30 overstated
#: the block 5-7x (docs/PERFORMANCE.md, "The embedding with anchors")
SUBSPACE_STEPS = 8
#: GPI iterations on the reduced problem of one subspace step (it has at most 3h rows:
#: an iteration costs microseconds; the outer step resumes where a capped one stops)
REDUCED_ITER = 10


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


def subproblem_value(F: np.ndarray, AF: np.ndarray, B: np.ndarray) -> float:
    """``Tr(F'AF) - 2 Tr(F'B)`` given the product ``AF``."""
    return float(np.einsum("ij,ij->", F, AF) - 2.0 * np.einsum("ij,ij->", F, B))


def orthonormal_basis(Z: np.ndarray) -> np.ndarray:
    """An orthonormal basis (n, r) of the span of the columns of ``Z`` (n, q).

    Columns are scaled to unit norm, then orthonormalized through the eigendecomposition
    of their Gram matrix (q x q: n q^2 work, no tall QR), twice, as in CholeskyQR2: the
    first pass loses orthogonality by the Gram's condition number, the second restores
    it. Directions whose Gram eigenvalue is at most 1e-12 of the largest (dependent
    columns, a converged gradient) are dropped, and zero columns with them. The unit
    scaling is applied to the Gram matrix and to the small (q, r) factor, not to Z:
    each pass reads Z twice (its Gram, its product with the factor), a quarter of the
    embedding block's time at 100,000 samples where Z itself was scaled
    (docs/PERFORMANCE.md, "The embedding with anchors").
    """
    for _ in range(2):
        gram = Z.T @ Z
        squares = np.diag(gram).copy()
        nonzero = squares > 0
        if not nonzero.all():  # zero columns go
            Z, gram, squares = Z[:, nonzero], gram[np.ix_(nonzero, nonzero)], squares[nonzero]
        if Z.shape[1] == 0:
            return Z
        scale = 1.0 / np.sqrt(squares)
        values, vectors = np.linalg.eigh(scale[:, None] * gram * scale[None, :])
        kept = values > 1e-12 * values[-1]
        Z = Z @ (scale[:, None] * (vectors[:, kept] / np.sqrt(values[kept])))
    return Z


def monotone_descent(step, B: np.ndarray, F: np.ndarray, AF: np.ndarray, max_iter: int,
                     tol: float) -> np.ndarray:
    """The loop both solvers share: ``F, AF <- step(F, AF)`` while the value
    ``Tr(F'AF) - 2 Tr(F'B)`` falls.

    Stops after ``max_iter`` steps, when the value stops falling (the step is not taken:
    a rise is rounding, and a problem constant in F keeps F, not polar(0)'s arbitrary
    basis), or when it falls by at most ``tol * (|value| + 1e-300)`` (``value`` the new
    one; the ``1e-300`` makes a value of 0 stop on an absolute bound).
    """
    current = subproblem_value(F, AF, B)
    for _ in range(max_iter):
        F_new, AF_new = step(F, AF)
        new = subproblem_value(F_new, AF_new, B)
        if new >= current:
            break
        F, AF, decrease, current = F_new, AF_new, current - new, new
        if decrease <= tol * (abs(current) + 1e-300):
            break
    return F


def gpi_descent(apply, shift: float, B: np.ndarray, F: np.ndarray, max_iter: int,
                tol: float) -> np.ndarray:
    """Generalized power iteration on ``min Tr(F'AF) - 2 Tr(F'B)``, ``F'F = I``, from F.

    ``F <- polar(2 (eta I - A) F + 2 B)`` with ``eta = shift >= lambda_max(A)`` (``apply``
    multiplies by A): every iteration is monotone (:func:`monotone_descent` stops it).
    """
    def step(F, AF):
        F_new = polar_factor(shift * F - AF + B)
        return F_new, apply(F_new)

    return monotone_descent(step, B, F, apply(F), max_iter, tol)


def reduced_minimizer(A: np.ndarray, B: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Approximately ``argmin Tr(Y'AY) - 2 Tr(Y'B)`` over ``Y'Y = I`` for a small
    symmetric A (q, q), B and the start Y (q, h).

    Starts from the better of Y (orthonormalized) and the Ritz vectors of A's h smallest
    eigenvalues turned by the rotation that best meets B (``Tr(Y'AY)`` is the same for
    every rotation of an invariant subspace; ``polar(U'B)`` maximizes ``Tr(Y'B)`` among
    them), then runs at most :data:`REDUCED_ITER` GPI iterations with the exact shift
    ``lambda_max(A)``. Never worse than the start Y orthonormalized.
    """
    h = Y.shape[1]
    values, vectors = np.linalg.eigh(A)
    ritz = vectors[:, :h] @ polar_factor(vectors[:, :h].T @ B)
    Y = min((polar_factor(Y), ritz), key=lambda Z: subproblem_value(Z, A @ Z, B))
    return gpi_descent(lambda Z: A @ Z, float(values[-1]), B, Y, REDUCED_ITER, 0.0)


def subspace_descent(apply, precondition, B: np.ndarray, F: np.ndarray, max_iter: int,
                     tol: float) -> np.ndarray:
    """Preconditioned subspace descent on ``min Tr(F'AF) - 2 Tr(F'B)``, ``F'F = I``.

    Each step searches the span of F, its gradient ``AF - B`` projected off F and
    preconditioned (an approximate inverse of A), and its last step (the space
    LOBPCG searches for eigenvectors), and moves to the best point of that space it
    finds (:func:`reduced_minimizer` on the space's ``V'AV`` and ``V'B``, started from
    F). F lies in the space, so a step never raises the value (:func:`monotone_descent`
    stops the steps). On the first step the last step is F - F = 0, which adds no
    direction. A step multiplies A by the 2h new directions where a GPI
    iteration multiplies it by h, and it does not slow down with the graph's eigengaps
    as GPI does (docs/PERFORMANCE.md, "The embedding's subproblem").

    Parameters
    ----------
    apply : callable
        ``F -> (A - c I) F`` for any number of columns (c the identity part, constant on
        ``F'F = I``).
    precondition : callable or None
        ``R -> P R`` on (n, q) blocks, P near ``A^-1`` (with its identity part;
        :mod:`causefs.numerics.preconditioners`); None searches the plain gradient.
    B : ndarray of shape (n, h)
    F : ndarray of shape (n, h)
        The start, ``F'F = I``.
    """
    h = F.shape[1]
    previous = [F]  # the F of the step before: its last step is F - previous

    def step(F, AF):
        gradient = AF - B
        gradient -= F @ (F.T @ gradient)  # the tangent part, then preconditioned
        if precondition is not None:
            gradient = precondition(gradient)
        # the new directions, orthonormal to F (the space is [F, D], F = [F, D] [I; 0]):
        # projected and orthonormalized twice, as block Gram-Schmidt must be; once
        # leaves F's share of a direction near convergence (a gradient of rounding
        # size, scaled to unit length) far above rounding
        D = np.hstack([gradient, F - previous[0]])
        previous[0] = F
        for _ in range(2):
            D = orthonormal_basis(D - F @ (F.T @ D))
        AD = apply(D)
        FAD = F.T @ AD
        reduced = np.block([[F.T @ AF, FAD], [FAD.T, D.T @ AD]])
        start = np.vstack([np.eye(h), np.zeros((D.shape[1], h))])
        Y = reduced_minimizer(0.5 * (reduced + reduced.T), np.vstack([F.T @ B, D.T @ B]),
                              start)
        return F @ Y[:h] + D @ Y[h:], AF @ Y[:h] + AD @ Y[h:]

    return monotone_descent(step, B, F, apply(F), max_iter, tol)


class EmbeddingBlock(Block):
    """Minimize the objective's F subproblem ``Tr(F'AF) - 2 Tr(F'B)`` over ``F'F = I``
    (:class:`~causefs.model.subproblems.EmbeddingSystem`; CAUSE-FS: ``A = alpha I +
    L_G``, ``B = alpha X~ W``), warm-started from the current F; only products with the
    (sparse) operators are needed.

    ``solver="subspace"`` descends by :func:`subspace_descent`: every step moves to the
    best point of a small space holding F, so it is monotone, and it reaches the
    minimum in tens of operator products where GPI needs hundreds at large n; the
    default, ``"auto"``, takes it above :data:`SUBSPACE_N` samples.
    ``solver="gpi"`` is the paper's generalized power iteration
    (:func:`gpi_descent`): it maximizes ``Tr(F'(eta I - A)F) + 2 Tr(F'B)`` by
    ``F <- polar(2 (eta I - A) F + 2 B)``, monotone when ``eta >= lambda_max(A)``; the
    terms bound the largest eigenvalue of their parts (Gershgorin's ``2 max degree``
    for a graph Laplacian: an iterative eigensolver for lambda_max was seen to stall);
    the identity parts are constant on ``F'F = I``.

    Parameters
    ----------
    max_iter : int or None, default=None
        Most iterations (GPI) or steps (subspace) per call; None: 200 iterations or 30
        steps (:data:`DEFAULT_MAX_ITER`).
    tol : float, default=1e-10
        Stop when the decrease of the subproblem objective is at most
        ``tol * (|value| + 1e-300)`` (``value`` the new one; the ``1e-300`` makes a
        value of 0 stop on an absolute bound).
    solver : {"auto", "gpi", "subspace"}, default="auto"
        ``auto``: GPI up to :data:`SUBSPACE_N` samples, the subspace solver above.
    """

    name = "embedding"
    accepts_sparse = True
    kind = "descent"
    reads = ("X_adjusted", "mu", "W", "F", "G")
    writes = ("F",)
    subproblem = EmbeddingSystem

    def __init__(self, max_iter: int | None = None, tol: float = 1e-10, solver: str = "auto"):
        self.max_iter = None if max_iter is None else check_value("max_iter", max_iter,
                                                                  Interval(int, 0))
        self.tol = check_value("tol", tol, Interval(float, 0))
        self.solver = check_choice("solver", solver, EMBEDDING_SOLVERS)

    def resolved(self, n: int) -> tuple[str, int]:
        """The solver a problem of ``n`` samples runs ("auto" resolved) and its most
        iterations or steps a call."""
        solver = self.solver
        if solver == "auto":
            solver = "subspace" if n > SUBSPACE_N else "gpi"
        return solver, DEFAULT_MAX_ITER[solver] if self.max_iter is None else self.max_iter

    def cost(self, size) -> Cost:
        """At most ``max_iter`` GPI iterations of a sparse product with L_G and a polar
        factor, memory-bound passes over (n, h) arrays (measured: benchmarks/
        bench_estimate.py); a subspace step (:data:`SUBSPACE_STEPS` of them) costs
        about eight of them (products with
        2h directions, their orthonormal basis and the reduced problem: 36 ms against
        4.4 ms at 20,000 x 10). Memory: the (n, h) iterates and their products (the
        subspace's directions and their products are 2h wide), and the sparse
        Laplacian of the k-neighbour graph G formed from it (2 n k entries and the
        copies made forming them), an upper bound measured with tracemalloc
        (tests/test_descent_block_costs.py). With m anchors the subspace solver's
        preconditioner adds the anchors' Schur complement: its sparse product
        (``min(m^2, n k^2)`` entries) and its dense copy and factor (``2 m^2``); its
        ``m^3 / 3`` operations are not counted (a tenth of a step at 10^6 x 10).

        Declared: GPI ``30 max_iter n h`` operations and ``8 n h + 12 n k`` floats;
        subspace ``240 s n h`` operations, ``s = min(max_iter, SUBSPACE_STEPS)`` (the
        steps its calls take, not its cap), and ``20 n h + 12 n k`` floats, plus
        ``2 m^2 + 2 min(m^2, n k^2)`` with m anchors."""
        n, h, k = size.n_samples, size.n_clusters, size.n_neighbors
        solver, max_iter = self.resolved(n)
        if solver == "gpi":
            return Cost(ops=30.0 * max_iter * n * h,
                        memory={"embedding": (8 * n * h + 12 * n * k) * 8})
        floats = 20 * n * h + 12 * n * k
        m = resolve_anchors(size.settings.n_anchors, n)
        if m is not None:
            floats += anchor_preconditioner_floats(n, k, m)
        steps = min(max_iter, SUBSPACE_STEPS)
        return Cost(ops=240.0 * steps * n * h, memory={"embedding": floats * 8})

    def step(self, state: State) -> State:
        system = state.problem.objective.subproblem(EmbeddingSystem, state, "F")
        solver, max_iter = self.resolved(state.F.shape[0])
        if solver == "gpi":
            F = gpi_descent(system.apply, system.shift, system.rhs, state.F, max_iter,
                            self.tol)
        else:
            F = subspace_descent(system.apply, preconditioner(system, state.problem.anchors),
                                 system.rhs, state.F, max_iter, self.tol)
        return state.replace(F=F)


def preconditioner(system: EmbeddingSystem, anchors):
    """The subspace descent's preconditioner: A's exact inverse through the anchors'
    Schur complement in an anchored fit (:func:`~causefs.numerics.preconditioners.
    anchor_preconditioner`), else (or where it does not apply) Jacobi, else none (an
    operator without a diagonal)."""
    if anchors is not None:
        A = system.matrix()
        precondition = None if A is None else anchor_preconditioner(A, anchors)
        if precondition is not None:
            return precondition
    diagonal = system.diagonal()
    return None if diagonal is None else jacobi_preconditioner(diagonal)
