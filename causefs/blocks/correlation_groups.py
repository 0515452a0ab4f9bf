"""Initial feature granularities: hierarchical clustering on Pearson distance."""

from __future__ import annotations

import numpy as np
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import squareform

from ..clustering import choose_groups
from ..state import State
from .base import Block
from .confounders import pearson_similarity


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
    kind = "init"
    reads = ("X",)
    writes = ("groups", "nu")
    requires = ("max_granularity",)

    def __init__(self, max_granularity: int = 10):
        self.max_granularity = max_granularity

    def step(self, state: State) -> State:
        similarity = pearson_similarity(state.X)

        def tree():
            # the condensed distances 1 - |corr| built in place: no second (d, d) array
            distance = squareform(similarity, checks=False)
            np.subtract(1.0, distance, out=distance)
            np.clip(distance, 0.0, None, out=distance)
            return linkage(distance, method="average")

        groups, _ = choose_groups(tree, similarity, self.max_granularity)
        n_groups = int(groups.max()) + 1
        return state.replace(groups=groups, nu=np.full(n_groups, 1.0 / n_groups))
