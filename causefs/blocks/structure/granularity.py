"""Granularity update (Algorithm 1, lines 9-10): regroup features by their contributions."""

from __future__ import annotations

import numpy as np
from scipy.cluster.hierarchy import linkage

from ...budget.graphs import graph_cost
from ...core.parts import Cost
from ...core.state import State
from ...core.validation import check_choice
from ...model.settings import DEFAULTS, check_setting
from ...numerics.feature_clustering import choose_groups, ward_tree_1d
from ..base import Block
from ..descent.granular_graphs import granular_graphs

GROUPING_FEATURES = ("contribution", "rows")


def granularity_weights(W: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """``nu_m = sum_{f in group m} ||W_f||^2 / sum_f ||W_f||^2`` (uniform if W = 0)."""
    contribution = np.einsum("ij,ij->i", W, W)
    total = contribution.sum()
    if not total > 0:
        return np.full(n_groups, 1.0 / n_groups)
    return np.bincount(groups, weights=contribution, minlength=n_groups) / total


class GranularityBlock(Block):
    """Causally-guided hierarchical clustering of the features, then nu and S[m].

    Ward clustering of the features on their contributions ``||W_f||^2`` (1-D, default)
    or on the rows of W; M is the Calinski-Harabasz choice over 2..max_granularity. The
    granular graphs belong to the old groups, so they are rebuilt for the new ones with
    the S closed form. Structural: it changes the objective itself.

    Parameters
    ----------
    max_granularity : int
        Largest number of groups M tried.
    grouping : {"contribution", "rows"}
        What the features are clustered on.
    neighbor_algorithm : str
        Candidate search of the rebuilt graphs
        (:data:`causefs.numerics.neighbors.NEIGHBOR_ALGORITHMS`).
    """

    name = "granularity"
    accepts_sparse = True
    kind = "structural"
    reads = ("X_adjusted", "W", "mu", "G")
    writes = ("groups", "nu", "S", "gamma")
    requires = ("max_granularity", "neighbor_algorithm")

    def __init__(self, max_granularity: int = DEFAULTS.max_granularity,
                 grouping: str = "contribution",
                 neighbor_algorithm: str = DEFAULTS.neighbor_algorithm):
        self.max_granularity = check_setting("max_granularity", max_granularity)
        self.grouping = check_choice("grouping", grouping, GROUPING_FEATURES)
        self.neighbor_algorithm = check_setting("neighbor_algorithm", neighbor_algorithm)

    def cost(self, size) -> Cost:
        """The rebuilt graphs (counted as all of them; unchanged groups keep theirs)."""
        return graph_cost(size, size.n_granularities, fresh=False, granular=True)

    def step(self, state: State) -> State:
        W = state.W
        if self.grouping == "contribution":
            points = np.einsum("ij,ij->i", W, W)[:, None]
            build = lambda: ward_tree_1d(points[:, 0])  # noqa: E731
        else:
            points = W
            build = lambda: linkage(points, method="ward")  # noqa: E731
        groups, _ = choose_groups(build, points, self.max_granularity)
        n_groups = int(groups.max()) + 1
        nu = granularity_weights(W, groups, n_groups)
        S, gamma = granular_graphs(state, groups, nu, self.neighbor_algorithm,
                                   keep=_unchanged_groups(state, groups))
        return state.replace(groups=groups, nu=nu, S=S, gamma=gamma)


def _unchanged_groups(state: State, groups: np.ndarray) -> set:
    """Groups m whose features are the same as before: their graphs S[m] still belong to
    them and are kept (a regrouping invalidates the graphs of the changed groups only)."""
    if state.groups is None or state.S is None:
        return set()
    return {m for m in range(min(int(groups.max()) + 1, len(state.S)))
            if np.array_equal(groups == m, state.groups == m)}
