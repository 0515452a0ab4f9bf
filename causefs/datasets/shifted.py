"""Benchmarks with a distribution shift: a training and a test environment with ground truth.

Built the way the stable-learning literature builds them (Kuang et al. 2020, Shen et al.
2020): causal features decide the clusters; spurious features carry a coarser variable
``B`` that a selection bias ties to the clusters in training and that is independent of
them (or tied differently) at test. A feature selector that keeps spurious features
clusters the test environment worse: out-of-distribution ACC/NMI
(:func:`causefs.app.evaluation.evaluate_shift`) measure that.

In both generators the bias acts the same way: every sample's group ``B`` equals
``g(C)`` (a fixed coarsening of its cluster ``C``) with probability ``bias``, and is drawn
uniformly from the groups otherwise. ``bias = 0`` makes ``B`` independent of ``C``,
``bias = 1`` a function of ``C``; the realised share of samples with ``B = g(C)`` is
``bias + (1 - bias) / n_groups``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.validation import Interval, InvalidParameterError, check_value
from .base import CausalDataset


@dataclass
class ShiftedDataset(CausalDataset):
    """A training environment (``X``, ``y``, ``environment`` = B) and a test environment.

    ``causal``, ``spurious`` and ``noise`` are column indices (the same in both
    environments); ``environment`` and ``environment_test`` hold every sample's group B.
    """

    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    environment_test: np.ndarray | None = None
    noise: np.ndarray | None = None
    train_bias: float = 0.0
    test_bias: float = 0.0


def _check_bias(name, value):
    # 0: B independent of the clusters, 1: B a function of them
    check_value(name, value, Interval(float, 0, 1))


def biased_groups(clusters: np.ndarray, n_groups: int, bias: float, rng) -> np.ndarray:
    """Groups ``B``: ``clusters % n_groups`` with probability ``bias``, uniform otherwise.

    ``c % n_groups`` coarsens the clusters: every group is a union of clusters, so B
    carries less structure than C.
    """
    tied = rng.random(clusters.size) < bias
    return np.where(tied, clusters % n_groups, rng.integers(0, n_groups, clusters.size))


def make_shifted_clusters(n_train: int = 400, n_test: int = 400, *, n_clusters: int = 4,
                          n_causal: int = 8, n_spurious: int = 16, n_noise: int = 36,
                          separation: float = 3.0, spurious_separation: float = 2.0,
                          n_groups: int = 2, train_bias: float = 0.9, test_bias: float = 0.0,
                          seed: int = 0) -> ShiftedDataset:
    """Gaussian clusters decided by causal features, with spurious features tied by selection bias.

    * The cluster ``C`` is uniform on ``0..n_clusters-1``. The causal features are split
      into ``n_clusters`` equal blocks; cluster c has mean ``separation`` on its own block
      and 0 elsewhere, plus unit Gaussian noise. Cluster centres are ``separation *
      sqrt(2 n_causal / n_clusters)`` apart, so the clusters are identifiable from the
      causal features of either environment.
    * The group ``B`` (``n_groups < n_clusters`` values) is ``C % n_groups`` with
      probability ``train_bias`` (``test_bias`` at test), else uniform
      (:func:`biased_groups`). The spurious features are split into ``n_groups`` blocks;
      group b has mean ``spurious_separation`` on its block, plus unit noise. They depend
      on C only through B. B has fewer values than C, so it is no second clustering as
      fine as C; but a large ``n_spurious * spurious_separation**2`` makes the spurious
      block the dominant structure in the data.
    * ``n_noise`` features are unit Gaussian noise.

    Columns are shuffled (with ``seed``); ``causal``, ``spurious`` and ``noise`` give their
    positions. ``y`` / ``y_test`` are C.

    Returns
    -------
    ShiftedDataset
        ``X`` (n_train, d) and ``X_test`` (n_test, d) with
        ``d = n_causal + n_spurious + n_noise``.
    """
    for name, value, low in (("n_clusters", n_clusters, 3), ("n_groups", n_groups, 2),
                             ("n_train", n_train, n_clusters), ("n_test", n_test, n_clusters),
                             ("n_causal", n_causal, n_clusters), ("n_noise", n_noise, 0),
                             ("n_spurious", n_spurious, n_groups), ("seed", seed, 0)):
        check_value(name, value, Interval(int, low))
    if n_groups >= n_clusters:
        raise InvalidParameterError(f"n_groups={n_groups}: must be < n_clusters = "
                                    f"{n_clusters} (B coarsens the clusters)")
    for name, width, parts in (("n_causal", n_causal, n_clusters),
                               ("n_spurious", n_spurious, n_groups)):
        if width % parts:
            raise InvalidParameterError(f"{name}={width}: must be a multiple of {parts} "
                                        "(one equal block per cluster / group)")
    for name, value in (("separation", separation),
                        ("spurious_separation", spurious_separation)):
        check_value(name, value, Interval(float))
    _check_bias("train_bias", train_bias)
    _check_bias("test_bias", test_bias)
    rng = np.random.default_rng(seed)
    d = n_causal + n_spurious + n_noise
    causal_means = separation * np.kron(np.eye(n_clusters), np.ones(n_causal // n_clusters))
    spurious_means = spurious_separation * np.kron(np.eye(n_groups),
                                                   np.ones(n_spurious // n_groups))
    order = rng.permutation(d)
    position = np.argsort(order)  # where original column j went

    def environment(n, bias):
        clusters = rng.integers(0, n_clusters, n)
        groups = biased_groups(clusters, n_groups, bias, rng)
        X = rng.standard_normal((n, d))
        X[:, :n_causal] += causal_means[clusters]
        X[:, n_causal:n_causal + n_spurious] += spurious_means[groups]
        return X[:, order], clusters, groups

    X, y, B = environment(n_train, train_bias)
    X_test, y_test, B_test = environment(n_test, test_bias)
    return ShiftedDataset(
        name="shifted_clusters", X=X, y=y,
        source=f"causefs.shifted.make_shifted_clusters(train_bias={train_bias}, seed={seed})",
        causal=np.sort(position[:n_causal]),
        spurious=np.sort(position[n_causal:n_causal + n_spurious]),
        noise=np.sort(position[n_causal + n_spurious:]),
        environment=B, X_test=X_test, y_test=y_test, environment_test=B_test,
        train_bias=train_bias, test_bias=test_bias,
    )


def make_digits_border(train_bias: float = 0.9, test_bias: float = 0.0, *,
                       train_size: float = 0.5, border_levels=(4.0, 12.0),
                       border_noise: float = 2.0, seed: int = 0) -> ShiftedDataset:
    """scikit-learn's 8x8 digits framed by a 1-pixel border whose shade tracks a group of classes.

    The digits are split (stratified, ``seed``) into a training and a test environment.
    Every image is padded to 10x10 with a border of shade ``border_levels[B]`` plus
    Gaussian noise of std ``border_noise`` (clipped to the digits' range 0..16). In
    training ``B`` is the class group ``digit % 2`` (even / odd) with probability
    ``train_bias``, at test with probability ``test_bias``, else uniform
    (:func:`biased_groups`).

    Ground truth: ``causal`` = the 64 pixels of the digit, ``spurious`` = the 36 border
    pixels; no noise features. ``image_shape`` is (10, 10).
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    _check_bias("train_bias", train_bias)
    _check_bias("test_bias", test_bias)
    # every class on both sides of the stratified split
    check_value("train_size", train_size, Interval(float, 0.01, 0.99))
    check_value("border_noise", border_noise, Interval(float, 0))
    check_value("seed", seed, Interval(int, 0))
    shade = Interval(float, 0, 16)  # the digits' range, which the border is clipped to
    if not (isinstance(border_levels, (list, tuple)) and len(border_levels) == 2
            and all(shade.is_satisfied_by(level) for level in border_levels)):
        raise InvalidParameterError(f"border_levels={border_levels!r}: must be two shades "
                                    f"(one per group), each {shade}")
    images, labels = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    tr, te = train_test_split(np.arange(labels.size), train_size=train_size, stratify=labels,
                              random_state=seed)
    frame = np.ones((10, 10), dtype=bool)
    frame[1:-1, 1:-1] = False

    def environment(idx, bias):
        groups = biased_groups(labels[idx], 2, bias, rng)
        padded = np.zeros((idx.size, 10, 10))
        padded[:, 1:-1, 1:-1] = images[idx].reshape(-1, 8, 8)
        shade = np.asarray(border_levels, dtype=float)[groups]
        noisy = shade[:, None] + border_noise * rng.standard_normal((idx.size, frame.sum()))
        padded[:, frame] = np.clip(noisy, 0.0, 16.0)
        return padded.reshape(idx.size, 100), labels[idx], groups

    X, y, B = environment(tr, train_bias)
    X_test, y_test, B_test = environment(te, test_bias)
    flat = frame.ravel()
    return ShiftedDataset(
        name="digits_border", X=X, y=y,
        source=f"causefs.shifted.make_digits_border(train_bias={train_bias}, seed={seed})",
        image_shape=(10, 10), causal=np.flatnonzero(~flat), spurious=np.flatnonzero(flat),
        noise=np.array([], dtype=np.int64), environment=B, X_test=X_test, y_test=y_test,
        environment_test=B_test, train_bias=train_bias, test_bias=test_bias,
    )

