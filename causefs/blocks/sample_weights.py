"""mu update (paper eq. u.3): a convex QP on the scaled simplex."""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from ..core.parts import Cost
from ..core.state import State
from ..core.validation import NONE, InstanceOf, Interval, check_choice, check_value
from ..numerics.laplacian import symmetric_degree
from ..qp import QPBackend, SimplexQP
from .base import Block


def granular_hessian(state: State):
    """Sparse ``sum_m H_m`` with ``mu' H_m mu = 1/2 sum_ij S_ij ||mu_i p_i - mu_j p_j||^2``.

    ``p_i = x_i R_m W``; ``H_m = diag(deg * ||p||^2) - Sym(S) o (p_i . p_j)`` has the
    sparsity of ``S[m] + S[m]'``. Returns None without granular graphs.
    """
    if not state.n_granularities:
        return None
    n = state.problem.n_samples
    rows, cols, vals = [], [], []
    for m, S in enumerate(state.S):
        idx = np.flatnonzero(state.groups == m)
        P = state.X[:, idx] @ state.W[idx]
        coo = sp.coo_array(S)
        inner = np.einsum("ij,ij->i", P[coo.row], P[coo.col])
        off = -0.5 * coo.data * inner
        diag = symmetric_degree(S) * np.einsum("ij,ij->i", P, P)
        rows += [coo.row, coo.col, np.arange(n)]
        cols += [coo.col, coo.row, np.arange(n)]
        vals += [off, off, diag]
    return sp.csr_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )


def sample_weight_qp(state: State) -> SimplexQP:
    """The mu subproblem ``min mu'H mu + q'mu`` as ``1/2 mu'(2H) mu + q'mu``.

    Regression: ``alpha sum_i (mu_i^2 ||x_i W||^2 - 2 mu_i <x_i W, F_i>)``; granular
    graphs: :func:`granular_hessian`; balance: ``beta`` times the kernel's operator.
    """
    p = state.problem
    XW = state.X @ state.W
    H_graph = granular_hessian(state)
    balance = p.balance_operator(state.K) if p.beta != 0 else None
    return SimplexQP(
        diag=2.0 * p.alpha * np.einsum("ij,ij->i", XW, XW),
        linear=-2.0 * p.alpha * np.einsum("ij,ij->i", XW, state.F),
        total=p.mu_total,
        sparse=None if H_graph is None else 2.0 * H_graph,
        balance=balance,
        balance_weight=2.0 * p.beta,
    )


PRECISIONS = ("float32", "float64")


class SampleWeightsBlock(Block):
    """Update mu by a warm-started, budgeted solve of its QP with the configured backend.

    Block-coordinate descent needs a decrease of J per block, not the subproblem's
    minimizer, so the solve gets ``max_products`` products with the Hessian and, with
    ``precision="float32"``, makes them with the balance operator's float32 version
    (about 2.4x cheaper). The result is then checked in float64 against the warm start
    and kept only if it is not worse: the block is a descent block whatever the budget,
    the precision and the backend.

    Parameters
    ----------
    qp : QPBackend
        Resolved by the engine from the ``qp`` setting.
    max_products : int or None
        Products granted to each solve (None: the backend's own limit, i.e. a solve to
        its tolerance).
    precision : {"float32", "float64"}
        Arithmetic of the balance products inside the solve.
    """

    name = "sample_weights"
    accepts_sparse = True
    kind = "descent"
    reads = ("X", "W", "F", "mu", "K")
    optional_reads = ("S", "groups")
    writes = ("mu",)
    requires = ("qp",)

    #: products with the mu Hessian per step: the solve's budget plus the float64 checks
    #: and the objective's evaluation
    PRODUCTS_PER_STEP = 15

    def __init__(self, qp, max_products: int | None = 12, precision: str = "float32"):
        self.qp = check_value("qp", qp, InstanceOf(QPBackend, "a QP backend (set by the engine "
                                                         "from the qp setting)"))
        self.max_products = check_value("max_products", max_products, NONE, Interval(int, 1))
        self.precision = check_choice("precision", precision, PRECISIONS)

    def cost(self, size) -> Cost:
        """Its balance products, and the granular graphs' sparse Hessian it builds
        (M n k entries) with the solve's vector operations."""
        n, k = size.n_samples, size.n_neighbors
        return Cost(balance_products=self.PRODUCTS_PER_STEP if size.balance else 0.0,
                    ops=200.0 * n * (size.n_granularities * k + 2))

    def step(self, state: State) -> State:
        exact = sample_weight_qp(state)
        problem = exact.approximate() if self.precision == "float32" else exact
        if problem.balance is not exact.balance:
            # the float32 model with the exact float64 gradient at the warm start: its
            # rounding then touches only the curvature along the step (iterative
            # refinement), not where the step points
            shift = exact.matvec(state.mu) - problem.matvec(state.mu)
            problem = dataclasses.replace(problem, linear=problem.linear + shift)
        problem = dataclasses.replace(problem, max_products=self.max_products)
        result = self.qp.solve(problem, state.mu)
        self.info_ = {"qp_iterations": result.n_iter, "qp_converged": result.converged}
        mu = result.x
        if problem.balance is not exact.balance and not exact.value(mu) <= exact.value(state.mu):
            mu = state.mu
        return state.replace(mu=mu)
