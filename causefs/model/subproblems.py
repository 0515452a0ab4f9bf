"""The subproblems of the descent blocks, assembled from the objective's terms.

A descent block minimizes J over the variables it writes with the others fixed. What J
is in those variables depends on the terms of the schedule's objective, so the block does
not write it down: it asks the objective for its subproblem
(:meth:`causefs.model.objective.Objective.subproblem`), every term that reads one of the
block's variables adds its part, and the block solves the sum. One class per kind of
subproblem; a term adds its part in the method named by the class's ``hook``.

========================  =========  ===============================================
subproblem                variables  what a term adds
========================  =========  ===============================================
:class:`SelectionSystem`  W          a quadratic majorizer of its value in W, tight at
                                     the current W (eq. W.2-W.3)
:class:`GraphCost`        S[m] or G  a linear cost on the graph's entries: squared
                                     distances of points, less a prior (eq. S.5, G.3)
:class:`EmbeddingSystem`  F          a quadratic in F, ``Tr(F'AF) - 2 Tr(F'B)`` (eq. F.2)
:class:`SampleWeightQP`   mu         a quadratic in mu, ``1/2 mu'P mu + q'mu`` (eq. u.3)
:class:`Gradient`         any        its gradient in that variable
========================  =========  ===============================================
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ..core.validation import check_choice
from ..numerics.conjugate_gradients import block_conjugate_gradients
from ..numerics.laplacian import laplacian_matmul, laplacian_matrix, symmetric_degree
from ..numerics.sparse import column_squares, dense, scale_rows
from ..numerics.threads import threads_for


class Subproblem:
    """Base of the subproblems: built empty for a state, filled by the terms."""

    #: the :class:`~causefs.terms.Term` method that adds a term's part
    hook: ClassVar[str]

    def __init__(self, state):
        self.state = state


# -- W ------------------------------------------------------------------------------------

#: how the W system is solved
SYSTEMS = ("auto", "primal", "dual", "cg")

#: the dual form's operations run at about a third of the primal's rate (general LU
#: solves, one per granularity, and thin products): measured on JAFFE, UMIST and COIL20,
#: where its count alone would pick it for JAFFE at twice the primal's time
DUAL_SLOWDOWN = 3.0


#: conjugate gradients' products are thin (h columns): they run at the memory's speed,
#: about a twelfth of the rate of the primal's d x d products and factorization
#: (measured on 0-1 data of 7000 x 5000 and 1993 x 4862, docs/PERFORMANCE.md)
CG_SLOWDOWN = 12.0
#: the iterations of a warm-started solve, for pricing: 22 to 31 inside the fits of
#: 7000 x 5000 0-1 data at ``CG_RTOL`` (the first warm solve took 60)
CG_ITERATIONS = 30
#: the iterations of the first solve, from zero: about 200 in the same fits
CG_COLD_ITERATIONS = 200
#: each column's residual is solved to this fraction of its right-hand side's norm
CG_RTOL = 1e-6
#: a solve that has not reached ``CG_RTOL`` by then is done again directly
CG_MAX_ITER = 500
#: dense weighted data with at most this share of non-zeros go sparse for conjugate
#: gradients (and are priced at their non-zeros): in their thin products a sparse entry
#: costs about twice a dense one (0-1 data of 3000 x 5000, 4 columns, one thread: CSC
#: over dense 0.19 at 10 % non-zeros, 0.38 at 15 %, 0.72 at 33 %, 1.07 at 50 %)
CG_DENSITY = 1 / 3


def selection_system_cost(n: int, d: int, group_sizes, h: int = 1, entries: int = None,
                          iterations: int = CG_ITERATIONS) -> dict:
    """Multiply-add counts of the forms, each weighted by its rate against the primal's,
    to pick the cheapest. The primal's includes the data Gram (``n d^2``), formed once
    while the sample weights stay the same: ``repeat`` is the primal without it.
    Conjugate gradients' are ``iterations`` products of two passes over the ``entries``
    of the weighted data (``n d`` dense) for the ``h`` columns of W."""
    group_sizes = list(group_sizes) or [d]
    groups = n * sum(s * s for s in group_sizes) + d**3 / 6
    dual = 3 * n * n * d + len(group_sizes) * (n**3 * 2 / 3 + n * n * d / len(group_sizes)) + n**3
    entries = n * d if entries is None else entries
    return {"primal": n * d * d + groups, "repeat": groups, "dual": DUAL_SLOWDOWN * dual,
            "cg": CG_SLOWDOWN * iterations * 2 * entries * h}


def cg_entries(nonzeros: float, cells: float) -> float:
    """The entries conjugate gradients' products pass over dense data: their
    ``nonzeros`` where the data go sparse for them (at most ``CG_DENSITY`` of the
    ``cells`` non-zero), else every cell (sparse data: their stored entries)."""
    return nonzeros if nonzeros <= CG_DENSITY * cells else cells


def direct_system(cost: dict, dual_allowed: bool) -> str:
    """The cheaper of the two direct forms for the counts of
    :func:`selection_system_cost`: the dual where it costs less than the primal and the
    structure allows it."""
    return "dual" if dual_allowed and cost["dual"] < cost["primal"] else "primal"


def cheapest_system(cost: dict, dual_allowed: bool) -> str:
    """The form to solve in: conjugate gradients where they cost less than the direct
    form's repeated solve (the primal without the Gram it reuses), else that form."""
    direct = direct_system(cost, dual_allowed)
    return "cg" if cost["cg"] < cost["repeat" if direct == "primal" else "dual"] else direct


def _solve(A, B):
    try:
        with threads_for(2.0 * A.shape[0] ** 3 / 3):
            return np.linalg.solve(A, B)
    except np.linalg.LinAlgError:
        # the systems here are non-singular in exact arithmetic (lam * D > 0)
        warnings.warn("W system numerically singular; using a least-squares solve",
                      RuntimeWarning, stacklevel=4)
        return np.linalg.lstsq(A, B, rcond=None)[0]


def _data_gram(Xt) -> np.ndarray:
    """``Xt' Xt`` (d, d) of dense weighted data."""
    with threads_for(Xt.shape[0] * Xt.shape[1] ** 2):
        return Xt.T @ Xt


class SelectionSystem(Subproblem):
    """The W subproblem ``min_W Tr(W'AW) - 2 Tr(W'B)`` (eq. W.3: ``W = A^-1 B``).

    Terms add to ``A`` (d, d) and ``B`` (d, h) in the structured forms below, with the
    weighted data ``X~ = diag(mu) X_adjusted`` implied; the solve forms ``A`` (the
    primal, d x d) or, when ``A`` has the structure ``weight X~'X~ + diag + sum_m
    X~_m' L_m X~_m`` on disjoint feature groups, solves through n x n systems
    (Woodbury), whichever costs less (:func:`selection_system_cost`).

    The first solve of a fit comes before there is a W (``state.W`` is None): a term that
    majorizes around the current W then takes a starting point of its own (the l2,1
    term: ``D = I``).
    """

    hook = "add_to_selection_system"

    def __init__(self, state):
        super().__init__(state)
        self.gram_weights: list = []   # w X~'X~
        self.diagonals: list = []      # diag(v)
        self.group_graphs: list = []   # (columns, graph): X~_m' L_graph X~_m on the block
        self.matrices: list = []       # any symmetric (d, d) matrix
        self.data_rhs: list = []       # (w, T): w X~' T
        self.matrix_rhs: list = []     # any (d, h) matrix
        self._order: list = []         # the order of the parts of A, as added

    def add_data_gram(self, weight: float) -> None:
        """``A += weight X~'X~``."""
        self.gram_weights.append(weight)
        self._order.append(("gram", len(self.gram_weights) - 1))

    def add_diagonal(self, values: np.ndarray) -> None:
        """``A += diag(values)``."""
        self.diagonals.append(values)
        self._order.append(("diagonal", len(self.diagonals) - 1))

    def add_group_graph(self, columns: np.ndarray, graph) -> None:
        """``A[cols, cols] += X~_cols' L_graph X~_cols`` (a graph term on a feature group)."""
        self.group_graphs.append((columns, graph))
        self._order.append(("group", len(self.group_graphs) - 1))

    def add_matrix(self, matrix: np.ndarray) -> None:
        """``A += matrix`` (symmetric; the solve is then the primal one)."""
        self.matrices.append(matrix)
        self._order.append(("matrix", len(self.matrices) - 1))

    def add_data_rhs(self, weight: float, target: np.ndarray) -> None:
        """``B += weight X~' target``."""
        self.data_rhs.append((weight, target))

    def add_rhs(self, matrix: np.ndarray) -> None:
        """``B += matrix`` (d, h)."""
        self.matrix_rhs.append(matrix)

    def weighted_data(self):
        """``X~ = diag(mu) X_adjusted`` (sparse data stay sparse)."""
        return scale_rows(self.state.mu, self.state.X_adjusted)

    def rhs(self, Xt) -> np.ndarray:
        """``B`` from the weighted data ``Xt``."""
        return self._rhs(lambda target: Xt.T @ target)

    def _rhs(self, transposed_product) -> np.ndarray:
        """``B``, with ``transposed_product(T) = X~' T``."""
        self._check_rhs()
        parts = [weight * transposed_product(target) for weight, target in self.data_rhs]
        parts += list(self.matrix_rhs)
        return sum(parts[1:], parts[0])

    def _check_rhs(self) -> None:
        if not (self.data_rhs or self.matrix_rhs):
            raise ValueError("the W system has no right-hand side: no term of the "
                             "objective ties W to the other variables")

    def _rhs_columns(self) -> int:
        """h, the columns of ``B`` (and of W), read off its first part without forming
        it: every part has them."""
        self._check_rhs()
        return (self.data_rhs[0][1] if self.data_rhs else self.matrix_rhs[0]).shape[1]

    def matrix(self, Xt=None) -> np.ndarray:
        """``A`` (d, d), its parts added in the order the terms gave them, from the
        weighted data ``Xt`` (default: this state's, whose Gram is reused)."""
        if Xt is None:
            Xt = dense(self.weighted_data())
            return self._matrix(Xt, self._state_gram(Xt))
        return self._matrix(Xt, None)

    def _matrix(self, Xt, gram) -> np.ndarray:
        """``A`` from ``Xt`` and its Gram ``X~'X~`` (None: formed here)."""
        n, d = Xt.shape
        A = None
        for kind, i in self._order:
            if kind == "gram":
                if gram is None:
                    gram = _data_gram(Xt)
                part = self.gram_weights[i] * gram
                A = part if A is None else A + part
                continue
            if A is None:
                A = np.zeros((d, d))
            if kind == "diagonal":
                A[np.diag_indices_from(A)] += self.diagonals[i]
            elif kind == "group":
                cols, graph = self.group_graphs[i]
                Xm = Xt[:, cols]
                # X~_m' L X~_m from the sparse product L X~_m: one dense product, not two
                with threads_for(2.0 * n * cols.size ** 2):
                    block = Xm.T @ laplacian_matmul(graph, Xm)
                A[np.ix_(cols, cols)] += 0.5 * (block + block.T)
            else:
                A += self.matrices[i]
        return A if A is not None else np.zeros((d, d))

    def _state_gram(self, Xt) -> np.ndarray:
        """``X~'X~`` of this state's weighted data ``Xt``, formed once while the data and mu
        are the same objects: the largest product of the primal form (n d^2), fixed
        through a fit whose schedule fits no sample weights (the default's)."""
        if not self.gram_weights:
            return None
        return self.state.problem.reuse("data_gram", (self.state.X_adjusted, self.state.mu),
                                        lambda: _data_gram(Xt))

    def group_sizes(self) -> list:
        return [cols.size for cols, _ in self.group_graphs]

    def dual_form(self) -> bool:
        """Whether the structure allows the n x n (Woodbury) solve: one data Gram, a
        diagonal, group graphs on disjoint feature groups, nothing else."""
        return (len(self.gram_weights) == 1 and self.gram_weights[0] > 0
                and not self.matrices and bool(self.diagonals) and self.disjoint_groups())

    def column_blocks(self) -> list:
        """``(columns, graph)`` of each group graph, then ``(the features in no group,
        None)`` when there are such features: the blocks of A's block-diagonal part."""
        covered = np.zeros(self.state.problem.n_features, dtype=bool)
        for cols, _ in self.group_graphs:
            covered[cols] = True
        rest = [] if covered.all() else [(np.flatnonzero(~covered), None)]
        return [*self.group_graphs, *rest]

    def disjoint_groups(self) -> bool:
        """Whether no feature is in two group graphs."""
        sizes = self.group_sizes()
        return not sizes or sum(sizes) == np.unique(
            np.concatenate([cols for cols, _ in self.group_graphs])).size

    def solve(self, system: str = "auto") -> np.ndarray:
        """The minimizer ``W = A^-1 B``.

        ``system``: ``primal`` solves the d x d system, ``dual`` the n x n (Woodbury)
        form, ``cg`` runs conjugate gradients from the current W without forming either
        (``_conjugate_gradients``), ``auto`` the cheapest by
        :func:`selection_system_cost`, priced for the h columns of ``B``
        (:meth:`_rhs_columns`). NumPy's LAPACK, not SciPy's, for general solves: the two
        wheels bundle separate OpenBLAS thread pools, and alternating between them is
        slower (docs/PERFORMANCE.md, "W system").
        """
        system = check_choice("system", system, SYSTEMS)
        n, d = self.state.problem.n_samples, self.state.problem.n_features
        dual_allowed = self.dual_form()
        iterations = CG_ITERATIONS if self.state.W is not None else CG_COLD_ITERATIONS
        cost = selection_system_cost(n, d, self.group_sizes(), self._rhs_columns(),
                                     self._cg_entries(), iterations)
        direct = direct_system(cost, dual_allowed)
        max_iter = CG_MAX_ITER
        if system == "auto":
            system = cheapest_system(cost, dual_allowed)
            if system == "cg":
                # stop where the products would cost what the direct form costs: a badly
                # conditioned system then costs at most about twice the direct solve
                repeat = cost["repeat" if direct == "primal" else "dual"]
                max_iter = min(CG_MAX_ITER, int(iterations * repeat / cost["cg"]))
        if system == "cg":
            W = self._conjugate_gradients(max_iter)
            if W is not None:
                return W
            system = direct  # not solved to CG_RTOL
        if system == "dual" and dual_allowed:
            with threads_for(2.0 * n * n * d):  # made of n x d x n products throughout
                return self._dual()
        return self._primal()

    def _cg_entries(self) -> int:
        """The entries conjugate gradients' products pass over: the stored entries of
        sparse data, else :func:`cg_entries`."""
        X = self.state.X_adjusted
        if sp.issparse(X):
            return X.nnz
        nonzeros = self.state.problem.reuse("data_nonzeros", (X,),
                                            lambda: int(np.count_nonzero(X)))
        return cg_entries(nonzeros, X.size)

    def _data_pieces(self) -> list:
        """``(columns, graph, X~ on the columns)`` of each of :meth:`column_blocks`; X~ in
        CSC where the data go sparse (:meth:`_cg_entries`), converted once while the data
        and mu are the same objects."""
        def weighted():
            Xt = self.weighted_data()
            if not sp.issparse(Xt) and self._cg_entries() < Xt.size:
                Xt = sp.csc_array(Xt)
            return Xt

        Xt = self.state.problem.reuse("cg_weighted_data", (self.state.X_adjusted,
                                                           self.state.mu), weighted)
        return [(cols, graph, Xt[:, cols]) for cols, graph in self.column_blocks()]

    def _conjugate_gradients(self, max_iter: int = CG_MAX_ITER) -> np.ndarray | None:
        """``W = A^-1 B`` by Jacobi-preconditioned conjugate gradients
        (:func:`~causefs.numerics.conjugate_gradients.block_conjugate_gradients`) to
        ``CG_RTOL``, warm-started from the current W (zero before there is one).

        ``A`` is applied in its parts, never formed: with the groups disjoint, two passes
        over the weighted data a product, ``U_m = X~_m V_m`` then ``X~_m' (w sum_m U_m +
        L_m U_m)`` on each group's columns (sparse data, and data mostly zeros, sparse).
        For wide data this replaces the primal's ``n s^2`` group products and ``d^3``
        factorization of every iteration. The preconditioner is the diagonal of ``A``
        without the group graphs' part, which costs a product of each group and, on the
        fits measured, did not save an iteration. Every iterate lowers the W subproblem
        from the warm start, so an inexact W is still a descent step. None when the
        groups overlap, ``A`` shows a direction of non-positive curvature, or
        ``max_iter`` iterations do not reach ``CG_RTOL``.
        """
        if not self.disjoint_groups():
            return None
        pieces = self._data_pieces()
        n, d = self.state.problem.n_samples, self.state.problem.n_features

        def transposed_product(T):
            out = np.empty((d, T.shape[1]))
            for cols, _, Xm in pieces:
                out[cols] = Xm.T @ T
            return out

        B = self._rhs(transposed_product)
        gram_weight = float(sum(self.gram_weights))
        diagonal = sum(self.diagonals) if self.diagonals else np.zeros(d)
        preconditioner = diagonal + sum(np.diagonal(m) for m in self.matrices)
        laplacians = [None if graph is None else laplacian_matrix(graph)
                      for _, graph, _ in pieces]
        for cols, _, Xm in pieces:
            preconditioner[cols] += gram_weight * column_squares(Xm)

        def apply(V):
            products = [Xm @ V[cols] for cols, _, Xm in pieces]
            shared = gram_weight * sum(products)
            AV = diagonal[:, None] * V
            for (cols, _, Xm), L, U in zip(pieces, laplacians, products):
                T = shared + L @ U if L is not None else shared
                AV[cols] += Xm.T @ T
            for matrix in self.matrices:
                AV += matrix @ V
            return AV

        W = self.state.W
        start = W if W is not None and W.shape == B.shape else np.zeros_like(B)
        with threads_for(4.0 * n * d * B.shape[1]):  # two passes over the data a product
            return block_conjugate_gradients(apply, B, start, preconditioner, CG_RTOL,
                                             max_iter)[0]

    def _primal(self) -> np.ndarray:
        """By a Cholesky factorization of the d x d system (positive definite, as
        ``lam D > 0``): half the work of a general solve."""
        Xt = dense(self.weighted_data())  # the primal form is for small d: dense
        A, B = self._matrix(Xt, self._state_gram(Xt)), self.rhs(Xt)
        try:
            with threads_for(A.shape[0] ** 3 / 3):
                lower = np.linalg.cholesky(A)
            # the two triangular solves (d^2 h) on one thread: SciPy's BLAS is not widened
            # while NumPy's threads may still spin
            half = scipy.linalg.solve_triangular(lower, B, lower=True, check_finite=False)
            return scipy.linalg.solve_triangular(lower.T, half, lower=False,
                                                 check_finite=False)
        except np.linalg.LinAlgError:
            return _solve(self._matrix(Xt, self._state_gram(Xt)), B)

    def _dual(self) -> np.ndarray:
        """``W = A^-1 B`` through n x n systems (Woodbury), for d much larger than n.

        ``A = C + w X~'X~`` with ``C = diag + blockdiag_m(X~_m' L_m X~_m)``. Each block
        ``C_m^-1 = Lm^-1 - Lm^-1 X~_m' L_m (I + P_m L_m)^-1 X~_m Lm^-1`` (``Lm`` the
        diagonal's block, ``P_m = X~_m Lm^-1 X~_m'``; ``I + P_m L_m`` has eigenvalues
        >= 1), then ``A^-1 = C^-1 - C^-1 X~' (I/w + X~ C^-1 X~')^-1 X~ C^-1``.
        """
        n, d = self.state.problem.n_samples, self.state.problem.n_features
        Xt = self.weighted_data()  # sparse data stay sparse: only products with X~
        diagonal = self.diagonals[0] if len(self.diagonals) == 1 else sum(self.diagonals)
        inverse_diagonal = 1.0 / diagonal
        B = self.rhs(Xt)
        blocks = self.column_blocks()  # features in no group graph: C is the diagonal
        CinvB = np.empty_like(B)
        CinvXt = np.empty((d, n))  # C^-1 X~'
        for cols, graph in blocks:
            Xm = Xt[:, cols]
            scaled = inverse_diagonal[cols, None] * dense(Xm).T  # Lm^-1 X~_m'  (d_m, n)
            block = np.hstack([inverse_diagonal[cols, None] * B[cols], scaled])
            if graph is not None:
                L = laplacian_matrix(graph)
                P = Xm @ scaled
                inner = np.eye(n) + (L @ P).T  # I + P L, as P and L are symmetric
                # Lm^-1 X~_m' L (I + P L)^-1 X~_m [Lm^-1 B_m, Lm^-1 X~_m']
                correction = scaled @ (L @ _solve(inner, Xm @ block))
                block = block - correction
            CinvB[cols] = block[:, : B.shape[1]]
            CinvXt[cols] = block[:, B.shape[1]:]
        inner = np.eye(n) / self.gram_weights[0] + Xt @ CinvXt
        return CinvB - CinvXt @ _solve(inner, Xt @ CinvB)


# -- S[m], G --------------------------------------------------------------------------------

class GraphCost(Subproblem):
    """The cost of one graph's entries: column j of the graph minimizes
    ``sum_i cost_ij A_ij + r_j ||A_.j||^2`` over the simplex (no self loop), with
    ``cost_ij = 1/2 ||Y_i - Y_j||^2 - P_ij`` for the points ``Y`` and the prior ``P`` the
    terms add, and ``r_j`` the adaptive parameter the closed form re-estimates (eq. S.5,
    G.3).

    Parameters
    ----------
    target : {"S", "G"}
        The graph: a granular graph ``S[index]`` or the fused graph.
    index : int
        The group of a granular graph.
    """

    hook = "add_to_graph_cost"

    def __init__(self, state, target: str, index: int | None = None):
        super().__init__(state)
        self.target, self.index = target, index
        self._points: list = []
        self._priors: list = []
        self.regularizers: list = []

    def add_points(self, points: np.ndarray) -> None:
        """``cost_ij += 1/2 ||points_i - points_j||^2``."""
        self._points.append(points)

    def add_prior(self, prior) -> None:
        """``cost_ij -= prior_ij`` (sparse, non-negative: its support joins the
        candidates of the neighbour search)."""
        self._priors.append(prior)

    def add_regularizer(self, weights: np.ndarray) -> None:
        """``+ weights_j ||A_.j||^2`` at the current parameters (the closed form
        re-estimates them; the property tests check a term's derivative with them)."""
        self.regularizers.append(weights)

    @property
    def points(self) -> np.ndarray:
        """The points whose squared distances make the cost (several terms' side by side)."""
        if not self._points:
            raise ValueError(f"no term of the objective gives the {self.target} graph a "
                             "distance cost")
        return self._points[0] if len(self._points) == 1 else np.hstack(self._points)

    @property
    def prior(self):
        """The sum of the priors, or None."""
        return sum(self._priors[1:], self._priors[0]) if self._priors else None


# -- F --------------------------------------------------------------------------------------

class EmbeddingSystem(Subproblem):
    """The F subproblem ``min Tr(F'AF) - 2 Tr(F'B)`` over ``F'F = I`` (eq. F.2).

    Terms add symmetric PSD operators to ``A`` with a bound on their largest eigenvalue
    (the shift that makes generalized power iteration monotone), multiples of the
    identity (constant on ``F'F = I``: kept for the value only) and parts of ``B``.
    """

    hook = "add_to_embedding_system"

    def __init__(self, state):
        super().__init__(state)
        self.operators: list = []   # (matrix, bound on its largest eigenvalue)
        self.identity = 0.0
        self.rhs_parts: list = []

    def add_laplacian(self, graph, weight: float = 1.0) -> None:
        """``A += weight L_graph``, bounded by Gershgorin's ``2 weight max degree``."""
        L = laplacian_matrix(graph)
        bound = 2.0 * symmetric_degree(graph).max()
        self.operators.append((L, bound) if weight == 1.0 else (weight * L, weight * bound))

    def add_operator(self, matrix, bound: float) -> None:
        """``A += matrix`` (symmetric PSD, sparse or dense, largest eigenvalue <= bound)."""
        self.operators.append((matrix, float(bound)))

    def add_identity(self, weight: float) -> None:
        """``A += weight I``."""
        self.identity += weight

    def add_rhs(self, matrix: np.ndarray) -> None:
        """``B += matrix`` (n, h)."""
        self.rhs_parts.append(matrix)

    @property
    def rhs(self) -> np.ndarray:
        if not self.rhs_parts:
            return np.zeros_like(self.state.F)
        return sum(self.rhs_parts[1:], self.rhs_parts[0])

    @property
    def shift(self) -> float:
        """An upper bound on the largest eigenvalue of ``A`` less its identity part."""
        return float(sum(bound for _, bound in self.operators))

    def diagonal(self) -> np.ndarray | None:
        """The diagonal of ``A`` (n,) with its identity part, or None when an operator
        has none to give (a linear operator known through its products only)."""
        total = np.full(self.state.F.shape[0], self.identity)
        for operator, _ in self.operators:
            if not hasattr(operator, "diagonal"):
                return None
            total += np.asarray(operator.diagonal()).ravel()  # cast into the float total
        return total

    def matrix(self):
        """``A`` with its identity part as a sparse CSR array (n, n), or None when an
        operator is not a sparse matrix (dense, or known through its products only)."""
        n = self.state.F.shape[0]
        total = self.identity * sp.identity(n, format="csr")
        for operator, _ in self.operators:
            if not sp.issparse(operator):
                return None
            total = total + operator
        return sp.csr_array(total)

    def apply(self, F: np.ndarray) -> np.ndarray:
        """``(A - identity I) F``."""
        parts = [operator @ F for operator, _ in self.operators]
        if not parts:
            return np.zeros_like(F)
        return sum(parts[1:], parts[0])


# -- mu -------------------------------------------------------------------------------------

class SampleWeightQP(Subproblem):
    """The mu subproblem ``1/2 mu'P mu + q'mu`` with
    ``P = diag(diagonal) + sparse + balance_weight H`` (H a kernel's balance operator,
    known through products; eq. u.3); the block solves it on the scaled simplex."""

    hook = "add_to_sample_weight_qp"

    def __init__(self, state):
        super().__init__(state)
        n = state.problem.n_samples
        self._diagonals: list = []
        self._linears: list = []
        self._sparse: list = []
        self.balance = None
        self.balance_weight = 0.0
        self.n = n

    def add_diagonal(self, values: np.ndarray) -> None:
        self._diagonals.append(values)

    def add_linear(self, values: np.ndarray) -> None:
        self._linears.append(values)

    def add_sparse(self, matrix) -> None:
        """``P += matrix`` (sparse symmetric PSD)."""
        self._sparse.append(matrix)

    def add_balance(self, operator, weight: float) -> None:
        """``P += weight H`` for a balance operator H (one per subproblem)."""
        if self.balance is not None:
            raise ValueError("the mu subproblem takes one balance operator")
        self.balance, self.balance_weight = operator, weight

    @staticmethod
    def _sum(parts: list, empty):
        return empty if not parts else sum(parts[1:], parts[0])

    @property
    def diagonal(self) -> np.ndarray:
        return self._sum(self._diagonals, np.zeros(self.n))

    @property
    def linear(self) -> np.ndarray:
        return self._sum(self._linears, np.zeros(self.n))

    @property
    def sparse(self):
        return self._sum(self._sparse, None)


# -- any variable ---------------------------------------------------------------------------

class Gradient(Subproblem):
    """The gradient of J in one variable (W, F or mu), for blocks that take one.

    Parameters
    ----------
    variable : str
    """

    hook = "add_to_gradient"

    def __init__(self, state, variable: str):
        super().__init__(state)
        self.variable = variable
        self._parts: list = []

    def add(self, gradient: np.ndarray) -> None:
        self._parts.append(gradient)

    @property
    def value(self) -> np.ndarray:
        current = getattr(self.state, self.variable)
        return self._sum() if self._parts else np.zeros_like(current, dtype=float)

    def _sum(self):
        return sum(self._parts[1:], self._parts[0])


#: the subproblems a descent block may declare (:attr:`causefs.blocks.Block.subproblem`)
SUBPROBLEMS = (SelectionSystem, GraphCost, EmbeddingSystem, SampleWeightQP, Gradient)
