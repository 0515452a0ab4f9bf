"""Initial feature granularities: hierarchical clustering on Pearson distance."""

from __future__ import annotations

import numpy as np

from ...core.parts import Cost
from ...core.state import State
from ...core.validation import SEED, Interval, check_value
from ...model.settings import DEFAULTS, check_setting
from ...numerics.correlation import pearson_similarity
from ...numerics.feature_clustering import correlation_groups, sampled_correlation_groups
from ..base import Block

#: features above which the tree is built on a sample (see :class:`CorrelationGroupsBlock`)
MAX_EXACT_FEATURES = 3000


class CorrelationGroupsBlock(Block):
    """Groups by average-linkage clustering on ``1 - |corr|``; M by Calinski-Harabasz.

    The Calinski-Harabasz score sees each feature as its profile of absolute
    correlations (its row of ``|corr|``), the same sign-free similarity the linkage
    uses. ``nu_m = 1/M`` (paper, end of section 4).

    With more than ``max_exact_features`` features the (d, d) similarity and its tree
    (O(n d^2) time, about ``2.5 d^2`` floats: 110 s of a 132 s fit of 120 x 20,000, one
    thread) are built on ``max_exact_features`` features drawn with ``seed``, and every
    other feature joins the group whose sampled members it correlates with most on average
    (:func:`causefs.numerics.feature_clustering.sampled_correlation_groups`): an
    approximation, measured inside real fits by ``benchmarks/feature_groups_sampled.py``
    (docs/PERFORMANCE.md); ``max_exact_features=None`` is always exact.

    Parameters
    ----------
    max_granularity : int
        Largest number of groups M tried.
    seed : int
        Seeds the sample of features (used only above ``max_exact_features``).
    max_exact_features : int or None, default=3000
        The most features grouped exactly; None: no limit.
    """

    name = "correlation_groups"
    accepts_sparse = True
    kind = "init"
    reads = ("X_adjusted",)
    writes = ("groups", "nu")
    requires = ("max_granularity", "seed")

    def __init__(self, max_granularity: int = DEFAULTS.max_granularity, seed: int = 0,
                 max_exact_features: int | None = MAX_EXACT_FEATURES):
        self.max_granularity = check_setting("max_granularity", max_granularity)
        self.seed = check_value("seed", seed, SEED)
        self.max_exact_features = None if max_exact_features is None else check_value(
            "max_exact_features", max_exact_features, Interval(int, 3, None))

    def _sampled(self, n_features: int) -> bool:
        return self.max_exact_features is not None and n_features > self.max_exact_features

    def cost(self, size) -> Cost:
        """|corr| (d, d) (or (d, s) of a sample of s features) and the data's centred and
        scaled copies it is computed from, the condensed distances and SciPy's copy of
        them; the linkage.

        Declared, with s the features the tree is built on (d, or
        ``max_exact_features`` when sampled): ``2 n d s`` flops, ``10 s^2`` operations,
        ``d s + 1.5 s^2 + 2 n d`` floats."""
        n, d = size.n_samples, size.n_features
        s = self.max_exact_features if self._sampled(d) else d
        return Cost(flops=2.0 * n * d * s, ops=10.0 * s * s,
                    memory={"feature_clustering": (d * s + 1.5 * s * s + 2 * n * d) * 8},
                    advice={"feature_clustering": "reduce the number of features (d x d "
                                                  "systems dominate)"})

    def step(self, state: State) -> State:
        X = state.X_adjusted
        if self._sampled(X.shape[1]):
            groups = sampled_correlation_groups(X, self.max_exact_features,
                                                self.max_granularity, self.seed)
        else:
            groups = correlation_groups(pearson_similarity(X), self.max_granularity)
        n_groups = int(groups.max()) + 1
        return state.replace(groups=groups, nu=np.full(n_groups, 1.0 / n_groups))
