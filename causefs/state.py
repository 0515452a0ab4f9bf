"""The optimization state of CAUSE-FS and the fixed problem it belongs to.

A :class:`Problem` holds what stays fixed during a fit (the preprocessed data, the
treatment coding, the objective's hyperparameters and the MMD kernel); a :class:`State`
holds the variables of SPEC's table. Blocks never mutate a state: they return a new one
with the variables they own replaced (:meth:`State.replace`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .kernels.base import with_balance_form

#: every variable a block may read or write, with its meaning (SPEC, "Variables")
STATE_FIELDS = {
    "W": "feature selection matrix, (d, h)",
    "D": "IRLS weights 1 / (2 sqrt(||W_f||^2 + eps)), (d,)",
    "F": "spectral embedding with orthonormal columns, (n, h)",
    "mu": "sample weights on the (scaled) simplex, (n,)",
    "S": "granular similarity graphs S[m], tuple of sparse (n, n), k non-zeros a column",
    "gamma": "adaptive-neighbour parameters of the S[m], tuple of (n,)",
    "G": "fused similarity graph, sparse (n, n), k non-zeros a column",
    "xi": "adaptive-neighbour parameters of G, (n,)",
    "groups": "feature granularity of every feature, ints in 0..M-1, (d,)",
    "nu": "granularity weights, (M,)",
    "K": "confounder sets, K[f, r] = feature f confounds treatment r, bool (d, d)",
}

#: fields a problem provides before any block runs
PROBLEM_FIELDS = frozenset({"X"})


@dataclass(eq=False)
class Problem:
    """Everything that stays fixed while the blocks run.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Preprocessed data (the estimator min-max scales and drops constant features).
    coding : ndarray of shape (n_samples, n_features)
        Treatment coding ``a_r`` of every feature r (SPEC, confounder balance); a column of
        zeros marks a feature that is no treatment.
    n_clusters : int
        Dimension ``h`` of the embedding ``F`` and of the columns of ``W``.
    alpha, beta, lam, eps : float
        Weights of the regression, balance and row-sparsity terms; smoothing of the
        l2,1 norm (paper eq. 3.5, SPEC "Objective").
    n_neighbors : int
        Non-zeros ``k`` per column of every graph.
    mu_total : float
        ``sum(mu)``: 1 for ``sample_weights='simplex'``, n for ``'mean_one'``.
    kernel : object
        MMD kernel with a ``balance_operator(X, coding, K)`` method (see
        :mod:`causefs.kernels`).
    neighbor_algorithm : str
        Nearest-neighbour search used to find graph candidates (scikit-learn's
        ``algorithm`` of :class:`~sklearn.neighbors.NearestNeighbors`).
    balance_form : {"auto", "products", "gram"}
        How the balance operator is held (:func:`causefs.kernels.with_balance_form`).
    seed : int
        Seed of every random choice a block makes (eigensolver start vectors, ...).
    """

    X: np.ndarray
    coding: np.ndarray
    n_clusters: int
    alpha: float = 1.0
    beta: float = 1.0
    lam: float = 1.0
    eps: float = 1e-8
    n_neighbors: int = 5
    mu_total: float = 1.0
    kernel: Any = None
    neighbor_algorithm: str = "auto"
    balance_form: str = "auto"
    seed: int = 0
    _balance_cache: dict = field(default_factory=dict, repr=False)
    _value_cache: list = field(default_factory=list, repr=False)

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    def balance_operator(self, K):
        """The kernel's balance operator for confounder sets ``K``, built once per ``K``."""
        key = id(K)
        hit = self._balance_cache.get(key)
        if hit is not None and hit[0] is K:
            return hit[1]
        op = with_balance_form(
            self.kernel.balance_operator(self.X, self.coding, K, seed=self.seed),
            self.balance_form, self.n_samples)
        # keep K referenced so its id cannot be reused while cached; two entries suffice
        # for a scheduler that compares a state with its successor
        if len(self._balance_cache) >= 2:
            self._balance_cache.pop(next(iter(self._balance_cache)))
        self._balance_cache[key] = (K, op)
        return op

    def balance_value(self, K, mu) -> float:
        """``sum_r MMD_r(mu)`` for confounder sets ``K`` (unweighted by beta), cached."""
        hit = self._value_cache
        if hit and hit[0] is K and hit[1] is mu:
            return hit[2]
        value = float(self.balance_operator(K).quad(mu))
        self._value_cache[:] = [K, mu, value]
        return value

    def with_params(self, **params) -> "Problem":
        """A copy with some hyperparameters changed (the balance cache is not shared)."""
        return dataclasses.replace(self, _balance_cache={}, _value_cache=[], **params)


@dataclass(frozen=True, eq=False)
class State:
    """The variables of CAUSE-FS (SPEC's table) bound to their problem.

    Unset variables are ``None``. ``S`` and ``gamma`` are tuples with one entry per
    feature granularity; an empty tuple means no granular graphs (ablation II).
    """

    problem: Problem
    W: np.ndarray | None = None
    D: np.ndarray | None = None
    F: np.ndarray | None = None
    mu: np.ndarray | None = None
    S: tuple | None = None
    gamma: tuple | None = None
    G: Any = None
    xi: np.ndarray | None = None
    groups: np.ndarray | None = None
    nu: np.ndarray | None = None
    K: np.ndarray | None = None

    @property
    def X(self) -> np.ndarray:
        return self.problem.X

    def replace(self, **updates) -> "State":
        """A new state with ``updates`` applied; unknown names raise ``TypeError``."""
        unknown = set(updates) - set(STATE_FIELDS)
        if unknown:
            raise TypeError(
                f"State has no variable(s) {sorted(unknown)}; variables are {sorted(STATE_FIELDS)}"
            )
        return dataclasses.replace(self, **updates)

    def available(self) -> frozenset:
        """Names of the variables that are set, plus the problem's fields."""
        return PROBLEM_FIELDS | {name for name in STATE_FIELDS if getattr(self, name) is not None}

    @property
    def n_granularities(self) -> int:
        return 0 if self.S is None else len(self.S)
