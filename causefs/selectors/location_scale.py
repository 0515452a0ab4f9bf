"""Per-level location/scale correction (ComBat without shrinkage), then a base selector."""

from __future__ import annotations

import numpy as np

from .nuisance_recipe import NuisanceRecipe, nuisance_levels


def location_scale_corrected(X: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """``X`` with every level's mean and scale of every feature set to the pooled ones.

    ComBat's model (Johnson, Li & Rabinovic, Biostatistics 2007, eq. 2.1) without
    covariates and without the empirical-Bayes step: ``x_ijg = alpha_g + gamma_ig +
    delta_ig eps_ijg`` for sample j of level i and feature g. With ``alpha_g`` the
    grand mean and ``sigma_g^2`` the pooled within-level variance (divided by n), the
    standardized data ``z = (x - alpha_g) / sigma_g`` give per level
    ``gamma_ig = mean(z)`` and ``delta_ig^2 = var(z)`` (n_i - 1 divisor), and the
    corrected data are ``sigma_g (z - gamma_ig) / delta_ig + alpha_g``.

    Fallbacks: a constant feature (``sigma_g = 0``) is returned as it is; where
    ``delta_ig`` cannot be estimated or is 0 (a level of one sample, or a feature
    constant within a level) only the location is corrected (``delta_ig = 1``).
    """
    onehot = levels[:, None] == np.unique(levels)[None, :]
    counts = onehot.sum(axis=0)
    means = (onehot.T @ X) / counts[:, None]  # per level, (L, d)
    alpha = X.mean(axis=0)
    sigma = np.sqrt(np.mean((X - onehot @ means) ** 2, axis=0))
    varies = sigma > 0
    z = np.where(varies, (X - alpha) / np.where(varies, sigma, 1.0), 0.0)
    gamma = (onehot.T @ z) / counts[:, None]
    spread = onehot.T @ (z - onehot @ gamma) ** 2
    delta = np.sqrt(np.divide(spread, (counts - 1)[:, None],
                              out=np.ones_like(spread), where=(counts > 1)[:, None]))
    delta = np.where(delta > 0, delta, 1.0)
    corrected = sigma * (z - onehot @ gamma) / (onehot @ delta) + alpha
    return np.where(varies, corrected, X)


class LocationScaleCorrection(NuisanceRecipe):
    """Correct every level's location and scale (ComBat-style), then a base selector.

    :func:`location_scale_corrected` removes each level's shift and scale of every
    feature; the base selector then scores the corrected data. Assumption: Z acts on a
    feature by a shift and a scale per level, and the clusters are spread alike over
    the levels (where Z is tied to the clusters, the correction also removes cluster
    structure, as ComBat without covariates does). Z must be labels. ComBat's
    empirical-Bayes shrinkage of the level estimates is not applied (it matters for
    levels of few samples).

    Parameters
    ----------
    base : str, default "mcfs"
        The selector run on the corrected data.
    """

    name = "location_scale"
    display_name = "LocScale"

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        X = np.asarray(X, dtype=float)
        if nuisance is not None:
            X = location_scale_corrected(X, nuisance_levels(nuisance, X.shape[0]))
        return self.base_scores(X, n_clusters=n_clusters,
                                n_features_to_select=n_features_to_select,
                                random_state=random_state)
