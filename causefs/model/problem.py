"""What stays fixed while the blocks run: the data, the objective's weights, its feasible set."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .settings import DEFAULTS, check_setting

#: the settings a problem is made of (the rest say how it is solved: :class:`Settings`)
PROBLEM_SETTINGS = ("n_clusters", "n_neighbors", "sample_weights", "alpha", "beta", "lam",
                    "eps")


@dataclass(eq=False)
class Problem:
    """The CAUSE-FS objective (the paper's equation 3.5) on given data: its data, weights and
    the sizes of its feasible set. How it is solved is not part of it (:class:`Settings`).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Preprocessed data (the estimator scales it and drops constant features).
    coding : ndarray of shape (n_samples, n_features)
        Treatment coding ``a_r`` of every feature r
        (:func:`causefs.model.treatment_coding.treatment_coding`); a column of zeros marks
        a feature that is no treatment.
    n_clusters : int
        Dimension ``h`` of the embedding ``F`` and of the columns of ``W``.
    n_neighbors : int
        Non-zeros ``k`` per column of every graph.
    sample_weights : {"mean_one", "simplex"}
        ``sum(mu)``: n for ``mean_one``, 1 for ``simplex`` (:attr:`mu_total`).
    alpha, beta, lam, eps : float
        Weights of the regression, balance and row-sparsity terms; smoothing of the
        l2,1 norm.
    balance : callable, optional
        ``balance(X, coding, K)`` returns the balance operator (the MMD kernel's
        quadratic form in mu, :mod:`causefs.kernels`) for confounder sets ``K``; the
        engine makes it from the kernel (:func:`causefs.engine.balance_of`). Needed when
        ``beta != 0``.
    Z : ndarray of shape (n_samples, q), optional
        Known nuisance variables, coded (:func:`causefs.model.nuisance.code_nuisance`):
        what the blocks that adjust for them read; None when the fit was given none.

    Every value is checked by the rule of the setting of the same name
    (:mod:`causefs.model.settings`).
    """

    X: np.ndarray
    coding: np.ndarray
    n_clusters: int = DEFAULTS.n_clusters
    n_neighbors: int = DEFAULTS.n_neighbors
    sample_weights: str = DEFAULTS.sample_weights
    alpha: float = DEFAULTS.alpha
    beta: float = DEFAULTS.beta
    lam: float = DEFAULTS.lam
    eps: float = DEFAULTS.eps
    balance: Callable | None = None
    Z: np.ndarray | None = None
    _operators: dict = field(default_factory=dict, repr=False)
    _last_value: list = field(default_factory=list, repr=False)

    def __post_init__(self):
        for name in PROBLEM_SETTINGS:
            check_setting(name, getattr(self, name))
        if self.Z is not None and (self.Z.ndim != 2 or self.Z.shape[0] != self.n_samples):
            raise ValueError(f"Z must be the coded nuisance design (n_samples, q) = "
                             f"({self.n_samples}, q), got shape {self.Z.shape}")

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def mu_total(self) -> float:
        """``sum(mu)``: 1 for ``sample_weights="simplex"``, n for ``"mean_one"``."""
        return 1.0 if self.sample_weights == "simplex" else float(self.n_samples)

    def balance_operator(self, K):
        """The balance operator for confounder sets ``K``, built once per ``K``."""
        if self.balance is None:
            raise ValueError("the balance term (beta != 0) needs a balance operator: "
                             "Problem(balance=...), made by causefs.engine.balance_of")
        key = id(K)
        hit = self._operators.get(key)
        if hit is not None and hit[0] is K:
            return hit[1]
        operator = self.balance(self.X, self.coding, K)
        # keep K referenced so its id cannot be reused while cached; two entries suffice
        # for a scheduler that compares a state with its successor
        if len(self._operators) >= 2:
            self._operators.pop(next(iter(self._operators)))
        self._operators[key] = (K, operator)
        return operator

    def balance_value(self, K, mu) -> float:
        """``sum_r MMD_r(mu)`` for confounder sets ``K`` (unweighted by beta), cached."""
        hit = self._last_value
        if hit and hit[0] is K and hit[1] is mu:
            return hit[2]
        value = float(self.balance_operator(K).quad(mu))
        self._last_value[:] = [K, mu, value]
        return value
