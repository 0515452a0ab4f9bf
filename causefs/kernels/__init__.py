"""MMD kernels of the confounder-balance term, in the weighted-embedding form.

For treatment r with coding ``a_r`` and confounder values ``x_i[K_r]`` (``K_r = K[:, r]``,
its confounder set),

    MMD_r(mu) = sum_ij mu_i mu_j a_ri a_rj kappa(x_i[K_r], x_j[K_r]) = mu' H_r mu,

so the balance term ``sum_r MMD_r`` is a PSD quadratic form in mu for any positive
definite kernel and the mu problem stays a convex simplex QP (docs/MODEL.md,
"Confounder balance").
"""

from .base import BalanceOperator, GramBalance, Kernel, with_balance_form
from .linear import LinearKernel
from .rbf import RBFKernel

__all__ = ["BalanceOperator", "GramBalance", "Kernel", "LinearKernel",
           "RBFKernel", "with_balance_form"]
