"""Terms of the objective J, one class per file (a plugin kind).

==================  ===================  =======  =========================================
registry name       class                weight   J (paper eq. 3.5)
==================  ===================  =======  =========================================
regression          RegressionTerm       alpha    ``alpha ||X~ W - F||^2``
fused_smoothness    FusedSmoothnessTerm           ``Tr(F' L_G F)``
sparsity            SparsityTerm         lam      ``lam sum_f sqrt(||W_f||^2 + eps)``
granular_graphs     GranularGraphsTerm            ``sum_m Tr(W'R_m X~'L_S[m] X~ R_m W)
                                                  + gamma[m] ||S[m]||^2``
fusion              FusionTerm                    ``- sum_m nu_m <G, S[m]> + xi ||G||^2``
balance             BalanceTerm          beta     ``beta sum_r MMD_r(mu)``
==================  ===================  =======  =========================================

A schedule names its terms (``terms:``); CAUSE-FS's objective is all six, its ablations
leave some out. A term adds its part to the subproblems of the descent blocks
(:mod:`causefs.model.subproblems`).
"""

from .balance import BalanceTerm
from .base import Term
from .fused_smoothness import FusedSmoothnessTerm
from .fusion import FusionTerm
from .granular_graphs import GranularGraphsTerm
from .regression import RegressionTerm
from .sparsity import SparsityTerm

BUILTIN_TERMS = (RegressionTerm, FusedSmoothnessTerm, SparsityTerm, GranularGraphsTerm,
                 FusionTerm, BalanceTerm)

__all__ = ["BUILTIN_TERMS", "Term"] + [cls.__name__ for cls in BUILTIN_TERMS]
