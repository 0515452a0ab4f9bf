"""Initial feature granularities: hierarchical clustering on Pearson distance."""

from __future__ import annotations

import numpy as np
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import squareform

from ...core.parts import Cost
from ...core.state import State
from ...model.settings import DEFAULTS, check_setting
from ...numerics.correlation import pearson_similarity
from ...numerics.feature_clustering import choose_groups
from ..base import Block


class CorrelationGroupsBlock(Block):
    """Groups by average-linkage clustering on ``1 - |corr|``; M by Calinski-Harabasz.

    The Calinski-Harabasz score sees each feature as its profile of absolute
    correlations (its row of ``|corr|``), the same sign-free similarity the linkage
    uses. ``nu_m = 1/M`` (paper, end of section 4).

    Parameters
    ----------
    max_granularity : int
        Largest number of groups M tried.
    """

    name = "correlation_groups"
    accepts_sparse = True
    kind = "init"
    reads = ("X_adjusted",)
    writes = ("groups", "nu")
    requires = ("max_granularity",)

    def __init__(self, max_granularity: int = DEFAULTS.max_granularity):
        self.max_granularity = check_setting("max_granularity", max_granularity)

    def cost(self, size) -> Cost:
        """|corr| (d, d), its condensed distances and SciPy's copy of them; the linkage."""
        n, d = size.n_samples, size.n_features
        return Cost(flops=2.0 * n * d * d, ops=10.0 * d * d,
                    memory={"feature_clustering": 2.5 * d * d * 8},
                    advice={"feature_clustering": "reduce the number of features (d x d "
                                                  "systems dominate)"})

    def step(self, state: State) -> State:
        similarity = pearson_similarity(state.X_adjusted)

        def tree():
            # the condensed distances 1 - |corr| built in place: no second (d, d) array
            distance = squareform(similarity, checks=False)
            np.subtract(1.0, distance, out=distance)
            np.clip(distance, 0.0, None, out=distance)
            return linkage(distance, method="average")

        groups, _ = choose_groups(tree, similarity, self.max_granularity)
        n_groups = int(groups.max()) + 1
        return state.replace(groups=groups, nu=np.full(n_groups, 1.0 / n_groups))
