"""The granular-graph term: every feature group's embedding is smooth on its own graph."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..numerics.laplacian import (
    column_sq_norms,
    laplacian_matmul,
    laplacian_quadratic,
    symmetric_degree,
)
from .base import Term


def group_embedding(state, m: int) -> np.ndarray:
    """``X~ R_m W``: the (n, h) embedding of the samples by the features of group m."""
    cols = np.flatnonzero(state.groups == m)
    return state.mu[:, None] * (state.X_adjusted[:, cols] @ state.W[cols])


def granular_hessian(state):
    """Sparse ``sum_m H_m`` with ``mu' H_m mu = 1/2 sum_ij S_ij ||mu_i p_i - mu_j p_j||^2``.

    ``p_i = x_i R_m W``; ``H_m = diag(deg * ||p||^2) - Sym(S) o (p_i . p_j)`` has the
    sparsity of ``S[m] + S[m]'``. Returns None without granular graphs.
    """
    if not state.S:
        return None
    n = state.problem.n_samples
    rows, cols, vals = [], [], []
    for m, S in enumerate(state.S):
        idx = np.flatnonzero(state.groups == m)
        P = state.X_adjusted[:, idx] @ state.W[idx]
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


class GranularGraphsTerm(Term):
    """``sum_m [Tr(W' R_m X~' L_S[m] X~ R_m W) + sum_j gamma[m]_j ||S[m]_.j||^2]``.

    The samples' embedding by the features of each group m is smooth on that group's
    graph S[m]; gamma[m] regularizes the graph (re-estimated by the adaptive-neighbour
    closed form). 0 without granular graphs (ablation II).
    """

    name = "granular_graphs"
    reads = ("X_adjusted", "W", "mu", "S", "gamma", "groups")
    needs = ("W", "mu")

    def value(self, state) -> float:
        if not state.S:
            return 0.0
        total = 0.0
        for m, (S, gamma) in enumerate(zip(state.S, state.gamma)):
            total += laplacian_quadratic(S, group_embedding(state, m))
            total += float(gamma @ column_sq_norms(S))
        return total

    def add_to_selection_system(self, state, system) -> None:
        """``sum_m R_m X~' L_S[m] X~ R_m`` (block diagonal: groups are disjoint)."""
        for m, S in enumerate(state.S or ()):
            system.add_group_graph(np.flatnonzero(state.groups == m), S)

    def add_to_graph_cost(self, state, cost) -> None:
        """The distances of group m's embedding, for S[m] (eq. S.5)."""
        if cost.target == "S":
            cost.add_points(group_embedding(state, cost.index))
            if state.gamma is not None and cost.index < len(state.gamma):
                cost.add_regularizer(state.gamma[cost.index])

    def add_to_sample_weight_qp(self, state, qp) -> None:
        H = granular_hessian(state)
        if H is not None:
            qp.add_sparse(2.0 * H)

    def add_to_gradient(self, state, gradient) -> None:
        if not state.S:
            return
        if gradient.variable == "mu":
            gradient.add(2.0 * (granular_hessian(state) @ state.mu))
        elif gradient.variable == "W":
            G = np.zeros_like(state.W, dtype=float)
            for m, S in enumerate(state.S):
                cols = np.flatnonzero(state.groups == m)
                Xm = state.mu[:, None] * state.X_adjusted[:, cols]
                G[cols] = 2.0 * (Xm.T @ laplacian_matmul(S, Xm @ state.W[cols]))
            gradient.add(G)
