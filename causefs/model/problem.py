"""What stays fixed while the blocks run: the data, the objective, its feasible set."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .settings import DEFAULTS, check_setting
from .variables import FIELDS

#: the settings a problem is made of (the rest say how it is solved: :class:`Settings`;
#: the objective's weights are its terms' options)
PROBLEM_SETTINGS = ("n_clusters", "n_neighbors", "sample_weights")


@dataclass(eq=False)
class Problem:
    """An objective on given data: the data, the objective (its terms with their
    weights), and the sizes of its feasible set. How it is solved is not part of it
    (:class:`Settings`).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Preprocessed data (the estimator scales it and drops constant features).
    coding : ndarray of shape (n_samples, n_features)
        Treatment coding ``a_r`` of every feature r
        (:func:`causefs.model.treatments.treatment_coding`); a column of zeros marks
        a feature that is no treatment.
    n_clusters : int
        Dimension ``h`` of the embedding ``F`` and of the columns of ``W``.
    n_neighbors : int
        Non-zeros ``k`` per column of every graph.
    sample_weights : {"mean_one", "simplex"}
        ``sum(mu)``: n for ``mean_one``, 1 for ``simplex`` (:attr:`mu_total`).
    objective : Objective, optional
        J, the sum of the schedule's terms (:class:`causefs.model.objective.Objective`);
        the scheduler minimizes it and the descent blocks ask it for their subproblems.
    balance : callable, optional
        ``balance(X, coding, K)`` returns the balance operator (the MMD kernel's
        quadratic form in mu, :mod:`causefs.kernels`) for confounder sets ``K``; the
        engine makes it from the kernel (:func:`causefs.engine.balance_of`). Needed by
        the balance term and the blocks that balance.
    Z : ndarray of shape (n_samples, q), optional
        Known nuisance variables, coded (:func:`causefs.model.nuisance_coding.
        code_nuisance`): what the blocks that adjust for them read; None when the fit was
        given none.
    neighbors : ndarray of int, shape (n_samples, c), or object, optional
        Neighbour candidates the fit was given (:meth:`causefs.CauseFS.fit`'s
        ``neighbors``, checked by :func:`causefs.numerics.given_neighbors.check_neighbors`):
        they replace the search of the initial fused graph on the raw data.
    anchors : ndarray of int, shape (m,), optional
        Sorted distinct sample indices every graph draws its neighbours from
        (:mod:`causefs.numerics.anchors`, the ``n_anchors`` setting): the feasible set of
        S[m] and G is then the graphs whose support lies in them. None: every sample.
    fields : mapping of str to Field
        The declaration of every field of the fit's states
        (:mod:`causefs.model.variables`, and those of plugin parts).

    Every value is checked by the rule of the setting of the same name
    (:mod:`causefs.model.settings`).
    """

    X: np.ndarray
    coding: np.ndarray
    n_clusters: int = DEFAULTS.n_clusters
    n_neighbors: int = DEFAULTS.n_neighbors
    sample_weights: str = DEFAULTS.sample_weights
    objective: Any = None
    balance: Callable | None = None
    Z: np.ndarray | None = None
    neighbors: Any = None
    anchors: np.ndarray | None = None
    fields: Mapping = field(default_factory=lambda: {f.name: f for f in FIELDS})
    _operators: dict = field(default_factory=dict, repr=False)
    _last_value: list = field(default_factory=list, repr=False)
    _reused: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        for name in PROBLEM_SETTINGS:
            check_setting(name, getattr(self, name))
        if self.Z is not None and (self.Z.ndim != 2 or self.Z.shape[0] != self.n_samples):
            raise ValueError(f"Z must be the coded nuisance design (n_samples, q) = "
                             f"({self.n_samples}, q), got shape {self.Z.shape}")
        if self.anchors is not None:
            a = np.asarray(self.anchors)
            if (a.ndim != 1 or a.dtype.kind not in "iu" or a.size < self.n_neighbors + 2
                    or (a.size and (a[0] < 0 or a[-1] >= self.n_samples))
                    or np.any(np.diff(a) <= 0)):
                raise ValueError("anchors must be sorted distinct sample indices, at least "
                                 f"n_neighbors + 2 = {self.n_neighbors + 2} of them")

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_nuisance(self) -> int | None:
        """Columns of the coded nuisance variables Z (None without them)."""
        return None if self.Z is None else self.Z.shape[1]

    @property
    def mu_total(self) -> float:
        """``sum(mu)``: 1 for ``sample_weights="simplex"``, n for ``"mean_one"``."""
        return 1.0 if self.sample_weights == "simplex" else float(self.n_samples)

    def balance_operator(self, K):
        """The balance operator for confounder sets ``K``, built once per ``K``."""
        if self.balance is None:
            raise ValueError("balancing needs a balance operator: Problem(balance=...), made "
                             "by causefs.engine.balance_of")
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

    def reuse(self, name: str, inputs: tuple, compute: Callable):
        """``compute()``, reused while ``inputs`` are the very same objects as at the last
        call under ``name`` (blocks replace the variables they write, so an input left
        untouched is the same object). One entry a name; the inputs stay referenced, so
        their ids cannot be reused. The value is shared: callers must not modify it."""
        hit = self._reused.get(name)
        if hit is not None and len(hit[0]) == len(inputs) and all(
                a is b for a, b in zip(hit[0], inputs)):
            return hit[1]
        value = compute()
        self._reused[name] = (inputs, value)
        return value

    def balance_value(self, K, mu) -> float:
        """``sum_r MMD_r(mu)`` for confounder sets ``K`` (unweighted by beta), cached."""
        hit = self._last_value
        if hit and hit[0] is K and hit[1] is mu:
            return hit[2]
        value = float(self.balance_operator(K).quad(mu))
        self._last_value[:] = [K, mu, value]
        return value
