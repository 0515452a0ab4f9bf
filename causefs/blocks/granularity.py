"""Granularity update (Algorithm 1, lines 9-10): regroup features by their contributions."""

from __future__ import annotations

import numpy as np
from scipy.cluster.hierarchy import linkage

from ..clustering import choose_groups, ward_tree_1d
from ..state import State
from .base import Block
from .granular_graphs import granular_graphs

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
    """

    name = "granularity"
    kind = "structural"
    reads = ("X", "W", "mu", "G")
    writes = ("groups", "nu", "S", "gamma")
    requires = ("max_granularity",)

    def __init__(self, max_granularity: int = 10, grouping: str = "contribution"):
        if grouping not in GROUPING_FEATURES:
            raise ValueError(
                f"unknown grouping {grouping!r}; allowed: {', '.join(GROUPING_FEATURES)}"
            )
        self.max_granularity = max_granularity
        self.grouping = grouping

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
        S, gamma = granular_graphs(state, groups, nu, keep=_unchanged_groups(state, groups))
        return state.replace(groups=groups, nu=nu, S=S, gamma=gamma)


def _unchanged_groups(state: State, groups: np.ndarray) -> set:
    """Groups m whose features are the same as before: their graphs S[m] still belong to
    them and are kept (SPEC: regrouping invalidates the graphs of the changed groups)."""
    if state.groups is None or state.S is None:
        return set()
    return {m for m in range(min(int(groups.max()) + 1, len(state.S)))
            if np.array_equal(groups == m, state.groups == m)}
