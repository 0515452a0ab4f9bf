"""Adaptive-neighbour graphs: one closed form for S[m], G and the initial graphs.

The closed form (paper eqs. S.5 and G.3, after Nie et al. 2014) for column j is

    tau_ij = 1/2 ||y_i - y_j||^2 - P_ij,   i != j,

keep the k smallest, ``S_ij = (tau_(k+1)j - tau_ij) / (k tau_(k+1)j - sum_p<=k tau_pj)`` and
``gamma_j = (k tau_(k+1)j - sum_p<=k tau_pj) / 2``. ``P`` is the prior that lowers tau
(``nu_m G`` for S[m], ``sum_m nu_m S[m]`` for G, nothing at initialization). Its
candidates come from :mod:`causefs.numerics.neighbors`. Graphs are
``scipy.sparse.csc_array`` of shape (n, n) whose column j holds the k neighbours of j.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core.validation import check_choice
from .neighbors import (
    candidate_table,
    half_squared_distances,
    nearest_candidates,
    nearest_given,
    resolve_algorithm,
    row_space,
    search_points,
)
from .simplex import project_simplex

#: how the adaptive parameter of a column is set at each update
ADAPTIVE_UPDATES = {
    "closed_form": "re-estimate gamma_j at every update (the paper): exactly k neighbours",
    "monotone": "take the re-estimate where it does not raise the column's objective, "
    "else keep gamma_j and the exact minimizer for it (at most k neighbours): the "
    "block then never raises J as it stands",
}


def check_adaptive_update(value: str) -> str:
    """``value`` if it is one of :data:`ADAPTIVE_UPDATES`."""
    return check_choice("adaptive_update", value, ADAPTIVE_UPDATES)


def adaptive_neighbors(cand_idx: np.ndarray, cand_tau: np.ndarray, k: int,
                       previous: tuple | None = None):
    """Closed-form adaptive-neighbour weights (eq. S.5) for every column.

    Parameters
    ----------
    cand_idx : ndarray of int, shape (n, c)
        Row ``j`` lists the candidate neighbours i of column j (c >= k + 1).
    cand_tau : ndarray of float, shape (n, c)
        ``tau_ij`` of each candidate; ``+inf`` marks padding or a repeated candidate.
    k : int
        Number of neighbours kept per column.
    previous : (weights, gamma), optional
        ``adaptive_update="monotone"``: the previous column weights aligned with the
        candidates, (n, c), and the previous gamma, (n,). A column whose re-estimated
        closed form would raise ``<tau, s> + gamma ||s||^2`` above its previous value
        keeps its gamma and takes the exact minimizer for it,
        ``proj_simplex(-tau / (2 gamma))``, whose support lies within the k smallest tau.

    Returns
    -------
    graph : csc_array of shape (n, n)
        Column j has k non-zeros (at most k with ``previous``) that sum to 1.
    gamma : ndarray of shape (n,)
        ``(k tau_(k+1) - sum_p tau_p) / 2`` per column (or the kept gamma); 0 where the
        column fell back to uniform weights.

    Notes
    -----
    Ties are broken by the smaller index (candidates are visited in index order). When
    the k + 1 smallest tau are all equal, the denominator vanishes (duplicate points,
    constant data); the column then puts uniform weights 1/k on its k nearest
    candidates, which is still a minimizer of the column problem (its gamma is 0).
    """
    n, c = cand_tau.shape
    if c < k + 1:
        raise ValueError(f"need at least k + 1 = {k + 1} candidates per column, got {c}")
    # order candidates by index first, so the stable sort on tau breaks ties by index
    by_index = np.argsort(cand_idx, axis=1, kind="stable")
    cand_idx = np.take_along_axis(cand_idx, by_index, axis=1)
    cand_tau = np.take_along_axis(cand_tau, by_index, axis=1)
    order = np.argsort(cand_tau, axis=1, kind="stable")[:, : k + 1]
    tau = np.take_along_axis(cand_tau, order, axis=1)
    rows = np.take_along_axis(cand_idx, order[:, :k], axis=1)
    if not np.all(np.isfinite(tau)):
        raise ValueError("fewer than k + 1 finite candidates in some column")
    numerators = tau[:, k : k + 1] - tau[:, :k]
    denominators = numerators.sum(axis=1)
    degenerate = ~(denominators > 0)
    weights = np.empty_like(numerators)
    ok = ~degenerate
    # dividing by the sum of the numerators (= k tau_(k+1) - sum tau_p) keeps columns
    # summing to 1 to rounding
    weights[ok] = numerators[ok] / denominators[ok, None]
    weights[degenerate] = 1.0 / k
    gamma = np.where(degenerate, 0.0, denominators / 2.0)
    if previous is not None:
        old_weights = np.take_along_axis(previous[0], by_index, axis=1)
        old_gamma = previous[1]
        finite_tau = np.where(old_weights > 0, cand_tau, 0.0)
        old_value = (finite_tau * old_weights).sum(axis=1) + old_gamma * (old_weights**2).sum(1)
        new_value = (tau[:, :k] * weights).sum(axis=1) + gamma * (weights**2).sum(axis=1)
        keep = new_value > old_value
        if keep.any():
            weights[keep] = _fixed_gamma_weights(tau[keep, :k], old_gamma[keep])
            gamma[keep] = old_gamma[keep]
    graph = sp.csc_array(
        (weights.ravel(), rows.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n)
    )
    graph.has_sorted_indices = False
    graph.sort_indices()
    graph.eliminate_zeros()
    return graph, gamma


def _fixed_gamma_weights(tau: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Rows of ``argmin_{s in simplex} <tau, s> + gamma ||s||^2`` on sorted candidates."""
    weights = np.empty_like(tau)
    linear = gamma <= 0  # a linear column: uniform mass on its smallest tau
    if linear.any():
        ties = tau[linear] == tau[linear, :1]
        weights[linear] = ties / ties.sum(axis=1, keepdims=True)
    quadratic = ~linear
    weights[quadratic] = project_simplex(-tau[quadratic] / (2.0 * gamma[quadratic, None]))
    return weights


def adaptive_graph(Y, k: int, prior=None, algorithm: str = "auto",
                   previous: tuple | None = None, warm: list | None = None,
                   seeds: np.ndarray | None = None):
    """Adaptive-neighbour graph of the rows of ``Y`` with an optional prior (eq. S.5).

    Parameters
    ----------
    Y : ndarray or sparse matrix of shape (n, p)
        Points; ``tau_ij = 1/2 ||Y_i - Y_j||^2 - prior_ij``. The exact search and given
        seeds take their rows sparse where that costs less
        (:func:`~causefs.numerics.neighbors.search_points`: sparse data, or dense data
        with few non-zeros); the other searches take them dense. Dense points of lower
        rank than their columns are searched, and their distances taken, in the
        coordinates of their row space (:func:`~causefs.numerics.neighbors.row_space`;
        not by ``"all"``, the paper-literal reference).
    k : int
        Neighbours per column, ``1 <= k <= n - 2``.
    prior : sparse (n, n) with non-negative entries, optional
        Column j holds ``P_ij``; its support joins the kNN candidates of column j.
    algorithm : str
        Candidate search, one of :data:`NEIGHBOR_ALGORITHMS`.
    previous : (graph, gamma), optional
        The graph being replaced and its gamma, for ``adaptive_update="monotone"``
        (see :func:`adaptive_neighbors`); its support joins the candidates.
    warm : list of sparse (n, n), optional
        Graphs whose supports seed an approximate search and join its candidates. The
        graph being replaced belongs here: with its support among the candidates, the
        closed form over the candidates never does worse than it (the block descends
        whatever the search found). An exact search needs none: the k + 1 nearest and
        the prior's support hold the k + 1 smallest tau of every column.
    seeds : ndarray of int, shape (n, c), optional
        Given candidates of every column (-1 pads; the neighbours a fit was given,
        :mod:`causefs.numerics.given_neighbors`): they replace the search, each column
        keeping its k + 1 nearest seeds by ``Y``'s distances (a column with fewer valid
        seeds is searched exactly).

    Returns
    -------
    graph : csc_array of shape (n, n)
    gamma : ndarray of shape (n,)
    """
    n = Y.shape[0]
    if not 1 <= k <= n - 2:
        raise ValueError(
            f"n_neighbors={k} needs 1 <= n_neighbors <= n_samples - 2 = {n - 2} "
            "(the closed form uses the (k+1)-th neighbour of every sample)"
        )
    if algorithm != "all" and not sp.issparse(Y):
        # the same distances in fewer dimensions: a cheaper search, exact by the tree
        Y = row_space(np.asarray(Y, dtype=float))
    algorithm = resolve_algorithm(algorithm, n, Y.shape[1])
    # given seeds are completed by the exact search
    Y = search_points(Y, "exact" if seeds is not None else algorithm)
    warm = [g for g in (warm or ()) if g is not None] if algorithm == "approximate" else []
    if seeds is not None:
        cand = nearest_given(Y, seeds, k + 1)
    else:
        cand = nearest_candidates(Y, k + 1, algorithm,
                                  warm + ([prior] if prior is not None else []))
    graphs = [g for g in (prior, None if previous is None else previous[0]) if g is not None]
    if algorithm == "all":  # dense reference: look every pair up
        aligned = [sp.csc_array(g).toarray()[cand, np.arange(n)[:, None]] for g in graphs]
    else:
        cand, aligned = candidate_table(cand, graphs + warm)
        aligned = aligned[:len(graphs)]
    tau = half_squared_distances(Y, cand)
    if prior is not None:
        tau -= aligned[0]
    old = None if previous is None else (aligned[-1], np.asarray(previous[1], dtype=float))
    return adaptive_neighbors(cand, tau, k, old)
