"""Feature selectors that one sweep can compare: CAUSE-FS and the baselines.

A selector scores every feature of preprocessed data (higher = better); the evaluation
protocol keeps the top rho. Selectors are a plugin layer above the estimator
(hook ``causefs_register_selectors``): :func:`available_selectors` lists the registered
ones, built-ins included, and :func:`make_selector` builds one by name.
"""

from .base import Selector, accepts_nuisance, ranking_from_scores
from .builtin import BUILTIN_SELECTORS
from .cause_fs import AllFeatures, CauseFSSelector
from .cnafs import CNAFS
from .fsdk import FSDK
from .laplacian_score import LaplacianScore
from .location_scale import LocationScaleCorrection, location_scale_corrected
from .mcfs import MCFS
from .ndfs import NDFS
from .nuisance_recipe import NuisanceRecipe, nuisance_levels
from .per_level import PerLevelAggregation
from .screening import NuisanceScreening
from .random_features import RandomFeatures
from .catalog import SelectorRegistry, available_selectors, get_selector, make_selector
from .spec import SPEC
from .udfs import UDFS
from .vcsdfs import VCSDFS

__all__ = ["BUILTIN_SELECTORS", "AllFeatures", "CauseFSSelector", "CNAFS", "FSDK", "LaplacianScore",
           "LocationScaleCorrection", "MCFS", "NDFS", "NuisanceRecipe", "NuisanceScreening",
           "PerLevelAggregation", "RandomFeatures", "SPEC", "Selector", "SelectorRegistry",
           "UDFS", "VCSDFS", "accepts_nuisance", "available_selectors", "get_selector",
           "location_scale_corrected", "make_selector", "nuisance_levels",
           "ranking_from_scores"]
