"""mu update (paper eq. u.3): a convex QP on the scaled simplex."""

from __future__ import annotations

import dataclasses

from ...core.parts import Cost
from ...core.state import State
from ...core.validation import NONE, InstanceOf, Interval, check_choice, check_value
from ...model.subproblems import SampleWeightQP
from ...qp import QPBackend, SimplexQP
from ..base import Block


def sample_weight_qp(state: State) -> SimplexQP:
    """The objective's mu subproblem as a :class:`~causefs.qp.SimplexQP` on the scaled
    simplex ``sum(mu) = mu_total`` (CAUSE-FS: regression, granular graphs and beta times
    the balance operator, eq. u.3)."""
    parts = state.problem.objective.subproblem(SampleWeightQP, state, "mu")
    return SimplexQP(diag=parts.diagonal, linear=parts.linear, total=state.problem.mu_total,
                     sparse=parts.sparse, balance=parts.balance,
                     balance_weight=parts.balance_weight)


PRECISIONS = ("float32", "float64")


class SampleWeightsBlock(Block):
    """Update mu by a warm-started, budgeted solve of its QP with the configured backend.

    Block-coordinate descent needs a decrease of J per block, not the subproblem's
    minimizer, so the solve gets ``max_products`` products with the Hessian and, with
    ``precision="float32"``, makes them with the balance operator's float32 version
    (about 2.4x cheaper). The result is then checked in float64 against the warm start
    and kept only if it is not worse (a tie keeps it): the block is a descent block
    whatever the budget,
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
    reads = ("X_adjusted", "W", "F", "mu", "K")
    optional_reads = ("S", "groups")
    writes = ("mu",)
    subproblem = SampleWeightQP
    requires = ("qp",)

    def __init__(self, qp, max_products: int | None = 12, precision: str = "float32"):
        self.qp = check_value("qp", qp, InstanceOf(QPBackend, "a QP backend (set by the engine "
                                                         "from the qp setting)"))
        self.max_products = check_value("max_products", max_products, NONE, Interval(int, 1))
        self.precision = check_choice("precision", precision, PRECISIONS)

    def cost(self, size) -> Cost:
        """Its balance products, and the granular graphs' sparse Hessian it builds
        (M n k entries) with the solve's vector operations.

        The products: the solve's (:meth:`QPBackend.products` for ``max_products``)
        and, in float32, the float64 gradient at the warm start and its float32 twin
        (two) and the float64 values of the result and the warm start (one).

        Declared: those products where the objective has a balance term (none without
        one), and ``200 n (M k + 2)`` operations.
        """
        n, k = size.n_samples, size.n_neighbors
        products = self.qp.products(self.max_products)
        if self.precision == "float32":
            products += 3.0
        return Cost(balance_products=products if size.balance else 0.0,
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
