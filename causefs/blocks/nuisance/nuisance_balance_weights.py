"""Sample weights that balance the known nuisance variables Z over every treatment."""

from __future__ import annotations

import numpy as np

from ...core.parts import Cost
from ...core.state import State
from ...core.validation import Interval, check_value
from ...qp import SimplexQP
from ..base import Block


class NuisanceBalanceWeightsBlock(Block):
    """mu from the paper's balance term with the known nuisance variables as confounders.

    Every treatment r (every feature split by the problem's treatment coding) gets Z as
    its confounder set: ``MMD_r(mu) = ||sum_i mu_i a_ri phi(z_i)||^2`` with the fit's
    kernel, so the weights make every feature's treated and control samples alike in Z
    (the paper's eq. 3.3-3.5 with the right confounders instead of the other features).
    Minimizes, over mean-one weights ``w >= 0``,

        sum_r MMD_r(w) / sum_r MMD_r(1) + penalty * mean((w - 1)^2)

    (the spread penalty of :class:`~.decorrelation_weights.DecorrelationWeightsBlock`,
    which keeps the effective sample size up; on ``sum(w) = n`` it is ``penalty
    (mean(w^2) - 1)``, so the QP solved is ``w'Hw / sum_r MMD_r(1) + penalty mean(w^2)``,
    without a linear term) with the fit's QP backend, from uniform weights; ``mu`` is
    ``w`` scaled to ``sum(mu) = mu_total``. Depends on X and Z only: an init block, for
    a schedule without the balance term (beta = 0).

    Assumption: Z confounds the features through the clusters only (a site that changes
    which classes are sampled). Where Z drives features directly (a batch effect), those
    features cannot be balanced over Z by any weights and take the weight budget.

    Parameters
    ----------
    qp : QPBackend
        Resolved by the engine from the ``qp`` setting.
    penalty : float
        Weight of the spread penalty.
    """

    name = "nuisance_balance_weights"
    kind = "init"
    reads = ("X", "Z")
    writes = ("mu",)
    requires = ("qp",)

    def __init__(self, qp, penalty: float = 0.1):
        self.qp = qp
        self.penalty = check_value("penalty", penalty, Interval(float, 0))

    def cost(self, size) -> Cost:
        """About 100 products with the (n, q, d) balance operator of Z: ``1600 n d``
        flops. Memory: the operator's (n, d) moments and products (``3 n d`` floats),
        its (n, q) parts and the solver's vectors (``n (2 q + 7)`` measured,
        ``n (2 q + 12)`` declared), its (q, d) moments (``2 d (q + 1)``)."""
        n, d, q = size.n_samples, size.n_features, size.n_nuisance
        return Cost(flops=100 * 4.0 * n * d * 4,
                    memory={"nuisance_balance": (3 * n * d + n * (2 * q + 12)
                                                 + 2 * d * (q + 1)) * 8})

    def weights(self, state: State) -> np.ndarray:
        """Mean-one weights balancing Z over every treatment, (n,)."""
        p = state.problem
        n, q = p.Z.shape
        ones = np.ones(n)
        if p.balance is None:
            raise ValueError("nuisance_balance_weights needs the problem's balance operator "
                             "(Problem(balance=...), made by causefs.engine.balance_of)")
        operator = p.balance(p.Z, p.coding, np.ones((q, p.n_features), dtype=bool))
        start = operator.quad(ones)
        if q == 0 or start <= 0:  # nothing to balance
            return ones
        # penalty mean((w - 1)^2) = penalty (w'w - 2 sum(w) + n) / n: on sum(w) = n its
        # linear part is the constant -2 penalty, left out with the other (no minimizer
        # moves; it only inflated the scale the solver's tolerance is relative to)
        qp = SimplexQP(diag=np.full(n, 2.0 * self.penalty / n), linear=np.zeros(n),
                       total=float(n), balance=operator, balance_weight=2.0 / start)
        return self.qp.solve(qp, ones).x

    def step(self, state: State) -> State:
        p = state.problem
        return state.replace(mu=self.weights(state) * (p.mu_total / p.n_samples))
