"""Linear MMD kernel (the paper): ``kappa(z, z') = <z, z'>``."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core.parts import Cost
from ..numerics.sparse import dense
from ..numerics.threads import PRODUCT_WIDE_FLOPS, threads_for
from .base import BalanceOperator, Kernel, active_pairs, gram_bytes

_PAIR_CHUNK = 256  # columns of the (n, chunk) factor built at a time by ``dense``
_ROW_CHUNK = 512  # rows of H built at a time: no (n, n) temporary besides H itself


class LinearBalance(BalanceOperator):
    """``v'Hv = sum_{f,r} K_fr (x_f' (v * a_r))^2 = ||K o (X_V' diag(v) A_T)||_F^2``.

    Value and product cost two ``(n x |V| x |T|)`` matrix products; nothing n x n is formed.
    The value of the latest vector is kept: the scheduler and the mu block ask for the
    same one.
    """

    def __init__(self, X, coding, K):
        V, T, mask = active_pairs(coding, K)
        self.n = X.shape[0]
        # sparse data stay sparse: the operator only multiplies by X_V
        self._X = X[:, V] if sp.issparse(X) else np.ascontiguousarray(X[:, V])
        self._A = np.ascontiguousarray(coding[:, T])
        self._mask = mask
        self._weights = mask.astype(float)
        self._last = None
        self._low = None

    def low_precision(self):
        """The same operator with float32 products (about 2.4x faster, 1e-7 relative):
        the data, the coding and the vector multiplied are rounded to float32."""
        if self._X.dtype == np.float32:
            return self
        if self._low is None:
            low = object.__new__(LinearBalance)
            low.n, low._mask, low._last, low._low = self.n, self._mask, None, None
            low._X, low._A, low._weights = (a.astype(np.float32)
                                            for a in (self._X, self._A, self._weights))
            low._low = low
            self._low = low
        return self._low

    def _flops(self):
        return 2.0 * self.n * self._mask.size

    def _moments(self, v):
        v = v.astype(self._A.dtype, copy=False)
        with threads_for(self._flops(), PRODUCT_WIDE_FLOPS):
            return self._X.T @ (v[:, None] * self._A)  # C_fr = sum_i v_i a_ri x_if

    def quad(self, v):
        if not self._mask.size:
            return 0.0
        if self._last is not None and np.array_equal(self._last[0], v):
            return self._last[1]
        C = self._moments(v).astype(float, copy=False)
        value = float(np.einsum("ij,ij,ij->", self._weights, C, C))
        self._last = (np.array(v, dtype=float), value)
        return value

    def matvec(self, v):
        if not self._mask.size:
            return np.zeros(self.n)
        C = self._weights * self._moments(v)
        with threads_for(self._flops(), PRODUCT_WIDE_FLOPS):
            back = self._X @ C
        return np.einsum("ij,ij->i", back, self._A).astype(float, copy=False)

    def diagonal(self):
        if not self._mask.size:
            return np.zeros(self.n)
        # elementwise squares: a scipy.sparse matrix's ``**`` is the matrix power
        X2 = self._X.multiply(self._X) if sp.issparse(self._X) else self._X**2
        with threads_for(self._flops() / 2, PRODUCT_WIDE_FLOPS):
            squares = X2 @ self._weights
        return np.einsum("ij,ij->i", squares, self._A**2).astype(float, copy=False)

    def _plan(self) -> tuple[bool, int]:
        """Whether ``dense`` starts from all pairs, and the width of the products it makes.

        H = sum over pairs (f, r) in K of u u', u = x_f * a_r. With many pairs it is
        cheaper to start from all pairs, (X_V X_V') o (A_T A_T'), and subtract the rest.
        Counted, not listed: the auto balance form asks for every new confounder set.
        """
        inside = int(np.count_nonzero(self._mask))
        from_all = self._mask.size - inside + sum(self._mask.shape)
        return (True, from_all) if from_all < inside else (False, inside)

    def product_flops(self):
        return 4.0 * self.n * self._mask.size

    def gram_flops(self):
        return 2.0 * self.n * self.n * self._plan()[1]

    def dense(self):
        X = dense(self._X)  # the Gram's row blocks are dense products
        H = np.zeros((self.n, self.n))
        from_all, _ = self._plan()
        pairs = np.argwhere(~self._mask if from_all else self._mask)
        sign = -1.0 if from_all else 1.0
        for lo in range(0, self.n, _ROW_CHUNK):
            rows = slice(lo, lo + _ROW_CHUNK)
            if from_all:
                H[rows] = (X[rows] @ X.T) * (self._A[rows] @ self._A.T)
            for start in range(0, pairs.shape[0], _PAIR_CHUNK):
                f, r = pairs[start:start + _PAIR_CHUNK].T
                U = X[:, f] * self._A[:, r]
                H[rows] += sign * (U[rows] @ U.T)
        return H


class LinearKernel(Kernel):
    """The paper's linear kernel; the balance term then equals eq. u.2's quadratic form."""

    name = "linear"
    accepts_sparse = True  # products with X_V only (forming the Gram densifies X_V)

    def balance_operator(self, X, coding, K, seed=0):
        return LinearBalance(X, coding, K)

    def cost(self, size) -> Cost:
        """A product: two ``(n x |V| x |T|)`` matrix products with every feature a
        confounder. Memory: an operator keeps X_V ``(n, d)`` and A_T ``(n, |T|)`` and two
        are cached; a product makes an ``(n, |T|)`` temporary at a time (the weighted
        coding, then the product back), and ``(d, |T|)`` pair weights, moments and their
        weighted copy; plus the Gram where ``balance_form`` forms it.

        Declared: ``4 n d |T|`` flops; ``2 n d + 3 n |T| + 6 d |T|`` floats and
        :func:`~causefs.kernels.base.gram_bytes`."""
        n, d, T = size.n_samples, size.n_features, size.n_treatments
        gram = gram_bytes(size)
        advice = {"balance_operator": "hold the balance term as products: "
                                      "balance_form='products'"} if gram else {}
        return Cost(flops=4.0 * n * d * T,
                    memory={"balance_operator": (2 * n * d + 3 * n * T + 6 * d * T) * 8
                            + gram},
                    advice=advice)
