"""Sample weights by density-ratio decorrelation (SRDO, Shen et al. 2020)."""

from __future__ import annotations

import numpy as np

from ..state import State
from .base import Block
from .decorrelation_weights import standardized


def feature_pairs(d: int, max_pairs: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Every pair j < k of d features, or ``max_pairs`` of them drawn without replacement."""
    j, k = np.triu_indices(d, k=1)
    if j.size > max_pairs:
        keep = np.sort(rng.choice(j.size, size=max_pairs, replace=False))
        j, k = j[keep], k[keep]
    return j, k


class DensityRatioWeightsBlock(Block):
    """mu = density ratio of the decorrelated distribution to the data's own.

    Treatments and confounders: every feature against all others, as in
    :class:`~causefs.blocks.decorrelation_weights.DecorrelationWeightsBlock`, but the
    target is the product of the marginals rather than zero covariance: SRDO builds a
    sample of that target by permuting every column independently (seeded), trains a
    probabilistic classifier to tell it from the data and weights sample i by
    ``P(target | x_i) / P(data | x_i)``. The classifier is an l2-regularized logistic
    regression on the pairwise products of the standardized features (a linear one on x
    alone cannot separate the two samples, whose marginals agree). Weights are applied as
    weights, never by resampling rows (duplicates would form cliques in the kNN graphs).

    With more than ``max_pairs`` feature pairs (d > 100 at the default) the classifier sees
    ``max_pairs`` pairs drawn at random (seeded): the products take ``2 n max_pairs``
    floats instead of ``n d^2``.

    Ratios above ``max_ratio`` times the mean are clipped there (the fallback against a
    classifier that is sure of a few samples), then ``mu`` is scaled to
    ``sum(mu) = mu_total``. Depends on X only: an ``init`` block.

    Parameters
    ----------
    C : float
        Inverse regularization strength of the logistic regression.
    max_ratio : float
        Largest weight relative to the mean.
    max_pairs : int
        Most feature pairs whose products the classifier sees.
    """

    name = "density_ratio_weights"
    kind = "init"
    reads = ("X",)
    writes = ("mu",)

    def __init__(self, C: float = 0.1, max_ratio: float = 10.0, max_pairs: int = 5000):
        if C <= 0 or max_ratio <= 1 or max_pairs < 1:
            raise ValueError(f"need C > 0, max_ratio > 1 and max_pairs >= 1, got C={C}, "
                             f"max_ratio={max_ratio}, max_pairs={max_pairs}")
        self.C = C
        self.max_ratio = max_ratio
        self.max_pairs = max_pairs

    def weights(self, X: np.ndarray, seed: int) -> np.ndarray:
        """Mean-one density-ratio weights of the rows of X, (n,)."""
        from sklearn.linear_model import LogisticRegression

        rng = np.random.default_rng(seed)
        Z = standardized(X)
        n, d = Z.shape
        if d < 2:  # nothing to decorrelate
            return np.ones(n)
        target = np.column_stack([Z[rng.permutation(n), j] for j in range(d)])
        j, k = feature_pairs(d, self.max_pairs, rng)
        both = np.vstack([Z, target])
        stats = both[:, j] * both[:, k]
        labels = np.r_[np.zeros(n), np.ones(n)]
        model = LogisticRegression(C=self.C, max_iter=1000).fit(stats, labels)
        ratio = np.exp(model.decision_function(stats[:n]))  # P(target|x) / P(data|x)
        ratio /= ratio.mean()
        for _ in range(100):  # clip, rescale, until no weight exceeds the cap
            if ratio.max() <= self.max_ratio * (1 + 1e-12):
                break
            ratio = np.minimum(ratio, self.max_ratio)
            ratio /= ratio.mean()
        return ratio

    def step(self, state: State) -> State:
        p = state.problem
        return state.replace(mu=self.weights(p.X, p.seed) * (p.mu_total / p.n_samples))
