"""Benchmarks with a distribution shift: a training and a test environment with ground truth.

Built the way the stable-learning literature builds them (Kuang et al. 2020, Shen et al.
2020): causal features decide the clusters; spurious features carry a coarser variable
``B`` that a selection bias ties to the clusters in training and that is independent of
them (or tied differently) at test. A feature selector that keeps spurious features
clusters the test environment worse: out-of-distribution ACC/NMI
(:func:`causefs.app.evaluation.evaluate_shift`) measure that.

In every generator the bias acts the same way: every sample's group ``B`` equals
``g(C)`` (a fixed coarsening of its cluster ``C``) with probability ``bias``, and is drawn
uniformly from the groups otherwise. ``bias = 0`` makes ``B`` independent of ``C``,
``bias = 1`` a function of ``C``; the realised share of samples with ``B = g(C)`` is
``bias + (1 - bias) / n_groups``. A negative bias *reverses* the tie: ``B`` is then
``g(C + 1)`` with probability ``|bias|`` (for two groups, the other group).

A bias may be a list: one environment per entry, training environments pooled into the
training data (several environments with different biases, as a user's batches or sites)
and test environments kept apart (``test_names`` says which test environment a test
sample belongs to; each is evaluated on its own). ``environment`` (training) and
``environment_test`` hold B: the known nuisance variable Z of a fit
(``load_dataset(..., nuisance="environment")``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.validation import Interval, InvalidParameterError, check_value
from .base import CausalDataset, DatasetError


@dataclass
class ShiftedDataset(CausalDataset):
    """Training environments (``X``, ``y``, ``environment`` = B) and test environments.

    ``causal``, ``spurious`` and ``noise`` are column indices (the same in every
    environment); ``environment`` and ``environment_test`` hold every sample's group B.
    ``test_names`` (None for one test environment) names the test environment of every
    test sample.
    """

    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    environment_test: np.ndarray | None = None
    noise: np.ndarray | None = None
    train_bias: float | tuple = 0.0
    test_bias: float | tuple = 0.0
    test_names: np.ndarray | None = None


def _check_bias(name, value) -> tuple:
    """The biases of ``value`` (a number or a list of them) as a tuple."""
    values = tuple(value) if isinstance(value, (list, tuple)) else (value,)
    if not values:
        raise InvalidParameterError(f"{name}=[]: needs at least one environment's bias")
    for entry in values:
        # 0: B independent of the clusters, 1: a function of them, -1: reversed
        check_value(name, entry, Interval(float, -1, 1))
    return values


def biased_groups(clusters: np.ndarray, n_groups: int, bias: float, rng) -> np.ndarray:
    """Groups ``B``: ``clusters % n_groups`` with probability ``bias``, uniform otherwise;
    for a negative bias, ``(clusters + 1) % n_groups`` with probability ``-bias``.

    ``c % n_groups`` coarsens the clusters: every group is a union of clusters, so B
    carries less structure than C.
    """
    tied = rng.random(clusters.size) < abs(bias)
    target = (clusters + (bias < 0)) % n_groups
    return np.where(tied, target, rng.integers(0, n_groups, clusters.size))


def _split(n: int, parts: int) -> list:
    """``n`` samples split as evenly as possible into ``parts`` environments."""
    return [n // parts + (e < n % parts) for e in range(parts)]


def _environments(make, samples: list, biases: tuple):
    """``make(samples[e], biases[e])`` for every environment: X, y and B stacked, and the
    name of every sample's environment (its bias)."""
    parts = [make(part, bias) for part, bias in zip(samples, biases)]
    names = np.concatenate([[f"{bias:g}"] * part[1].size for part, bias in zip(parts, biases)])
    return (*(np.concatenate([part[i] for part in parts]) for i in range(3)), names)


def _given(value, biases):
    """A bias as the caller gave it: a number stays a number (one environment)."""
    return value if not isinstance(value, (list, tuple)) else biases


def make_shifted_clusters(n_train: int = 400, n_test: int = 400, *, n_clusters: int = 4,
                          n_causal: int = 8, n_spurious: int = 16, n_noise: int = 36,
                          separation: float = 3.0, spurious_separation: float = 2.0,
                          n_groups: int = 2, train_bias: float | list = 0.9,
                          test_bias: float | list = 0.0,
                          seed: int = 0) -> ShiftedDataset:
    """Gaussian clusters decided by causal features, with spurious features tied by selection bias.

    * The cluster ``C`` is uniform on ``0..n_clusters-1``. The causal features are split
      into ``n_clusters`` equal blocks; cluster c has mean ``separation`` on its own block
      and 0 elsewhere, plus unit Gaussian noise. Cluster centres are ``separation *
      sqrt(2 n_causal / n_clusters)`` apart, so the clusters are identifiable from the
      causal features of either environment.
    * The group ``B`` (``n_groups < n_clusters`` values) is ``C % n_groups`` with
      probability ``train_bias`` (``test_bias`` at test), else uniform
      (:func:`biased_groups`; lists of biases make several environments, ``n_train``
      samples split evenly among the training ones, ``n_test`` samples in each test
      one). The spurious features are split into ``n_groups`` blocks;
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
        ``X`` (n_train, d) and ``X_test`` (n_test * test environments, d) with
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
    train_biases = _check_bias("train_bias", train_bias)
    test_biases = _check_bias("test_bias", test_bias)
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

    X, y, B, _ = _environments(environment, _split(n_train, len(train_biases)), train_biases)
    X_test, y_test, B_test, names = _environments(environment, [n_test] * len(test_biases),
                                                  test_biases)
    return ShiftedDataset(
        name="shifted_clusters", X=X, y=y,
        source=f"causefs.datasets.make_shifted_clusters(train_bias={train_bias}, seed={seed})",
        causal=np.sort(position[:n_causal]),
        spurious=np.sort(position[n_causal:n_causal + n_spurious]),
        noise=np.sort(position[n_causal + n_spurious:]),
        environment=B, X_test=X_test, y_test=y_test, environment_test=B_test,
        train_bias=_given(train_bias, train_biases), test_bias=_given(test_bias, test_biases),
        test_names=names if len(test_biases) > 1 else None,
    )


def make_digits_border(train_bias: float | list = 0.9, test_bias: float | list = 0.0, *,
                       train_size: float = 0.5, border_levels=(4.0, 12.0),
                       border_noise: float = 2.0, border_width: int = 1,
                       seed: int = 0) -> ShiftedDataset:
    """scikit-learn's 8x8 digits framed by a border whose shade tracks a group of classes.

    The digits are split (stratified, ``seed``) into training and test images. Every
    image is padded to ``(8 + 2 w)`` pixels square (``w = border_width``) with a border
    of shade ``border_levels[B]`` plus Gaussian noise of std ``border_noise`` (clipped to
    the digits' range 0..16). In training ``B`` is the class group ``digit % 2`` (even /
    odd) with probability ``train_bias``, at test with probability ``test_bias``, else
    uniform (:func:`biased_groups`). Lists of biases make several environments: the
    training images are split evenly among the training ones, and every test environment
    frames all the test images (only the tie differs between them).

    Ground truth: ``causal`` = the 64 pixels of the digit, ``spurious`` = the border
    pixels; no noise features.
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    train_biases = _check_bias("train_bias", train_bias)
    test_biases = _check_bias("test_bias", test_bias)
    check_value("border_width", border_width, Interval(int, 1))
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
    side = 8 + 2 * border_width
    frame = np.ones((side, side), dtype=bool)
    frame[border_width:-border_width, border_width:-border_width] = False

    def environment(idx, bias):
        groups = biased_groups(labels[idx], 2, bias, rng)
        padded = np.zeros((idx.size, side, side))
        padded[:, ~frame] = images[idx]
        shade = np.asarray(border_levels, dtype=float)[groups]
        noisy = shade[:, None] + border_noise * rng.standard_normal((idx.size, frame.sum()))
        padded[:, frame] = np.clip(noisy, 0.0, 16.0)
        return padded.reshape(idx.size, side * side), labels[idx], groups

    X, y, B, _ = _environments(environment, np.array_split(tr, len(train_biases)),
                               train_biases)
    X_test, y_test, B_test, names = _environments(environment, [te] * len(test_biases),
                                                  test_biases)
    flat = frame.ravel()
    return ShiftedDataset(
        name="digits_border", X=X, y=y,
        source=f"causefs.datasets.make_digits_border(train_bias={train_bias}, seed={seed})",
        image_shape=(side, side), causal=np.flatnonzero(~flat),
        spurious=np.flatnonzero(flat), noise=np.array([], dtype=np.int64), environment=B,
        X_test=X_test, y_test=y_test, environment_test=B_test,
        train_bias=_given(train_bias, train_biases), test_bias=_given(test_bias, test_biases),
        test_names=names if len(test_biases) > 1 else None,
    )



def make_injected_shift(base: str = "usps", train_bias=(0.9, 0.6, 0.3),
                        test_bias=(0.0, -0.9), *, n_train: int = 600, n_test: int = 600,
                        n_injected: int = 32, strength: float = 3.0, n_groups: int = 2,
                        block_noise: float = 1.0, seed: int = 0,
                        data_home=None) -> ShiftedDataset:
    """A benchmark ``base`` of :data:`~causefs.datasets.BENCHMARKS` (read from
    ``data_home``) with an injected nuisance block.

    The images are split (stratified, ``seed``) into ``n_train`` training and
    ``n_test`` test images. Every image gets ``n_injected`` extra features
    driven by a group ``B`` of ``n_groups`` values: unit noise times ``s``, the median
    standard deviation of the image's features, plus ``strength * s`` on the block of
    its group (``n_injected / n_groups`` features each), as the spurious block of
    :func:`make_shifted_clusters`. B is the class group ``class % n_groups`` with
    probability ``train_bias`` in training (lists: several environments, the training
    images split evenly among them) and ``test_bias`` at test (every test environment
    holds all the test images), else uniform (:func:`biased_groups`).

    Ground truth: ``causal`` = the image's features (the clustering the benchmark is
    about), ``spurious`` = the injected block; no noise features.
    """
    from sklearn.model_selection import train_test_split

    from .benchmarks import load_benchmark

    train_biases = _check_bias("train_bias", train_bias)
    test_biases = _check_bias("test_bias", test_bias)
    check_value("strength", strength, Interval(float, 0))
    check_value("block_noise", block_noise, Interval(float, 0))
    check_value("n_groups", n_groups, Interval(int, 2))
    if n_injected < n_groups or n_injected % n_groups:
        raise ValueError(f"n_injected = {n_injected} must be a positive multiple of "
                         f"n_groups = {n_groups} (one equal block per group)")
    data = load_benchmark(base, data_home)
    images, labels = np.asarray(data.X, dtype=float), np.asarray(data.y)
    if n_train + n_test > labels.size:
        raise ValueError(f"n_train + n_test = {n_train + n_test} exceeds the "
                         f"{labels.size} images of {base}")
    tr, te = train_test_split(np.arange(labels.size), train_size=n_train, test_size=n_test,
                              stratify=labels, random_state=seed)
    _, classes = np.unique(labels, return_inverse=True)
    rng = np.random.default_rng(seed)
    unit = float(np.median(images.std(axis=0)))
    means = strength * unit * np.kron(np.eye(n_groups), np.ones(n_injected // n_groups))

    def environment(idx, bias):
        groups = biased_groups(classes[idx], n_groups, bias, rng)
        block = block_noise * unit * rng.standard_normal((idx.size, n_injected)) + means[groups]
        return np.hstack([images[idx], block]), labels[idx], groups

    X, y, B, _ = _environments(environment, np.array_split(tr, len(train_biases)),
                               train_biases)
    X_test, y_test, B_test, names = _environments(environment, [te] * len(test_biases),
                                                  test_biases)
    d = images.shape[1]
    return ShiftedDataset(
        name=f"{data.name}_injected", X=X, y=y,
        source=f"causefs.datasets.make_injected_shift({base!r}, strength={strength}, "
               f"seed={seed})",
        image_shape=None, causal=np.arange(d), spurious=np.arange(d, d + n_injected),
        noise=np.array([], dtype=np.int64), environment=B, X_test=X_test, y_test=y_test,
        environment_test=B_test, train_bias=_given(train_bias, train_biases),
        test_bias=_given(test_bias, test_biases),
        test_names=names if len(test_biases) > 1 else None,
    )


#: benchmarks whose file order is a pose order: the images of an object, consecutive,
#: one full turn (so the last pose is next to the first)
POSES_PER_OBJECT = {"coil20": 72}


def pose_bins(labels: np.ndarray, poses_per_object: int, n_bins: int) -> np.ndarray:
    """Every image's pose bin: its position in its object's run of ``poses_per_object``
    consecutive rows, binned into ``n_bins`` arcs of the turn (``pose * n_bins //
    poses_per_object``).

    Raises :class:`~causefs.datasets.DatasetError` if ``labels`` are not runs of
    ``poses_per_object`` consecutive rows per object.
    """
    labels = np.asarray(labels)
    starts = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
    lengths = np.diff(np.r_[starts, labels.size])
    if np.any(lengths != poses_per_object) or np.unique(labels).size != starts.size:
        raise DatasetError(f"the pose benchmark needs {poses_per_object} consecutive rows "
                           f"per object; these labels run in blocks of {sorted(set(lengths))}"
                           " rows or repeat an object")
    return (np.arange(labels.size) % poses_per_object) * n_bins // poses_per_object


def _rounded_counts(expected: np.ndarray, rng) -> np.ndarray:
    """Integer counts of a row of ``expected`` counts (summing to an integer): each its
    expectation rounded down or up, up with probability its fractional part (systematic
    sampling of the remainders), so every count is unbiased and the sum is kept."""
    counts = np.floor(expected).astype(int)
    remainders = np.cumsum(expected - counts)
    remainders[-1] = round(remainders[-1])  # the sum, exactly
    return counts + np.diff(np.ceil(np.r_[0.0, remainders] - rng.random())).astype(int)


def _rounded(expected: np.ndarray, rng) -> np.ndarray:
    """:func:`_rounded_counts` of every object's row."""
    return np.array([_rounded_counts(row, rng) for row in expected])


def _expected_bin_counts(per_object: list, n_bins: int, bias: float) -> np.ndarray:
    """(n_objects, n_bins): the expected number of images of every object from every
    pose bin in one environment: the bin is ``g(C) = C % n_bins`` (``g(C + 1)`` for a
    negative bias) with probability ``|bias|``, uniform otherwise, as
    :func:`biased_groups`."""
    objects = np.arange(len(per_object))
    probabilities = np.full((objects.size, n_bins), (1 - abs(bias)) / n_bins)
    probabilities[objects, (objects + (bias < 0)) % n_bins] += abs(bias)
    return np.asarray(per_object, dtype=float)[:, None] * probabilities


def _environment_counts(n: int, n_objects: int, n_bins: int, biases: tuple,
                        per_environment: bool) -> list:
    """Every environment's :func:`_expected_bin_counts`: ``n`` images split evenly among
    the environments (``per_environment=False``) or ``n`` in each, and among the
    objects."""
    sizes = [n] * len(biases) if per_environment else _split(n, len(biases))
    return [_expected_bin_counts(_split(size, n_objects), n_bins, bias)
            for size, bias in zip(sizes, biases)]


def _shortfall(expected: list, pool: np.ndarray, together: bool):
    """The first (object, bin, most needed) whose images the ``expected`` counts, rounded
    up, could need beyond ``pool`` (n_objects, n_bins): summed over the environments if
    they share the pool (``together``), per environment otherwise; None if it suffices."""
    most = [np.ceil(counts - 1e-9).astype(int) for counts in expected]
    for need in [sum(most)] if together else most:
        over = np.argwhere(need > pool)
        if over.size:
            c, j = over[0]
            return int(c), int(j), int(need[c, j])
    return None


def _check_pool(name: str, n: int, biases: tuple, pool: np.ndarray, together: bool):
    """A clear error if ``n`` images at ``biases`` could need more images of an object
    in a pose bin than its ``pool`` holds, with the largest ``n`` that fits."""
    n_objects, n_bins = pool.shape

    def short(m):
        return _shortfall(_environment_counts(m, n_objects, n_bins, biases, not together),
                          pool, together)

    found = short(n)
    if found is None:
        return
    largest = next((m for m in range(n - 1, 0, -1) if short(m) is None), 0)
    c, j, need = found
    which = "training" if together else "test"
    raise InvalidParameterError(
        f"{name}={n}: at bias {list(biases)} object {c} needs up to {need} images of pose "
        f"bin {j} but its {which} pool holds {pool[c, j]}; the largest {name} that fits "
        f"is {largest} (or lower the biases, or give the {which} pool more poses with "
        "train_share)")


def _pose_pools(classes: np.ndarray, bins: np.ndarray, train_share: float, rng):
    """``{(object, bin): row indices}`` of the training and of the test pool: every
    object's images of every pose bin split at random, ``train_share`` to training."""
    train, test = {}, {}
    for cell in sorted(set(zip(classes.tolist(), bins.tolist()))):
        rows = rng.permutation(np.flatnonzero((classes == cell[0]) & (bins == cell[1])))
        cut = int(round(train_share * rows.size))
        train[cell], test[cell] = rows[:cut], rows[cut:]
    return train, test


def _pool_sizes(pool: dict, n_objects: int, n_bins: int) -> np.ndarray:
    sizes = np.zeros((n_objects, n_bins), dtype=int)
    for (c, j), rows in pool.items():
        sizes[c, j] = rows.size
    return sizes


def _draw(pool: dict, counts: np.ndarray, rng, taken: dict | None = None) -> np.ndarray:
    """Rows with ``counts[c, j]`` images of object c in pose bin j, in random order,
    without replacement from ``pool``: continuing where the last draw stopped when
    ``taken`` counts what earlier draws took (environments sharing one pool), afresh
    otherwise."""
    rows = []
    for (c, j), cell in pool.items():
        if taken is None:
            rows.append(rng.choice(cell, counts[c, j], replace=False))
        else:
            rows.append(cell[taken.get((c, j), 0):taken.get((c, j), 0) + counts[c, j]])
            taken[(c, j)] = taken.get((c, j), 0) + counts[c, j]
    return rng.permutation(np.concatenate(rows))


def make_pose_shift(base: str = "coil20", n_bins: int = 2, train_bias=(0.9, 0.6, 0.3),
                    test_bias=(0.0, -0.9), *, n_train: int = 400, n_test: int = 360,
                    train_share: float = 0.5, seed: int = 0,
                    data_home=None) -> ShiftedDataset:
    """A real nuisance on real data: the pose of the objects of ``base`` (read from
    ``data_home``), tied to groups of objects by which images are sampled.

    COIL-20 photographs every object on a turntable at 72 poses 5 degrees apart, its rows
    in that order (:func:`pose_bins`). The pose bin ``B`` of an image (``n_bins`` arcs
    of the turn) is the known nuisance variable Z. Every object's images of every bin
    are split at random (``seed``) into a training pool (``train_share`` of them) and a
    test pool. A training environment of bias b takes, for every object C, images of
    bin ``g(C) = C % n_bins`` with probability b and of a uniform bin otherwise (b < 0:
    ``g(C + 1)``; the semantics of :func:`biased_groups`), so pose is tied to groups of
    objects; the ``n_train`` images are split evenly among the training environments
    and the objects, drawn without replacement from the training pool. Every test
    environment takes ``n_test`` images the same way from the test pool: bias 0 is
    balanced (B independent of C), a negative bias reverses the tie.

    The count of every object and bin is its expectation rounded up or down at random
    (unbiased), not a binomial draw: the pools are finite (18 images of an object per
    bin at ``n_bins=2``, ``train_share=0.5``), and a binomial draw could ask for more
    than a pool holds. Sizes that could need more raise an error naming the largest
    that fits.

    Ground truth: ``causal`` = every pixel, ``spurious`` and ``noise`` empty. Nothing is
    injected: pose acts through the pixels themselves, so there is no causal-features-
    only oracle and no precision@k here; out-of-distribution ACC/NMI measure it.

    Only COIL-20 qualifies as ``base``: UMIST's rows run from profile to frontal for
    some people only (docs/GUIDE_CAUSAL.md, "The pose benchmark").

    Returns
    -------
    ShiftedDataset
        ``X`` (n_train, 1024) and ``X_test`` (n_test * test environments, 1024);
        ``environment`` / ``environment_test`` (pose bins) are Z.
    """
    from .benchmarks import load_benchmark

    if base not in POSES_PER_OBJECT:
        raise InvalidParameterError(
            f"base={base!r}: the pose benchmark needs a benchmark whose file order is a pose "
            f"order; only {sorted(POSES_PER_OBJECT)} is (UMIST's rows run from profile to "
            "frontal for some people only)")
    train_biases = _check_bias("train_bias", train_bias)
    test_biases = _check_bias("test_bias", test_bias)
    check_value("train_share", train_share, Interval(float, 0.05, 0.95))
    check_value("seed", seed, Interval(int, 0))
    data = load_benchmark(base, data_home)
    images, labels = np.asarray(data.X, dtype=float), np.asarray(data.y)
    _, classes = np.unique(labels, return_inverse=True)
    n_objects = int(classes.max()) + 1
    # B coarsens the objects (a bin per group of objects), and every bin holds 2 poses
    check_value("n_bins", n_bins, Interval(int, 2, min(n_objects - 1,
                                                        POSES_PER_OBJECT[base] // 2)))
    check_value("n_train", n_train, Interval(int, n_objects))
    check_value("n_test", n_test, Interval(int, n_objects))
    rng = np.random.default_rng(seed)
    bins = pose_bins(labels, POSES_PER_OBJECT[base], n_bins)
    train_pool, test_pool = _pose_pools(classes, bins, train_share, rng)
    _check_pool("n_train", n_train, train_biases,
                _pool_sizes(train_pool, n_objects, n_bins), together=True)
    _check_pool("n_test", n_test, test_biases,
                _pool_sizes(test_pool, n_objects, n_bins), together=False)
    taken = {}
    train = [_draw(train_pool, _rounded(expected, rng), rng, taken) for expected in
             _environment_counts(n_train, n_objects, n_bins, train_biases, False)]
    test = [_draw(test_pool, _rounded(expected, rng), rng) for expected in
            _environment_counts(n_test, n_objects, n_bins, test_biases, True)]
    tr, te = np.concatenate(train), np.concatenate(test)
    names = np.concatenate([[f"{bias:g}"] * rows.size for rows, bias in zip(test, test_biases)])
    return ShiftedDataset(
        name=f"{data.name}_poses", X=images[tr], y=labels[tr],
        source=f"causefs.datasets.make_pose_shift({base!r}, n_bins={n_bins}, seed={seed})",
        image_shape=data.image_shape, causal=np.arange(images.shape[1]),
        spurious=np.array([], dtype=np.int64), noise=np.array([], dtype=np.int64),
        environment=bins[tr], X_test=images[te], y_test=labels[te], environment_test=bins[te],
        train_bias=_given(train_bias, train_biases), test_bias=_given(test_bias, test_biases),
        test_names=names if len(test_biases) > 1 else None,
    )
