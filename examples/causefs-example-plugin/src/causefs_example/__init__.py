"""An example causefs plugin: one piece of every kind, registered in :mod:`.plugin`."""

from .laplace_kernel import LaplaceKernel
from .osqp_backend import OSQPBackend
from .procrustes_embedding import ProcrustesEmbeddingBlock
from .ridge_term import RidgeTerm
from .variance_selector import VarianceSelector

__all__ = ["LaplaceKernel", "OSQPBackend", "ProcrustesEmbeddingBlock", "RidgeTerm",
           "VarianceSelector"]
