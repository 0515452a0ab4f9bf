"""An MMD kernel: the Laplace kernel ``exp(-||z - z'||_1 / s_r)``, exact and dense."""

import numpy as np
from scipy.spatial.distance import pdist, squareform

from causefs.core.parts import Cost
from causefs.kernels import Kernel
from causefs.kernels.base import GramBalance


class LaplaceKernel(Kernel):
    """Laplace kernel on the confounders of each treatment, with ``s_r`` the median
    pairwise L1 distance (1 when all samples coincide).

    Positive definite, so the mu problem stays a convex QP. Forms the (n, n) balance
    Hessian ``sum_r (a_r a_r') o kappa_r``: for small n only (O(n^2 d) per treatment).

    Parameters
    ----------
    bandwidth_scale : float
        Multiplies the median heuristic.
    """

    name = "laplace"

    def __init__(self, bandwidth_scale: float = 1.0):
        if not bandwidth_scale > 0:
            raise ValueError(f"bandwidth_scale must be > 0, got {bandwidth_scale}")
        self.bandwidth_scale = bandwidth_scale

    def balance_operator(self, X, coding, K, seed=0):
        n = X.shape[0]
        H = np.zeros((n, n))
        for r in np.flatnonzero(np.any(coding != 0, axis=0) & K.any(axis=0)):
            distances = pdist(X[:, K[:, r]], metric="cityblock")
            median = np.median(distances) if distances.size else 0.0
            bandwidth = self.bandwidth_scale * (median if median > 0 else 1.0)
            gram = squareform(np.exp(-distances / bandwidth))
            np.fill_diagonal(gram, 1.0)
            H += np.outer(coding[:, r], coding[:, r]) * gram
        return GramBalance(H)

    def cost(self, size):
        """What a fit's budget counts for this kernel (causefs.budget): a product with
        the dense (n, n) Hessian, and the Hessian with the (n, n) distances it is built
        from."""
        n = size.n_samples
        return Cost(flops=2.0 * n * n, memory={"balance_operator": 3 * n * n * 8},
                    advice={"balance_operator": "use kernel='linear' (laplace is dense)"})
