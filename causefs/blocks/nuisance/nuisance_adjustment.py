"""Adjustment for known nuisance variables Z: the blocks fit X with Z's effect removed.

Both blocks write ``Theta`` (q, d), the effect of the coded Z on every feature; the data
the regression and graph terms see is then ``X_adjusted = X - Z Theta`` (docs/MODEL.md,
"Known nuisance variables").
"""

from __future__ import annotations

import numpy as np

from ...core.parts import Cost
from ...core.state import State
from ...numerics.nuisance_effects import clusters_of_top_features, nuisance_regression
from ..base import Block


class NuisanceCenteringBlock(Block):
    """``Theta``: the coefficients of Z in the least-squares fit of X on Z alone; the
    blocks then fit ``X - Z Theta``.

    For labels this centres every feature within the environments of Z (each level's
    mean moved to the overall mean), for covariates it removes their linear trend:
    conditioning on Z. It removes every association of a feature with Z, also the part
    the clusters carry when Z and the clusters are tied (a selection bias), which is
    what :class:`NuisanceEffectBlock` keeps. Each feature's effect is shrunk by
    ``max(0, 1 - 1/F)`` (:func:`~causefs.numerics.nuisance_effects.nuisance_regression`), so an
    irrelevant Z changes the data by little.

    Assumption: Z shifts features additively (per level for labels, linearly for
    covariates) and is independent of the clusters.
    """

    name = "nuisance_centering"
    kind = "init"
    reads = ("X", "Z")
    writes = ("Theta",)

    def cost(self, size) -> Cost:
        """``8 n d`` flops. Memory: the residuals of X and their product with the
        design (``2 n d`` floats), Z's residuals and its SVD (``n (q + 1)`` measured,
        ``n (q + 4)`` declared), the (q, d) coefficients (``d (q + 1)``): an upper bound
        of tracemalloc's peak over n, d and q (tests/test_nuisance_blocks.py)."""
        n, d, q = size.n_samples, size.n_features, size.n_nuisance
        return Cost(flops=8.0 * n * d,
                    memory={"nuisance_centering": (2 * n * d + n * (q + 4) + d * (q + 1)) * 8})

    def step(self, state: State) -> State:
        p = state.problem
        return state.replace(Theta=nuisance_regression(p.X, p.Z))


class NuisanceEffectBlock(Block):
    """``Theta``: the direct effect of Z given clusters of the selected features.

    The clusters are found by k-means with a shift per value of Z
    (:func:`~causefs.numerics.nuisance_effects.conditional_kmeans`) on the problem's data
    restricted to the ``top * n_clusters`` features of largest ``||W_f||`` (the features
    the loop currently selects: sharper clusters than all features give); Theta is then
    the coefficient of Z beside the cluster indicators in the least-squares fit of every
    feature, shrunk by ``max(0, 1 - 1/F)``
    (:func:`~causefs.numerics.nuisance_effects.nuisance_regression`). A feature that shifts with
    Z within a cluster (a batch or background effect) loses that shift; the part of a
    feature's association with Z that the clusters explain (a selection bias tying Z to
    the clusters) is kept, which centring (:class:`NuisanceCenteringBlock`) would remove.
    For labels it is the regression form of balancing Z across the clusters: the shift
    between environments within each cluster, pooled over the clusters.

    The k-means sees the data as given, not the adjusted data, so a wrong earlier Theta
    does not reproduce itself; before the first step the blocks fit X as given. It
    changes the data the regression and graph terms see: a structural block, run once
    per iteration.

    Assumption: Z shifts features additively, the same in every cluster. Directions of Z
    that the clusters span (Z a function of the clusters) are not identified and get no
    effect.

    Parameters
    ----------
    top : int
        Features the clusters are found on, per cluster.
    n_init : int
        Starts of the conditional k-means.
    seed : int
    """

    name = "nuisance_effect"
    kind = "structural"
    reads = ("X", "Z", "W")
    writes = ("Theta",)
    requires = ("seed",)

    def __init__(self, top: int = 4, n_init: int = 4, seed: int = 0):
        self.top = top
        self.n_init = n_init
        self.seed = seed

    def cost(self, size) -> Cost:
        """The regression ``4 n d (h + 4)`` flops and the clustering's ``n_init``
        starts of 30 Lloyd steps on the m = ``min(d, top h)`` top features,
        ``120 n_init n m (h + 4)``. Memory: the larger of its two phases, the regression
        on the clusters and Z (as the centring's, with the (n, h) design:
        ``2 n d + n (2 q + 2 h + 8)`` floats) and the clustering of the m top features
        (their copy, its shifted copy and the starts' centres: ``n (6 m + q + 3 h)``),
        plus the (q, d) coefficients (``2 d (q + 1)``)."""
        n, d, h = size.n_samples, size.n_features, size.n_clusters
        m = min(d, self.top * h)
        q = size.n_nuisance
        regression = 2 * n * d + n * (2 * q + 2 * h + 8)
        clustering = n * (6 * m + q + 3 * h)
        return Cost(flops=4.0 * n * d * (h + 4) + self.n_init * 30 * 4.0 * n * m * (h + 4),
                    memory={"nuisance_effect": (max(regression, clustering)
                                                + 2 * d * (q + 1)) * 8})

    def step(self, state: State) -> State:
        p = state.problem
        labels, _ = clusters_of_top_features(
            p.X, p.Z, np.einsum("ij,ij->i", state.W, state.W), p.n_clusters, top=self.top,
            n_init=self.n_init, seed=self.seed)
        design = (labels[:, None] == np.arange(1, p.n_clusters)).astype(float)
        return state.replace(Theta=nuisance_regression(p.X, p.Z, design))
