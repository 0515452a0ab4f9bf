"""A baseline selector: features with the largest variance."""

import numpy as np

from causefs.selectors import Selector


class VarianceSelector(Selector):
    """Scores every feature by its variance (ddof 0) on the scaled data."""

    name = "variance"
    depends_on_count = False  # one fit serves every number of features a benchmark keeps

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        return np.var(np.asarray(X, dtype=float), axis=0)
