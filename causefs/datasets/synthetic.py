"""A synthetic benchmark whose causal features are known (the symmetric case)."""

from __future__ import annotations

import numpy as np

from ..core.validation import Interval, InvalidParameterError, check_value
from .base import CausalDataset


def make_causal(n_samples: int = 1000, n_features: int = 100, *, n_clusters: int = 4,
                n_causal: int = 10, n_spurious: int = 10, confounding: float = 0.8,
                separation: float = 2.0, seed: int = 0) -> CausalDataset:
    """Clustered data whose cluster membership is caused by a few features only.

    The generative model follows the paper's example (location -> animal and location
    -> background colour):

    * an environment ``E`` in ``0..n_clusters-1`` is drawn uniformly;
    * the cluster ``C`` equals ``E`` with probability ``confounding``, and is uniform
      otherwise (E confounds C);
    * ``n_causal`` causal features are caused by C: a cluster-specific mean (each
      cluster differs from the others by ``separation`` on its own causal features)
      plus unit Gaussian noise;
    * ``n_spurious`` spurious features are caused by E only ("background colour"): an
      environment-specific mean of the same size plus noise. They correlate with the
      clusters through E, never directly;
    * the remaining features are unit Gaussian noise.

    Feature columns are shuffled (with ``seed``); ``causal`` and ``spurious`` give their
    positions. ``y`` is C.

    This benchmark cannot tell a causal selector from any other, and is kept only as a
    check of the symmetric case: the joint law of (C, E), ``P(C=a, E=b) = confounding
    * [a = b] / k + (1 - confounding) / k^2``, is symmetric, both blocks use the same
    signature law and (with ``n_causal == n_spurious``) the same width, so exchanging
    the causal and the spurious block leaves the distribution of X unchanged; there is
    no test environment either. Use :func:`causefs.datasets.make_shifted_clusters` and
    :func:`causefs.datasets.make_digits_border` for benchmarks with a shift.
    """
    for name, value, low in (("n_samples", n_samples, 2), ("n_features", n_features, 1),
                             ("n_clusters", n_clusters, 1), ("n_causal", n_causal, 0),
                             ("n_spurious", n_spurious, 0), ("seed", seed, 0)):
        check_value(name, value, Interval(int, low))
    check_value("confounding", confounding, Interval(float, 0, 1))
    check_value("separation", separation, Interval(float))
    if n_causal + n_spurious > n_features:
        raise InvalidParameterError(f"n_causal={n_causal}: with n_spurious={n_spurious} "
                                    f"exceeds n_features={n_features}")
    rng = np.random.default_rng(seed)
    environment = rng.integers(0, n_clusters, n_samples)
    clusters = np.where(rng.random(n_samples) < confounding, environment,
                        rng.integers(0, n_clusters, n_samples))

    def signature(width):
        # +-separation/2 per group and feature; every feature separates some groups
        pattern = rng.choice([-1.0, 1.0], size=(n_clusters, width))
        constant = np.all(pattern == pattern[:1], axis=0)
        pattern[0, constant] *= -1.0
        return pattern * separation / 2

    X = rng.standard_normal((n_samples, n_features))
    X[:, :n_causal] += signature(n_causal)[clusters]
    X[:, n_causal:n_causal + n_spurious] += signature(n_spurious)[environment]
    order = rng.permutation(n_features)
    X = X[:, order]
    position = np.argsort(order)  # where original column j went
    return CausalDataset(
        name=f"causal_{n_samples}x{n_features}", X=X, y=clusters,
        source=f"causefs.datasets.make_causal(seed={seed})",
        causal=np.sort(position[:n_causal]),
        spurious=np.sort(position[n_causal:n_causal + n_spurious]),
        environment=environment,
    )
