"""CNAFS, convex non-negative matrix factorization with an adaptive graph for unsupervised
feature selection (Yuan, You, He & Li, IEEE Trans. Cybernetics 2022)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core.validation import NONE, Interval, check_value
from .base import Selector
from .fsdk import weights_step
from .udfs import has_converged, l21_reweights, row_norm_scores

#: generalized power iterations of the F step at most (warm-started from the last F;
#: each one lowers the F subproblem, so a capped step still lowers the objective)
GPI_MAX_ITER = 200

#: the F step stops earlier when a power iteration moves F by at most this (Frobenius)
GPI_TOL = 1e-7


class CNAFSResult(NamedTuple):
    W: np.ndarray  #: (d_varying, c) feature weights over the non-constant features
    F: np.ndarray  #: (n, c) pseudo-labels, F'F = I
    G: np.ndarray  #: (n, m) non-negative convex-NMF combination weights
    V: np.ndarray  #: (m, n) non-negative convex-NMF coefficients
    graph: AdaptiveGraph  #: the last adaptive graph (its symmetric part)
    objective: list  #: the objective (:func:`cnafs_objective`) after every iteration


class CNAFSWeights(NamedTuple):
    """The weights of the objective's terms (the paper's symbols)."""

    alpha: float  #: pseudo-label smoothness on the graph, 2 alpha Tr(F'LF)
    beta: float  #: entropy of the graph, 2 alpha beta sum s_ij ln s_ij
    gamma: float  #: coefficient smoothness on the graph, gamma Tr(VLV')
    lam: float  #: row sparsity of W, lam ||W||_2,1
    epsilon: float  #: coefficient orthogonality, epsilon Tr(V'QV)


class AdaptiveGraph(NamedTuple):
    """The symmetric part ``A = (S + S')/2`` of a learned graph ``S``, its degrees and
    ``sum_ij s_ij ln s_ij`` of ``S`` itself (the Laplacian terms see only ``A``:
    ``Tr(F'L_A F) = 1/2 sum_ij s_ij ||f_i - f_j||^2``)."""

    affinity: np.ndarray  #: (n, n) A
    degrees: np.ndarray  #: (n,) A 1
    neg_entropy: float  #: sum_ij s_ij ln s_ij

    @classmethod
    def from_similarity(cls, S: np.ndarray, neg_entropy: float) -> "AdaptiveGraph":
        """The graph of ``S``, which is overwritten by ``A`` (no second n x n copy)."""
        S += S.T
        S *= 0.5
        return cls(S, S.sum(axis=1), neg_entropy)

    def laplacian_matmul(self, M: np.ndarray) -> np.ndarray:
        """``L M`` for ``M`` (n, k), ``L = diag(degrees) - A``."""
        return self.degrees[:, None] * M - self.affinity @ M


def entropic_similarity(F: np.ndarray, V: np.ndarray, alpha: float, beta: float,
                        gamma: float) -> tuple[np.ndarray, float]:
    """The S step: ``S`` (n, n), rows on the simplex and ``s_ii = 0``, minimizing
    ``sum_ij s_ij e_ij + 2 alpha beta sum_ij s_ij ln s_ij`` with
    ``e_ij = alpha ||f_i - f_j||^2 + gamma/2 ||v_i - v_j||^2`` (columns ``v_i`` of
    ``V`` (m, n)), in closed form ``s_ij = softmax_{j != i}(-e_ij / (2 alpha beta))``;
    also returns ``sum_ij s_ij ln s_ij``. One n x n buffer: with ``z = -e / (2 alpha
    beta)``, ``ln s_ij = z_ij - lse_i`` gives ``sum s ln s = sum s z - sum_i lse_i``."""
    embedding = np.hstack([np.sqrt(alpha) * F, np.sqrt(0.5 * gamma) * V.T])
    squared = np.einsum("ij,ij->i", embedding, embedding)
    S = embedding @ embedding.T
    S *= 2.0
    S -= squared[:, None]
    S -= squared[None, :]
    np.minimum(S, 0.0, out=S)  # -e_ij, clipped of rounding above 0
    S /= 2.0 * alpha * beta  # z_ij
    np.fill_diagonal(S, -np.inf)  # s_ii = 0
    row_max = S.max(axis=1)
    S -= row_max[:, None]
    np.exp(S, out=S)
    row_sums = S.sum(axis=1)
    S /= row_sums[:, None]
    weighted_costs = (squared.sum() + squared @ S.sum(axis=0)
                      - 2.0 * np.einsum("ij,ij->", S @ embedding, embedding))
    return S, float(-weighted_costs / (2.0 * alpha * beta)
                    - (row_max + np.log(row_sums)).sum())


def stiefel_quadratic(apply_A, eta: float, B: np.ndarray, F: np.ndarray):
    """The F step: ``min Tr(F'AF) - 2 Tr(F'B) s.t. F'F = I`` by the generalized power
    iteration (Nie, Zhang & Li 2017), warm-started at ``F``: with ``eta >= lambda_max(A)``
    each step ``F <- polar(2 (eta F - A F + B))`` does not raise the objective.
    ``apply_A(F)`` returns ``A F``; returns the new F (n, c)."""
    for _ in range(GPI_MAX_ITER):
        U, _, Vt = np.linalg.svd(eta * F - apply_A(F) + B, full_matrices=False)
        step = np.linalg.norm(U @ Vt - F)
        F = U @ Vt
        if step <= GPI_TOL:
            break
    return F


class FactorGram(NamedTuple):
    """The sample Gram ``K = XX'`` (n, n) split ``K = K+ - K-`` (``K-`` None when
    ``K >= 0``, as for non-negative data): the convex-NMF term is
    ``||X' - X'GV||^2 = Tr(K) - 2 Tr(G'KV') + Tr(V'G'KGV)``."""

    positive: np.ndarray
    negative: np.ndarray | None

    @classmethod
    def of(cls, X: np.ndarray) -> "FactorGram":
        K = X @ X.T
        if K.min() >= 0:
            return cls(K, None)
        return cls(np.maximum(K, 0.0), np.maximum(-K, 0.0))

    def matmul(self, M: np.ndarray, part: str) -> np.ndarray:
        """``K+ M`` or ``K- M`` (``part`` 'positive' or 'negative'; 0 for an absent K-)."""
        K = getattr(self, part)
        return np.zeros((self.positive.shape[0], M.shape[1])) if K is None else K @ M

    def trace(self) -> float:
        K = self.positive if self.negative is None else self.positive - self.negative
        return float(np.trace(K))


class GradientSplit(NamedTuple):
    """A block's gradient as ``2 (descent_part - ascent_part)``, both parts >= 0: its
    multiplicative update multiplies the block by ``ascent_part / descent_part``."""

    ascent_part: np.ndarray
    descent_part: np.ndarray

    def update(self, block: np.ndarray) -> np.ndarray:
        """``block * ascent / descent`` (an entry with a 0 descent part stays)."""
        return block * np.divide(self.ascent_part, self.descent_part,
                                 out=np.ones_like(block), where=self.descent_part > 0)


def combination_gradient(gram: FactorGram, G: np.ndarray, V: np.ndarray) -> GradientSplit:
    """The G block: ``grad = 2 (K G VV' - K V')``, split as
    ``(K+ V' + K- G VV', K- V' + K+ G VV')``."""
    VVt = V @ V.T
    return GradientSplit(gram.matmul(V.T, "positive") + gram.matmul(G, "negative") @ VVt,
                         gram.matmul(V.T, "negative") + gram.matmul(G, "positive") @ VVt)


def coefficient_gradient(gram: FactorGram, G: np.ndarray, V: np.ndarray,
                         graph: AdaptiveGraph, gamma: float, epsilon: float) -> GradientSplit:
    """The V block: ``grad = 2 (G'KG V - G'K + gamma V L + epsilon Q V)``, split as
    ``(G'K+ + [G'KG]- V + gamma V A, G'K- + [G'KG]+ V + gamma V D + epsilon Q V)``
    with ``Q = 11' - I`` (m, m), ``D = diag(A 1)`` and ``[.]+``, ``[.]-`` the positive
    and negative parts."""
    KpG, KnG = gram.matmul(G, "positive"), gram.matmul(G, "negative")
    GtKG = G.T @ (KpG - KnG)
    orthogonality = V.sum(axis=0, keepdims=True) - V  # Q V
    return GradientSplit(
        KpG.T + np.maximum(-GtKG, 0.0) @ V + gamma * (V @ graph.affinity),
        KnG.T + np.maximum(GtKG, 0.0) @ V + gamma * V * graph.degrees
        + epsilon * orthogonality)


def cnafs_objective(X_centred, gram: FactorGram, state: CNAFSResult,
                    weights: CNAFSWeights) -> float:
    """The CNAFS objective with our ``X`` (n, d), ``H = I - 11'/n``:

        ||X' - X'GV||^2 + ||H(XW - F)||^2 + lam ||W||_2,1
        + 2 alpha (Tr(F'LF) + beta sum_ij s_ij ln s_ij) + gamma Tr(VLV') + epsilon Tr(V'QV)

    ``L`` the Laplacian of ``(S + S')/2``, ``Q = 11' - I``. ``X_centred`` is ``HX``;
    every n x n product goes through ``gram`` and ``state.graph``."""
    W, F, G, V, graph = state.W, state.F, state.G, state.V, state.graph
    KG = gram.matmul(G, "positive") - gram.matmul(G, "negative")
    factorization = (gram.trace() - 2.0 * np.einsum("ij,ji->", KG, V)
                     + np.einsum("ij,ij->", G.T @ KG, V @ V.T))
    residual = X_centred @ W - (F - F.mean(axis=0))
    column_sums = V.sum(axis=0)
    return float(factorization + np.einsum("ij,ij->", residual, residual)
                 + weights.lam * np.linalg.norm(W, axis=1).sum()
                 + 2.0 * weights.alpha * (np.einsum("ij,ij->", F, graph.laplacian_matmul(F))
                                          + weights.beta * graph.neg_entropy)
                 + weights.gamma * np.einsum("ij,ji->", V, graph.laplacian_matmul(V.T))
                 + weights.epsilon * (column_sums @ column_sums - np.einsum("ij,ij->", V, V)))


class CNAFS(Selector):
    """CNAFS: pseudo-label regression, convex NMF and an adaptive graph learned jointly.

    Yuan, A., You, M., He, D. & Li, X. (2022). Convex Non-Negative Matrix Factorization
    With Adaptive Graph for Unsupervised Feature Selection. IEEE Trans. Cybernetics
    52(6), 5522-5534. With our ``X`` (n, d), ``H = I - 11'/n``, pseudo-labels ``F``
    (n, c), the convex NMF ``X' ~ X'GV`` (each sample a non-negative combination of
    the samples' combinations, ``G`` (n, m), ``V`` (m, n)) and a graph ``S`` (n, n)
    learned from both, CNAFS solves::

        min ||X' - X'GV||^2 + ||H(XW - F)||^2 + lam ||W||_2,1
            + 2 alpha (Tr(F'LF) + beta sum_ij s_ij ln s_ij) + gamma Tr(VLV')
            + epsilon Tr(V'QV)
        s.t. F'F = I, G >= 0, V >= 0, S 1 = 1, S >= 0,

    ``L`` the Laplacian of ``(S + S')/2``, ``Q = 11' - I`` (m, m), by alternating,
    each step not raising the objective: the S step in closed form
    (:func:`entropic_similarity`); ``W = (X'HX + lam D)^-1 X'HF`` with
    ``D_ii = 1 / (2 ||w_i||)`` (one reweighted step of the l2,1 norm,
    :func:`~.fsdk.weights_step`); F by the generalized power iteration on
    ``Tr(F'(H + 2 alpha L)F) - 2 Tr(F'HXW)`` (:func:`stiefel_quadratic`); G and V by
    multiplicative updates (:func:`combination_gradient`, :func:`coefficient_gradient`;
    with ``XX' >= 0`` they are the authors' updates). The score of feature j is
    ``||w_j||``.

    Equation numbers are not cited: the paper's text was not available to us. The
    objective above is the one the public MATLAB code (the Auto-UFSTool toolbox's
    ``CNAFS.m``, whose header cites this paper) evaluates and whose steps it takes,
    read against the paper's abstract (self-expression by convex NMF, pseudo-labels,
    an adaptive graph, l2,1 on W); the derivations here are ours.

    Parameters
    ----------
    alpha : float, default 1.0
        Weight of the pseudo-labels' smoothness on the graph (and, with beta, of the
        graph's entropy).
    beta : float, default 1.0
        Entropy weight: the larger, the flatter each row of S.
    gamma : float, default 1.0
        Weight of the NMF coefficients' smoothness on the graph.
    lam : float, default 1.0
        Weight of ``||W||_2,1``.
    epsilon : float >= 0, default 1e-6
        Weight of ``Tr(V'QV)``, which pushes each sample's coefficients onto one basis.
    n_components : int or None, default None
        m, the number of convex-NMF bases; None uses ``n_clusters``.

        The defaults are the usage example published with a standalone MATLAB
        implementation of the paper (alpha = beta = lambda = gamma = 1,
        epsilon = 1e-6, m = c, up to 1000 iterations); the paper tunes them by grid
        search. The Auto-UFSTool toolbox's driver passes alpha = 1, beta = gamma =
        lambda = 100, epsilon = 1, m = 20: there the code's l2,1 reweighting is
        smoothed by epsilon = 1 (see Notes). With the paper's l2,1 norm, ``W = 0`` is
        the W step's minimizer once lambda >= ``2 max_j ||x_j' H F||`` (10.6 on
        JAFFE scaled to [0, 1]), and lambda = 100 left every row norm of W below
        5e-10 on JAFFE: the scores tie.
    max_iter : int, default 100
    tol : float, default 1e-4
        Stop when the objective changes by at most ``tol`` times its magnitude.

    Notes
    -----
    Where we depart from the public code, and why:

    * ``||W||_2,1`` is majorized with ``D_ii = 1 / (2 max(||w_i||, 1e-8))``, the paper's
      norm; the code's ``1 / (2 sqrt(||w_i||^2 + epsilon))`` reuses the orthogonality
      weight as a smoothing constant, which with ``epsilon = 1`` turns the l2,1 term
      into nearly a ridge penalty.
    * ``s_ii = 0``: the code lets a sample be its own neighbour. ``e_ii = 0`` is every
      row's smallest cost, so as beta shrinks the row's mass moves onto the self-loop,
      which no Laplacian term sees (at beta = 1e-3 on 60 samples the rows' largest
      entry, the diagonal, averaged 1.0: the graph became the identity).
    * The entropy is that of the S the S step solved for (rows on the simplex); the
      code evaluates it on the symmetrized graph, which is not the minimized quantity.
    * The F step runs the generalized power iteration from the last F until a step
      moves F by at most 1e-7 (at most 200 steps).
      W starts from ``D = I`` (the code draws a random W only to form its
      first D).
    * The objective's change is measured relatively (``tol``); the code stops at an
      absolute change of 0.1.
    * The G and V updates split the sample Gram ``XX'`` into positive and negative
      parts (Ding, Li & Jordan 2010), so G, V stay non-negative on data of any sign;
      for non-negative data (the paper's, and every benchmark here: features scaled to
      [0, 1]) they are exactly the code's updates.

    F starts as the orthonormalized uniform random (n, c) matrix, G and V uniform in
    [0, 1), all seeded by ``random_state``. Constant features are left out and score
    -1.

    Cost: two dense n x n matrices live (the Gram ``XX'`` and the graph, built in one
    buffer; one more, the Gram's negative part, for data with negative entries), three
    at the peak (3.04 n^2 floats measured by tracemalloc at n = 1500;
    2.1 GB at n = 9298); ``O(n^2 (c + m))`` an iteration plus ``O(n^2 c)`` a power
    iteration. The W step
    solves a d x d system when d <= n and an n x n one otherwise (never d x d when
    d > n).
    """

    name = "cnafs"
    display_name = "CNAFS"
    depends_on_count = False

    def __init__(self, alpha=1.0, beta=1.0, gamma=1.0, lam=1.0, epsilon=1e-6,
                 n_components=None, max_iter=100, tol=1e-4):
        positive = Interval(float, 0, closed="neither")
        self.alpha = check_value("alpha", alpha, positive)
        self.beta = check_value("beta", beta, positive)
        self.gamma = check_value("gamma", gamma, positive)
        self.lam = check_value("lam", lam, positive)
        self.epsilon = check_value("epsilon", epsilon, Interval(float, 0))
        self.n_components = check_value("n_components", n_components, Interval(int, 1),
                                        NONE)
        self.max_iter = check_value("max_iter", max_iter, Interval(int, 1))
        self.tol = check_value("tol", tol, Interval(float, 0))

    def weights(self) -> CNAFSWeights:
        return CNAFSWeights(self.alpha, self.beta, self.gamma, self.lam, self.epsilon)

    def check_data(self, n_samples, n_features, n_clusters):
        if n_samples < 2:
            raise ValueError(f"CNAFS needs at least 2 samples (s_ii = 0: a sample's "
                             f"neighbours are the others), got {n_samples}")
        if n_clusters > n_samples:
            raise ValueError(f"n_clusters={n_clusters}: CNAFS needs at most n_samples="
                             f"{n_samples} pseudo-labels (F'F = I, F of n_samples rows)")

    def initial_state(self, n_samples, n_features, n_clusters, random_state):
        """Seeded F (orthonormal), G, V (uniform), and W = 0 (its first D is I)."""
        rng = np.random.default_rng(random_state)
        F, _ = np.linalg.qr(rng.random((n_samples, n_clusters)))
        m = self.n_components or n_clusters
        return CNAFSResult(np.zeros((n_features, n_clusters)), F,
                           rng.random((n_samples, m)), rng.random((m, n_samples)),
                           None, [])

    def solve(self, X, *, n_clusters, random_state=0) -> CNAFSResult:
        """Alternate the S, W, F, G and V steps on ``X`` (n, d), all features varying."""
        X = _checked_data(X)
        n_clusters = check_value("n_clusters", n_clusters, Interval(int, 1))
        self.check_data(*X.shape, n_clusters)
        weights, gram, X_centred = self.weights(), FactorGram.of(X), X - X.mean(axis=0)
        state = self.initial_state(*X.shape, n_clusters, random_state)
        W, F, G, V, _, history = state
        reweights = np.ones(X.shape[1])
        for _ in range(self.max_iter):
            state = graph = None  # the last graph (n x n) goes before the next is built
            graph = AdaptiveGraph.from_similarity(*entropic_similarity(
                F, V, weights.alpha, weights.beta, weights.gamma))
            W = weights_step(X_centred, F - F.mean(axis=0), reweights, weights.lam)
            reweights = l21_reweights(W)
            F = self.pseudo_label_step(graph, X_centred @ W, F)
            G = combination_gradient(gram, G, V).update(G)
            V = coefficient_gradient(gram, G, V, graph, weights.gamma,
                                     weights.epsilon).update(V)
            state = CNAFSResult(W, F, G, V, graph, history)
            history.append(cnafs_objective(X_centred, gram, state, weights))
            if has_converged(history, self.tol):
                break
        return state

    def pseudo_label_step(self, graph: AdaptiveGraph, B: np.ndarray, F: np.ndarray):
        """``min Tr(F'(H + 2 alpha L)F) - 2 Tr(F'B)`` over ``F'F = I``, ``B = HXW``;
        ``eta = 1 + 4 alpha max(degree)`` bounds the largest eigenvalue (Gershgorin)."""
        def apply_A(M):
            return M - M.mean(axis=0) + 2.0 * self.alpha * graph.laplacian_matmul(M)

        eta = 1.0 + 4.0 * self.alpha * float(graph.degrees.max())
        return stiefel_quadratic(apply_A, eta, B, F)

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        def fit_weights(X, constant):
            return self.solve(X[:, ~constant], n_clusters=n_clusters,
                              random_state=random_state).W

        return row_norm_scores(_checked_data(X), fit_weights)


def _checked_data(X) -> np.ndarray:
    """``X`` as floats; refuses missing or infinite values and values whose sample Gram
    ``XX'`` would overflow."""
    X = np.asarray(X, dtype=float)
    if not np.isfinite(X).all():
        raise ValueError("X has NaN or infinite values: CNAFS needs finite features "
                         "(impute or drop them first)")
    largest = float(np.abs(X).max()) if X.size else 0.0
    if largest > np.sqrt(np.finfo(float).max / (4 * max(X.shape[1], 1))):
        raise ValueError(f"values up to {largest:.3g} overflow the sample Gram XX': scale "
                         "the features first (causefs.numerics.scaling.scale_features)")
    return X
