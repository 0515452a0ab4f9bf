"""Kernel and balance-operator interfaces."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from ..core.parts import Part
from ..core.validation import check_choice
from ..model.settings import BALANCE_FORMS

_FLOAT = 8


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

    def low_precision(self) -> "BalanceOperator":
        """A cheaper, less precise version for an iterative solver's inner products.

        The mu block solves with it and then checks the result with the exact operator,
        so an inexact version costs accuracy of the solve, never descent. The default is
        the operator itself.
        """
        return self

    def product_flops(self) -> float | None:
        """Floating-point operations of one ``matvec``, if known (for ``balance_form``)."""
        return None

    def gram_flops(self) -> float | None:
        """Floating-point operations of ``dense()``, if known (for ``balance_form``)."""
        return None


class GramBalance(BalanceOperator):
    """``H`` held as a dense (n, n) array: a product costs n^2 whatever the kernel."""

    def __init__(self, H: np.ndarray):
        self._H = H

    def quad(self, v):
        return float(v @ (self._H @ v))

    def matvec(self, v):
        return self._H @ v

    def dense(self):
        return self._H.copy()

    def diagonal(self):
        return np.diag(self._H).copy()


#: ``auto`` forms the Gram when that costs less than this many products: the Gram is
#: rebuilt whenever the confounder sets change (every iteration) and a warm-started mu
#: solve needs few products, so only a clearly cheaper Gram pays (docs/PERFORMANCE.md)
GRAM_BREAK_EVEN_PRODUCTS = 10
#: ... and when the (n, n) Gram takes at most this many bytes
GRAM_MAX_BYTES = 1 << 30


def gram_fits(n: int) -> bool:
    """Whether ``auto`` may form an (n, n) Gram: n^2 doubles within :data:`GRAM_MAX_BYTES`."""
    return 8 * n * n <= GRAM_MAX_BYTES


def with_balance_form(operator: BalanceOperator, form: str, n: int) -> BalanceOperator:
    """The operator in the form ``form`` asks for (see :data:`BALANCE_FORMS`).

    Both forms give the same ``H``; the Gram trades n^2 memory for products that cost n^2
    instead of the kernel's own (for the linear kernel 4 n |V| |T|: at COIL20's size the
    Gram costs about 340 products once the confounder sets are pruned, so products win;
    with every pair a confounder it costs under one product).
    """
    check_choice("balance_form", form, BALANCE_FORMS)
    if form == "products" or isinstance(operator, GramBalance):
        return operator
    if form == "auto":
        if not gram_fits(n):
            return operator
        product, gram = operator.product_flops(), operator.gram_flops()
        if product is None or gram is None or gram >= GRAM_BREAK_EVEN_PRODUCTS * product:
            return operator
    return GramBalance(np.asarray(operator.dense(), dtype=float))


class Kernel(Part, ABC):
    """An MMD kernel: builds the balance operator of given confounder sets.

    Its :meth:`cost` is that of one product with the operator (``flops``, ``ops``) and
    the operator's memory (``memory``): blocks declare how many products they make.
    """

    name: ClassVar[str]

    @abstractmethod
    def balance_operator(self, X: np.ndarray, coding: np.ndarray, K: np.ndarray,
                         seed: int = 0) -> BalanceOperator:
        """Balance operator for data ``X`` (n, d), treatment coding (n, d), confounders K (d, d).

        Parameters
        ----------
        X : ndarray or sparse matrix of shape (n, d)
        coding : ndarray of shape (n, d)
        K : ndarray of bool, shape (d, d)
        seed : int, default=0
            Seeds a kernel's random choices (the engine passes the fit's seed).
        """


def gram_bytes(size) -> float:
    """Memory of the (n, n) Gram ``balance_form`` may form, and the three row blocks of
    512 rows it is built from (``n^2 + 1536 n`` floats); 0 where it is not formed."""
    n, form = size.n_samples, size.settings.balance_form
    if form == "gram" or (form == "auto" and gram_fits(n)):
        return (n * n + 3 * 512 * n) * _FLOAT
    return 0.0


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
