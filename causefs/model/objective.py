"""The CAUSE-FS objective (paper eq. 3.5), term by term (docs/MODEL.md, "Objective").

    J = alpha * ||X~ W - F||_F^2                                  regression
      + Tr(F' L_G F)                                               fused_smoothness
      + lambda * sum_f sqrt(||W_f||^2 + eps)                       sparsity
      + sum_m [Tr(W' R_m X~' L_S[m] X~ R_m W)
               + sum_j gamma[m]_j ||S[m]_.j||^2]                   granular_graphs
      - sum_m nu_m <G, S[m]> + sum_j xi_j ||G_.j||^2               fusion
      + beta * sum_r MMD_r(mu)                                     balance

with ``X~ = diag(mu) X``, where X is the data the blocks fit (``state.X``: less the
nuisance effect ``Z Theta`` once a block has estimated it). A term whose variables are not part of the schedule (no
granular graphs in ablation II) is 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.state import State
from ..numerics.laplacian import column_sq_norms, laplacian_quadratic

TERMS = ("regression", "fused_smoothness", "sparsity", "granular_graphs", "fusion", "balance")


@dataclass(frozen=True)
class ObjectiveValue:
    """Total objective and its terms (keys of :data:`TERMS`)."""

    total: float
    terms: dict


def group_embedding(state: State, m: int) -> np.ndarray:
    """``X~ R_m W``: the (n, h) embedding of the samples by the features of group m."""
    cols = np.flatnonzero(state.groups == m)
    return state.mu[:, None] * (state.X[:, cols] @ state.W[cols])


def sparsity(W: np.ndarray, lam: float, eps: float) -> float:
    """``lam * sum_f sqrt(||W_f||^2 + eps)`` (eps-smoothed l2,1 norm)."""
    return float(lam * np.sqrt(np.einsum("ij,ij->i", W, W) + eps).sum())


#: the variables each term depends on (besides the fixed problem)
TERM_INPUTS = {
    "regression": ("W", "F", "mu", "Theta"),
    "fused_smoothness": ("G", "F"),
    "sparsity": ("W",),
    "granular_graphs": ("S", "gamma", "groups", "W", "mu", "Theta"),
    "fusion": ("G", "xi", "S", "nu"),
    "balance": ("mu", "K"),
}


def _granular_graphs(state: State) -> float:
    if not state.n_granularities:
        return 0.0
    total = 0.0
    for m, (S, gamma) in enumerate(zip(state.S, state.gamma)):
        total += laplacian_quadratic(S, group_embedding(state, m))
        total += float(gamma @ column_sq_norms(S))
    return total


def _fusion(state: State) -> float:
    if state.G is None:
        return 0.0
    total = float(state.xi @ column_sq_norms(state.G)) if state.xi is not None else 0.0
    if state.n_granularities:
        total -= float(sum(nu * state.G.multiply(S).sum() for nu, S in zip(state.nu, state.S)))
    return total


def _regression(state: State) -> float:
    residual = state.mu[:, None] * (state.X @ state.W) - state.F
    return float(state.problem.alpha * np.einsum("ij,ij->", residual, residual))


def _balance(state: State) -> float:
    p = state.problem
    if p.beta == 0:
        return 0.0
    if state.K is None:
        raise ValueError("the balance term (beta != 0) needs the confounder sets K")
    return p.beta * p.balance_value(state.K, state.mu)


_TERMS = {
    "regression": _regression,
    "fused_smoothness": lambda s: laplacian_quadratic(s.G, s.F) if s.G is not None else 0.0,
    "sparsity": lambda s: sparsity(s.W, s.problem.lam, s.problem.eps),
    "granular_graphs": _granular_graphs,
    "fusion": _fusion,
    "balance": _balance,
}


def objective(state: State, cache: dict | None = None) -> ObjectiveValue:
    """Evaluate J at ``state``; needs at least ``W``, ``F`` and ``mu``.

    ``cache`` (a dict kept by the caller, e.g. the scheduler) reuses a term whose input
    variables are the very same objects as at its last evaluation: blocks replace the
    variables they write, so a term is recomputed only when one of its inputs changed.
    """
    missing = {"W", "F", "mu"} - state.available()
    if missing:
        raise ValueError(f"the objective needs {sorted(missing)}, which are not set yet")
    terms = {}
    for name in TERMS:
        inputs = tuple(getattr(state, field) for field in TERM_INPUTS[name])
        hit = cache.get(name) if cache is not None else None
        if hit is not None and hit[0] is state.problem and len(hit[1]) == len(inputs) and all(
                a is b for a, b in zip(hit[1], inputs)):
            terms[name] = hit[2]
            continue
        terms[name] = float(_TERMS[name](state))
        if cache is not None:
            cache[name] = (state.problem, inputs, terms[name])
    return ObjectiveValue(total=float(sum(terms.values())), terms=terms)


class CauseFSObjective:
    """J as the scheduler's objective (:class:`causefs.core.scheduler.Objective`).

    It needs W, F and mu, and the confounder sets K when the balance term is on.
    """

    name = "cause_fs"

    def needs(self, problem) -> tuple:
        return ("W", "F", "mu") + (("K",) if problem.beta != 0 else ())

    def __call__(self, state: State, cache: dict | None = None) -> ObjectiveValue:
        return objective(state, cache)
