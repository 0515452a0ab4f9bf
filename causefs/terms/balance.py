"""The confounder-balance term ``beta sum_r MMD_r(mu)`` (paper eq. 3.3-3.5)."""

from __future__ import annotations

from ..model.settings import DEFAULTS, check_setting
from .base import Term


class BalanceTerm(Term):
    """``beta sum_r MMD_r(mu) = beta mu' H(K) mu``: the sample weights make every
    treatment's treated and control samples alike in its confounders K[:, r], by the
    fit's MMD kernel (docs/MODEL.md, "Confounder balance").

    The balance operator ``H(K)`` is the problem's (:meth:`causefs.model.problem.Problem.
    balance_operator`: the kernel on the data as given, ``X``, and the treatment coding).

    Parameters
    ----------
    beta : float
        Its weight (the ``beta`` setting); 0 switches the term off.
    """

    name = "balance"
    weighted_by = "beta"
    reads = ("X", "mu", "K")
    needs = ("mu", "K")
    requires = ("beta",)

    def __init__(self, beta: float = DEFAULTS.beta):
        self.beta = check_setting("beta", beta)

    def value(self, state) -> float:
        if state.K is None:
            raise ValueError("the balance term (beta != 0) needs the confounder sets K")
        return self.beta * state.problem.balance_value(state.K, state.mu)

    def add_to_sample_weight_qp(self, state, qp) -> None:
        qp.add_balance(state.problem.balance_operator(state.K), 2.0 * self.beta)

    def add_to_gradient(self, state, gradient) -> None:
        if gradient.variable == "mu":
            operator = state.problem.balance_operator(state.K)
            gradient.add(2.0 * self.beta * operator.matvec(state.mu))
