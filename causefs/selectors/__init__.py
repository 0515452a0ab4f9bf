"""Feature selectors that one sweep can compare: CAUSE-FS and the baselines.

A selector scores every feature of preprocessed data (higher = better); the evaluation
protocol keeps the top rho. They are plugins of kind ``selector`` in the registry
(:func:`causefs.plugins.available`), built-ins included.
"""

from .base import Selector, ranking_from_scores
from .cause_fs import AllFeatures, CauseFSSelector
from .laplacian_score import LaplacianScore
from .mcfs import MCFS
from .ndfs import NDFS
from .spec import SPEC
from .udfs import UDFS

BUILTIN_SELECTORS = (CauseFSSelector, AllFeatures, LaplacianScore, SPEC, MCFS, UDFS, NDFS)

__all__ = ["BUILTIN_SELECTORS", "AllFeatures", "CauseFSSelector", "LaplacianScore", "MCFS",
           "NDFS", "SPEC", "Selector", "UDFS", "ranking_from_scores"]
