"""mu update (paper eq. u.3): a convex QP on the scaled simplex."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..graphs import symmetric_degree
from ..qp import SimplexQP
from ..state import State
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
    XW = p.X @ state.W
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


class SampleWeightsBlock(Block):
    """Update mu by solving its QP with the configured backend, warm-started at mu.

    Parameters
    ----------
    qp : QPBackend
        Resolved by the engine from the ``qp`` setting.
    """

    name = "sample_weights"
    kind = "descent"
    reads = ("X", "W", "F", "mu", "K")
    optional_reads = ("S", "groups")
    writes = ("mu",)

    def __init__(self, qp):
        self.qp = qp

    def step(self, state: State) -> State:
        result = self.qp.solve(sample_weight_qp(state), state.mu)
        return state.replace(mu=result.x)
