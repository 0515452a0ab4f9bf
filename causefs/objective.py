"""The CAUSE-FS objective (paper eq. 3.5, SPEC "Objective"), term by term.

    J = alpha * ||X~ W - F||_F^2                                  regression
      + Tr(F' L_G F)                                               fused_smoothness
      + lambda * sum_f sqrt(||W_f||^2 + eps)                       sparsity
      + sum_m [Tr(W' R_m X~' L_S[m] X~ R_m W)
               + sum_j gamma[m]_j ||S[m]_.j||^2]                   granular_graphs
      - sum_m nu_m <G, S[m]> + sum_j xi_j ||G_.j||^2               fusion
      + beta * sum_r MMD_r(mu)                                     balance

with ``X~ = diag(mu) X``. A term whose variables are not part of the schedule (no
granular graphs in ablation II) is 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .graphs import column_sq_norms, laplacian_quadratic
from .state import State

TERMS = ("regression", "fused_smoothness", "sparsity", "granular_graphs", "fusion", "balance")


@dataclass(frozen=True)
class ObjectiveValue:
    """Total objective and its terms (keys of :data:`TERMS`)."""

    total: float
    terms: dict

    def as_dict(self) -> dict:
        return {"total": self.total, **self.terms}


def group_embedding(state: State, m: int) -> np.ndarray:
    """``X~ R_m W``: the (n, h) embedding of the samples by the features of group m."""
    cols = np.flatnonzero(state.groups == m)
    return state.mu[:, None] * (state.X[:, cols] @ state.W[cols])


def sparsity(W: np.ndarray, lam: float, eps: float) -> float:
    """``lam * sum_f sqrt(||W_f||^2 + eps)`` (eps-smoothed l2,1 norm)."""
    return float(lam * np.sqrt(np.einsum("ij,ij->i", W, W) + eps).sum())


def objective(state: State) -> ObjectiveValue:
    """Evaluate J at ``state``; needs at least ``W``, ``F`` and ``mu``."""
    missing = {"W", "F", "mu"} - state.available()
    if missing:
        raise ValueError(f"the objective needs {sorted(missing)}, which are not set yet")
    p = state.problem
    W, F, mu = state.W, state.F, state.mu
    terms = dict.fromkeys(TERMS, 0.0)
    residual = mu[:, None] * (p.X @ W) - F
    terms["regression"] = float(p.alpha * np.einsum("ij,ij->", residual, residual))
    terms["sparsity"] = sparsity(W, p.lam, p.eps)
    if state.G is not None:
        terms["fused_smoothness"] = laplacian_quadratic(state.G, F)
        if state.xi is not None:
            terms["fusion"] = float(state.xi @ column_sq_norms(state.G))
    if state.n_granularities:
        granular = 0.0
        for m, (S, gamma) in enumerate(zip(state.S, state.gamma)):
            granular += laplacian_quadratic(S, group_embedding(state, m))
            granular += float(gamma @ column_sq_norms(S))
        terms["granular_graphs"] = granular
        if state.G is not None:
            terms["fusion"] -= float(
                sum(nu * state.G.multiply(S).sum() for nu, S in zip(state.nu, state.S))
            )
    if p.beta != 0:
        if state.K is None:
            raise ValueError("the balance term (beta != 0) needs the confounder sets K")
        terms["balance"] = p.beta * p.balance_value(state.K, mu)
    return ObjectiveValue(total=float(sum(terms.values())), terms=terms)
