"""Per-level selection with rank aggregation, the single-cell recipe."""

from __future__ import annotations

import warnings

import numpy as np

from .nuisance_recipe import NuisanceRecipe, nuisance_levels


class PerLevelAggregation(NuisanceRecipe):
    """Select within every level of Z, then rank by how many levels select a feature.

    The recipe of scanpy's ``highly_variable_genes(batch_key=...)`` and Seurat's
    ``SelectIntegrationFeatures``: the base selector runs on the samples of each level
    of Z alone, where Z does not vary; a level *selects* its ``n_features_to_select``
    best features. Features are ranked by the number of levels that select them (most
    first), ties by their mean rank over the levels (1 = a level's best; scanpy's
    ``seurat_v3`` flavour takes the median). The score is
    ``count - mean_rank / (d + 1)``, which orders features that way.

    Assumption: the clusters appear within every level (a level holding one cluster
    has no cluster structure to select by). A level with fewer samples than the base
    selector needs (or than ``2 * n_clusters``) is left out with a warning; Z must be
    labels (several columns: one level per combination).

    Parameters
    ----------
    base : str, default "mcfs"
        The selector run within each level.
    """

    name = "per_level"
    display_name = "PerLevel"

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        X = np.asarray(X, dtype=float)
        supplied = dict(n_clusters=n_clusters, n_features_to_select=n_features_to_select,
                        random_state=random_state)
        if nuisance is None:
            self.levels_used_ = None
            return self.base_scores(X, **supplied)
        levels = nuisance_levels(nuisance, X.shape[0])
        d = X.shape[1]
        ranks, self.levels_used_ = [], []
        for level in np.unique(levels):
            rows = np.flatnonzero(levels == level)
            if not self._enough(rows.size, d, n_clusters):
                warnings.warn(f"per_level: level {str(level)!r} has {rows.size} samples, too few "
                              f"to select within; left out", UserWarning, stacklevel=2)
                continue
            order = np.argsort(-self.base_scores(X[rows], **supplied), kind="stable")
            rank = np.empty(d)
            rank[order] = np.arange(1, d + 1)
            ranks.append(rank)
            self.levels_used_.append(str(level))
        if not ranks:
            raise ValueError("per_level: no level of Z has enough samples to select within")
        ranks = np.asarray(ranks)
        count = (ranks <= n_features_to_select).sum(axis=0)
        return count - ranks.mean(axis=0) / (d + 1)

    def _enough(self, n_samples, n_features, n_clusters) -> bool:
        if n_samples < max(2 * n_clusters, 3):
            return False
        try:
            self.base_selector().check_data(n_samples, n_features, n_clusters)
        except ValueError:
            return False
        return True

    def details(self) -> dict:
        return {"levels_used": getattr(self, "levels_used_", None)}
