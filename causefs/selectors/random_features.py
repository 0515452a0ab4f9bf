"""Random features: the baseline every selector must beat ("Worse than Random", 2026)."""

from __future__ import annotations

import numpy as np

from ..numerics.scaling import constant_features
from .base import Selector
from .udfs import CONSTANT_SCORE


class RandomFeatures(Selector):
    """A uniformly random ranking of the features, seeded by ``random_state``.

    Rajabinasab, Houle, Chelly & Zimek (2026, "Worse than Random", arXiv 2605.22973)
    compare unsupervised selectors with a random subset of the same size; a benchmark
    reports this row as the mean over several seeds (``random_state`` 0, 1, ...).
    Constant features are the documented exception: they score :data:`CONSTANT_SCORE` and
    rank last (as for every other selector), so a random subset never wastes a slot on a
    feature that carries nothing; the non-constant ones are a uniform permutation.
    """

    name = "random_features"
    display_name = "Random"
    depends_on_count = False

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        constant = constant_features(X)
        scores = np.full(X.shape[1], CONSTANT_SCORE)
        rng = np.random.default_rng(random_state)
        scores[~constant] = rng.permutation(int((~constant).sum()))
        return scores
