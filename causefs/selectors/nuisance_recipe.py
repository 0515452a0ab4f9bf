"""What the simple recipes for known nuisance variables share: a base selector and Z."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..core.validation import InvalidParameterError
from .base import Selector
from .laplacian_score import LaplacianScore
from .mcfs import MCFS
from .ndfs import NDFS
from .spec import SPEC
from .udfs import UDFS

#: the selectors a recipe runs: the built-in baselines, which ignore Z (CAUSE-FS takes Z
#: itself; the registry is not read here, it imports the recipes)
BASES = {cls.name: cls for cls in (MCFS, NDFS, LaplacianScore, SPEC, UDFS)}


def nuisance_levels(nuisance, n_samples: int) -> np.ndarray:
    """The level of every sample (n_samples,) of str: the label of categorical nuisance
    variables, joined by "/" for several columns (one level per combination).

    Raises
    ------
    ValueError
        Float covariates (the recipe needs levels: bin them), a length other than
        ``n_samples``, or a single level.
    """
    columns = np.asarray(nuisance.to_numpy() if hasattr(nuisance, "to_numpy") else nuisance)
    if columns.ndim not in (1, 2) or columns.shape[0] != n_samples:
        raise ValueError(f"nuisance: expected labels of shape ({n_samples},) or "
                         f"({n_samples}, p), got shape {columns.shape}")
    if columns.dtype.kind == "f":
        raise ValueError("nuisance: this recipe works within levels of Z and needs labels "
                         "(integers or strings); bin continuous covariates first")
    levels = np.array(["/".join(row) for row in columns.astype(str).reshape(n_samples, -1)])
    if np.unique(levels).size < 2:
        raise ValueError("nuisance has one level: it carries no nuisance to adjust for")
    return levels


class NuisanceRecipe(Selector):
    """A base selector run on data made free of Z by a simple recipe (the comparisons of
    docs/RESULTS.md, "Known nuisance variables"). Without Z, it is the base selector.

    Parameters
    ----------
    base : str, default "mcfs"
        The baseline the recipe runs (with its default options), one of :data:`BASES`.
    """

    adjusts_for_nuisance: ClassVar[bool] = True

    def __init__(self, base="mcfs"):
        if base not in BASES:
            raise InvalidParameterError(f"base={base!r}: must be one of {sorted(BASES)}")
        self.base = base

    def base_selector(self) -> Selector:
        """A fresh instance of the base selector."""
        return BASES[self.base]()

    def base_scores(self, X, **supplied) -> np.ndarray:
        """The base selector's scores of ``X`` (what the experiment supplies passed on)."""
        return np.asarray(self.base_selector().score(X, **supplied), dtype=float)

    def check_data(self, n_samples, n_features, n_clusters) -> None:
        self.base_selector().check_data(n_samples, n_features, n_clusters)

    @classmethod
    def label(cls, options) -> str:
        """The recipe and its base, ``Screening + MCFS``."""
        base = BASES.get(options.get("base", cls.defaults()["base"]))
        return f"{cls.display_name} + {base.display_name if base else options['base']}"
