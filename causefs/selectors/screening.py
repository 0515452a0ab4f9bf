"""Screening: drop the features whose variance Z explains, then a base selector."""

from __future__ import annotations

import numpy as np

from ..core.validation import Interval, check_value
from ..model.nuisance_coding import code_nuisance
from ..numerics.nuisance_effects import variance_share
from .nuisance_recipe import NuisanceRecipe


class NuisanceScreening(NuisanceRecipe):
    """Screen out the features Z explains, then run the base selector on the others.

    A feature is screened when the share of its variance that the nuisance variables
    explain (R^2 on the coded Z; for labels the between-level share, eta^2:
    :func:`causefs.numerics.nuisance_effects.variance_share`) is at least
    ``threshold``. The base selector scores the kept features; every screened feature
    scores below every kept one, ordered by its share (least explained first).

    Assumption: a feature Z explains that much carries no cluster structure of its
    own. It fails when the clusters and Z are so tied that the cluster features are
    screened too (raise ``threshold``), and keeps a nuisance feature whose share is
    below it.

    Parameters
    ----------
    base : str, default "mcfs"
        The selector run on the kept features.
    threshold : float, default 0.3
        Share of variance at or above which a feature is screened out.
    """

    name = "screening"
    display_name = "Screening"

    def __init__(self, base="mcfs", threshold=0.3):
        super().__init__(base)
        self.threshold = check_value("threshold", threshold,
                                     Interval(float, 0, 1, closed="right"))

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        X = np.asarray(X, dtype=float)
        supplied = dict(n_clusters=n_clusters, random_state=random_state)
        if nuisance is None:
            self.share_ = None
            return self.base_scores(X, n_features_to_select=n_features_to_select,
                                    **supplied)
        self.share_ = variance_share(X, code_nuisance(nuisance, X.shape[0]))
        kept = self.share_ < self.threshold
        scores = np.empty(X.shape[1])
        if kept.any():
            scores[kept] = self.base_scores(
                X[:, kept], n_features_to_select=min(n_features_to_select, int(kept.sum())),
                **supplied)
        floor = scores[kept].min() - 1.0 if kept.any() else 0.0
        scores[~kept] = floor - self.share_[~kept]
        return scores

    def details(self) -> dict:
        share = getattr(self, "share_", None)
        return {"nuisance_share": None if share is None else share.tolist(),
                "n_screened": 0 if share is None else int((share >= self.threshold).sum())}

    def describe(self, details) -> list[str]:
        return [f"{details['n_screened']} features screened out (share of variance Z "
                f"explains >= {self.threshold:g})"]
