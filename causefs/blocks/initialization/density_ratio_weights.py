"""Sample weights by density-ratio decorrelation (SRDO, Shen et al. 2020)."""

from __future__ import annotations

import numpy as np

from ...core.parts import Cost
from ...core.state import State
from ...core.validation import SEED, Interval, check_value
from ...numerics.correlation import standardized
from ..base import Block


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
    alone cannot separate the two samples, whose marginals agree): scikit-learn's
    ``LogisticRegression`` with inverse strength ``C`` and at most 1000 iterations of its
    solver (``max_iter=1000``, ten times scikit-learn's default). Weights are applied as
    weights, never by resampling rows (duplicates would form cliques in the kNN graphs).

    With more than ``max_pairs`` feature pairs (d > 100 at the default) the classifier sees
    ``max_pairs`` pairs drawn at random (seeded): the products take ``2 n max_pairs``
    floats instead of ``n d^2``.

    Ratios above ``max_ratio`` times the mean are clipped there (the fallback against a
    classifier that is sure of a few samples), then ``mu`` is scaled to
    ``sum(mu) = mu_total``: the weights are ``min(s r, max_ratio)`` with the scale s
    that gives them mean one (:func:`capped_at_mean_one`), the fixed point of clipping
    and rescaling. Depends on X only: an ``init`` block.

    Parameters
    ----------
    C : float, default=0.1
        Inverse regularization strength of the logistic regression.
    max_ratio : float, default=10.0
        Largest weight relative to the mean.
    max_pairs : int, default=5000
        Most feature pairs whose products the classifier sees.
    seed : int, default=0
        Seed of the column permutations and of the drawn pairs.
    """

    name = "density_ratio_weights"
    kind = "init"
    reads = ("X_adjusted",)
    writes = ("mu",)
    requires = ("seed",)

    def __init__(self, C: float = 0.1, max_ratio: float = 10.0, max_pairs: int = 5000,
                 seed: int = 0):
        self.C = check_value("C", C, Interval(float, 0, closed="neither"))
        self.max_ratio = check_value("max_ratio", max_ratio, Interval(float, 1, closed="neither"))
        self.max_pairs = check_value("max_pairs", max_pairs, Interval(int, 1))
        self.seed = check_value("seed", seed, SEED)

    def cost(self, size) -> Cost:
        """A logistic regression on 2n samples of at most ``max_pairs`` products
        (counted as 100 passes over them). Memory: the 2n rows of products and of
        features, and the copies of them the regression makes (about eight floats a
        sample for each pair and feature).

        Declared, with p = ``min(d (d - 1) / 2, max_pairs)`` pairs: ``800 n p`` flops;
        ``8 n (p + d)`` floats."""
        n, d = size.n_samples, size.n_features
        pairs = min(d * (d - 1) // 2, self.max_pairs)
        return Cost(flops=100 * 8.0 * n * pairs,
                    memory={"density_ratio_weights": 8 * n * (pairs + d) * 8})

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
        return capped_at_mean_one(ratio, self.max_ratio)

    def step(self, state: State) -> State:
        p = state.problem
        return state.replace(mu=self.weights(state.X_adjusted, self.seed) * (p.mu_total / p.n_samples))


def capped_at_mean_one(ratio: np.ndarray, cap: float) -> np.ndarray:
    """``min(s r, cap)`` with the scale s that gives it mean one, (n,).

    The k largest ratios are clipped for the least k at which the others, scaled to
    carry the rest of the total, ``s = (n - k cap) / (sum of the others)``, stay at most
    the cap: the fixed point that clipping at the cap and rescaling to mean one
    approaches, reached exactly (rounds of clipping and rescaling approach it by the
    clipped weights' share of the total each, slowly where they carry nearly all of
    it). Where fewer than ``n / cap`` ratios are positive (the others underflowed to 0)
    no weights of mean one stay below the cap: they are then uniform (1); so they are
    where rounding refuses every scale (the room left rounding one ulp above the cap
    while one ratio carries the rest to rounding, an input of ratios 1e300 apart).

    Parameters
    ----------
    ratio : ndarray of shape (n,)
        Non-negative ratios, not all 0.
    cap : float
        Largest weight, above 1.
    """
    n = ratio.size
    descending = np.sort(ratio)[::-1]
    rest = np.cumsum(descending[::-1])[::-1]  # rest[k]: the sum of all but the k largest
    room = n - np.arange(n) * cap  # the total left to them
    # s = room / rest keeps the largest of them at most the cap; compared multiplied out,
    # as rounding is monotone: where room <= cap and rest >= that ratio (the last k that
    # leaves room) the comparison holds in floating point as it does exactly
    fits = (room > 0) & (rest > 0) & (room * descending <= cap * rest)
    if not fits.any():
        return np.ones(n)
    k = np.argmax(fits)
    return np.minimum(room[k] / rest[k] * ratio, cap)
