"""CAUSE-FS as a selector (the estimator with the same hyperparameters)."""

from __future__ import annotations

import numpy as np

from ..estimator import CauseFS
from .base import Selector


class CauseFSSelector(Selector):
    """:class:`causefs.CauseFS` scores ``||W_f||_2``; keywords are its parameters.

    The input is already scaled, so the estimator's own scaling is switched off.
    """

    name = "causefs"

    def __init__(self, **params):
        self.params = params

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0):
        params = {"preprocessing": "none", **self.params}
        self.estimator_ = CauseFS(n_clusters=n_clusters,
                                  n_features_to_select=min(n_features_to_select, X.shape[1]),
                                  random_state=random_state, **params).fit(X)
        return self.estimator_.scores_

    def get_params(self) -> dict:
        return dict(self.params)


class AllFeatures(Selector):
    """AllFea: every feature, whatever rho (scores are all equal)."""

    name = "all_features"
    select_all = True

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0):
        return np.zeros(X.shape[1])
