"""Feature selectors that one sweep can compare: CAUSE-FS and the baselines.

A selector scores every feature of preprocessed data (higher = better); the evaluation
protocol keeps the top rho. They are plugins of kind ``selector`` in the registry
(:func:`causefs.plugins.available`), built-ins included.
"""

from .base import Selector, ranking_from_scores
from .cause_fs import AllFeatures, CauseFSSelector

BUILTIN_SELECTORS = (CauseFSSelector, AllFeatures)

__all__ = ["BUILTIN_SELECTORS", "AllFeatures", "CauseFSSelector", "Selector",
           "ranking_from_scores"]
