"""The built-in selectors (CAUSE-FS and the baselines), registered as a plugin."""

from __future__ import annotations

from ..plugins.hookspecs import hookimpl
from .cause_fs import AllFeatures, CauseFSSelector
from .cnafs import CNAFS
from .fsdk import FSDK
from .laplacian_score import LaplacianScore
from .location_scale import LocationScaleCorrection
from .mcfs import MCFS
from .ndfs import NDFS
from .per_level import PerLevelAggregation
from .screening import NuisanceScreening
from .random_features import RandomFeatures
from .spec import SPEC
from .udfs import UDFS
from .vcsdfs import VCSDFS

BUILTIN_SELECTORS = (CauseFSSelector, AllFeatures, RandomFeatures, LaplacianScore,
                     SPEC, MCFS, UDFS, NDFS, FSDK, VCSDFS, CNAFS,
                     NuisanceScreening, PerLevelAggregation, LocationScaleCorrection)


@hookimpl(tryfirst=True)
def causefs_register_selectors(registry):
    for selector in BUILTIN_SELECTORS:
        registry.add_selector(selector)
