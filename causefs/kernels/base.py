"""Kernel and balance-operator interfaces."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np


class BalanceOperator(ABC):
    """The PSD form ``H = sum_r H_r`` of the balance term, known through products."""

    @abstractmethod
    def quad(self, v: np.ndarray) -> float:
        """``v' H v`` (= sum_r MMD_r(v))."""

    @abstractmethod
    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``H v``."""

    @abstractmethod
    def dense(self) -> np.ndarray:
        """``H`` as a dense (n, n) array, for reference backends."""

    def diagonal(self) -> np.ndarray | None:
        """``diag(H)`` if cheap to compute (used as a preconditioner), else None."""
        return None


class Kernel(ABC):
    """An MMD kernel: builds the balance operator of given confounder sets."""

    name: ClassVar[str]

    @abstractmethod
    def balance_operator(self, X: np.ndarray, coding: np.ndarray, K: np.ndarray,
                         seed: int = 0) -> BalanceOperator:
        """Balance operator for data ``X`` (n, d), treatment coding (n, d), confounders K (d, d)."""

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({options})"


def active_pairs(coding: np.ndarray, K: np.ndarray):
    """Treatments with confounders and the features that confound any of them.

    Returns ``(V, T, mask)``: indices of confounding features, of treatments, and the
    bool mask ``K[V][:, T]``.
    """
    is_treatment = np.any(coding != 0, axis=0)
    K = np.asarray(K, dtype=bool) & is_treatment[None, :]
    T = np.flatnonzero(K.any(axis=0))
    V = np.flatnonzero(K[:, T].any(axis=1))
    return V, T, K[np.ix_(V, T)]
