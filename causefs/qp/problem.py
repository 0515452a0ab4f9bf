"""The mu subproblem as a convex QP on a scaled simplex, given by its products."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp


@dataclass
class SimplexQP:
    """``min 1/2 x'Px + q'x`` subject to ``x >= 0, sum(x) = total``, with a structured
    ``P``.

    ``P = diag(diag) + sparse + balance_weight * H`` where ``H`` is the kernel's balance
    operator (PSD, known only through products). Backends that need ``P`` as a matrix
    call :meth:`dense` (the paper-literal path); matrix-free backends use
    :meth:`matvec` and :meth:`value`.

    Parameters
    ----------
    diag : ndarray of shape (n,)
    sparse : sparse (n, n) symmetric PSD, or None
    balance : balance operator with ``quad``, ``matvec``, ``dense``, or None
    balance_weight : float
    linear : ndarray of shape (n,)
        ``q``.
    total : float
        ``sum(x)``.
    max_products : int or None
        Products with ``P`` the caller grants the solve (None: no limit). A block of a
        block-coordinate descent needs a decrease, not the exact minimizer; backends that
        count products stop at ``min(their max_iter, max_products)``.
    """

    diag: np.ndarray
    linear: np.ndarray
    total: float
    sparse: Any = None
    balance: Any = None
    balance_weight: float = 0.0
    max_products: int | None = None

    def approximate(self) -> "SimplexQP":
        """The same problem with the balance operator's cheaper products (float32)."""
        if self.balance is None:
            return self
        return dataclasses.replace(self, balance=self.balance.low_precision())

    @property
    def n(self) -> int:
        return self.linear.shape[0]

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """``P x``."""
        out = self.diag * x
        if self.sparse is not None:
            out = out + self.sparse @ x
        if self.balance is not None and self.balance_weight:
            out = out + self.balance_weight * self.balance.matvec(x)
        return out

    def value(self, x: np.ndarray, Px: np.ndarray | None = None) -> float:
        """``1/2 x'Px + q'x``; pass ``Px`` when it is known to skip the product.

        Without ``Px`` the balance part is its operator's ``quad``, half a product.
        """
        if Px is not None:
            return float(0.5 * (x @ Px) + self.linear @ x)
        quadratic = x @ (self.diag * x)
        if self.sparse is not None:
            quadratic += x @ (self.sparse @ x)
        if self.balance is not None and self.balance_weight:
            quadratic += self.balance_weight * self.balance.quad(x)
        return float(0.5 * quadratic + self.linear @ x)

    def diagonal(self) -> np.ndarray:
        """``diag(P)``; the balance part only where its operator provides it."""
        out = self.diag.copy()
        if self.sparse is not None:
            out += self.sparse.diagonal()
        if self.balance is not None and self.balance_weight:
            balance = self.balance.diagonal()
            if balance is not None:
                out += self.balance_weight * balance
        return out

    def dense(self) -> np.ndarray:
        """``P`` as a dense symmetric (n, n) array (O(n^2) memory)."""
        P = np.diag(self.diag)
        if self.sparse is not None:
            P += sp.csr_array(self.sparse).toarray()
        if self.balance is not None and self.balance_weight:
            P += self.balance_weight * self.balance.dense()
        return 0.5 * (P + P.T)

    def frank_wolfe_gap(self, x: np.ndarray, gradient: np.ndarray) -> float:
        """``g'x - total * min(g)`` >= f(x) - f*: a certificate of optimality."""
        return float(gradient @ x - self.total * gradient.min())
