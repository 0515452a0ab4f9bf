"""The initial feature groups: exact (average linkage on 1 - |corr|) and, for many
features, a sampled tree plus assignment, each against an independent computation."""

import gc
import re
import tracemalloc

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse import csr_matrix
from sklearn.metrics import adjusted_rand_score, calinski_harabasz_score

from causefs.blocks.initialization.correlation_groups import CorrelationGroupsBlock
from causefs.budget import MemoryEstimate, MemoryLimitError, check_memory
from causefs.model.fit_size import FitSize
from causefs.model.settings import Settings
from causefs.numerics.correlation import pearson_similarity
from causefs.numerics.feature_clustering import (
    calinski_harabasz,
    choose_groups,
    correlation_groups,
    sampled_correlation_groups,
    ward_tree_1d,
)


def factor_blocks(seed=0, n=80, d=240, n_blocks=4, noise=0.6):
    """Features that are one of ``n_blocks`` latent factors plus noise, signs mixed."""
    rng = np.random.default_rng(seed)
    factors = rng.normal(size=(n, n_blocks))
    blocks = rng.integers(0, n_blocks, d)
    signs = rng.choice([-1.0, 1.0], d)
    return signs * factors[:, blocks] + noise * rng.normal(size=(n, d)), blocks


def reference_groups(X, max_groups):
    """Written from the docstring with NumPy/SciPy/scikit-learn only: |corr| by
    np.corrcoef, average linkage on 1 - |corr|, the cut with the best CH score."""
    return reference_groups_of(np.abs(np.corrcoef(X, rowvar=False)), max_groups)


def reference_groups_of(similarity, max_groups, score=calinski_harabasz_score):
    """:func:`reference_groups` from the similarity: average linkage on 1 - |corr| (0
    where |corr| is above 1), the cut with the best CH ``score``."""
    distance = 1.0 - similarity[np.triu_indices(similarity.shape[0], 1)]
    tree = linkage(np.clip(distance, 0, None), method="average")
    best = max((score(similarity, fcluster(tree, m, "maxclust")), m)
               for m in range(2, max_groups + 1)
               if np.unique(fcluster(tree, m, "maxclust")).size == m)
    return fcluster(tree, best[1], "maxclust")


def documented_score(points, labels):
    """scikit-learn's Calinski-Harabasz score, but 1.0 where W (each point's squared
    distance to its group's mean, summed) is at most 1e-12 times the points' sum of
    squares, as :func:`calinski_harabasz`'s docstring says."""
    within = sum(float(np.sum((points[labels == g] - points[labels == g].mean(axis=0)) ** 2))
                 for g in np.unique(labels))
    if within <= 1e-12 * float(np.sum(points**2)):
        return 1.0
    return calinski_harabasz_score(points, labels)


def test_a_correlation_rounded_above_one_is_a_distance_of_zero():
    """|corr| of equal or opposite features can round to 1 + 2^-52 (``pearson_similarity``
    gives it for a third of random columns copied, here): its distance is 0, where
    -2^-52 would make a linkage of a negative height, which SciPy's ``fcluster``
    refuses. Features 0, 1 and 2 equal (|corr| 1 + 2^-52 between 0 and 1), 3 and 4 alike
    (0.75), 0.125 across: the groups are the textbook procedure's (the cut of 3 groups
    scores 1.0, its W rounding only), the two blocks."""
    similarity = np.full((5, 5), 0.125)
    similarity[:3, :3] = 1.0
    similarity[3:, 3:] = 0.75
    np.fill_diagonal(similarity, 1.0)
    similarity[0, 1] = similarity[1, 0] = 1.0 + 2.0**-52
    expected = reference_groups_of(similarity, 4, documented_score)
    assert adjusted_rand_score(expected, [0, 0, 0, 1, 1]) == 1.0
    np.testing.assert_array_equal(correlation_groups(similarity, 4), [0, 0, 0, 1, 1])


def test_exact_groups_match_the_textbook_procedure():
    X, _ = factor_blocks(noise=1.5)
    ours = correlation_groups(pearson_similarity(X), 10)
    assert adjusted_rand_score(reference_groups(X, 10), ours) == 1.0


def test_sampled_groups_follow_the_assignment_rule():
    """Every feature outside the sample is in the group whose sampled members it
    correlates with most on average, recomputed here with np.corrcoef; the sampled
    features' groups are the exact groups of the sample alone."""
    X, _ = factor_blocks(seed=1, noise=2.0)  # noisy: groups and assignment not trivial
    n_sampled, seed = 50, 3
    groups = sampled_correlation_groups(X, n_sampled, 10, seed)
    sample = np.sort(np.random.default_rng(seed).choice(X.shape[1], n_sampled, replace=False))
    assert adjusted_rand_score(reference_groups(X[:, sample], 10), groups[sample]) == 1.0
    similarity = np.abs(np.corrcoef(X, rowvar=False))[:, sample]
    for f in np.setdiff1d(np.arange(X.shape[1]), sample):
        means = {g: similarity[f, groups[sample] == g].mean() for g in np.unique(groups[sample])}
        assert groups[f] == max(means, key=means.get)


def test_sampled_groups_recover_clear_blocks_like_the_exact_path():
    X, blocks = factor_blocks(seed=2, d=400)
    exact = correlation_groups(pearson_similarity(X), 10)
    sampled = sampled_correlation_groups(X, 40, 10, seed=0)
    assert adjusted_rand_score(blocks, exact) == 1.0
    assert adjusted_rand_score(blocks, sampled) == 1.0


def test_sampled_groups_are_seeded_and_take_sparse_data():
    X, _ = factor_blocks(seed=4, noise=2.0)
    first = sampled_correlation_groups(X, 30, 6, seed=7)
    assert np.array_equal(first, sampled_correlation_groups(X, 30, 6, seed=7))
    assert np.array_equal(first, sampled_correlation_groups(csr_matrix(X), 30, 6, seed=7))


@pytest.mark.parametrize("max_exact_features", [None, 1000])
def test_the_block_is_exact_up_to_its_limit(max_exact_features):
    X, _ = factor_blocks(seed=5)

    class Stub:  # the block reads X_adjusted only
        X_adjusted = X

        def replace(self, **fields):
            return fields

    out = CorrelationGroupsBlock(max_granularity=8, max_exact_features=max_exact_features
                                 ).step(Stub())
    assert np.array_equal(out["groups"], correlation_groups(pearson_similarity(X), 8))
    sampled = CorrelationGroupsBlock(max_granularity=8, seed=1, max_exact_features=100
                                     ).step(Stub())
    assert np.array_equal(sampled["groups"], sampled_correlation_groups(X, 100, 8, 1))
    assert np.allclose(sampled["nu"], 1.0 / (sampled["groups"].max() + 1))


def test_a_bad_limit_is_refused():
    with pytest.raises(ValueError, match="max_exact_features"):
        CorrelationGroupsBlock(max_exact_features=2)


def test_the_block_draws_its_sample_with_its_seed_zero_by_default():
    """Noisy features, whose groups depend on which features are sampled: the block's
    groups are those of the sample its seed draws (0 unless given)."""
    X, _ = factor_blocks(seed=6, noise=2.0)
    assert not np.array_equal(sampled_correlation_groups(X, 60, 8, 0),
                              sampled_correlation_groups(X, 60, 8, 5))  # the seed matters

    class Stub:
        X_adjusted = X

        def replace(self, **fields):
            return fields

    for options, seed in (({}, 0), ({"seed": 5}, 5)):
        out = CorrelationGroupsBlock(max_granularity=8, max_exact_features=60, **options
                                     ).step(Stub())
        assert np.array_equal(out["groups"], sampled_correlation_groups(X, 60, 8, seed))


@pytest.mark.parametrize("options, message", [
    ({"seed": -1}, "seed=-1: "), ({"max_exact_features": 2}, "max_exact_features=2: ")])
def test_a_bad_option_is_refused_by_its_name(options, message):
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        CorrelationGroupsBlock(**options)


def test_three_features_are_the_fewest_grouped_exactly():
    """choose_groups cuts trees of 3 or more features: a limit of 3 is allowed."""
    assert CorrelationGroupsBlock(max_exact_features=3).max_exact_features == 3


def _peak_of_step(block, X):
    class Stub:
        X_adjusted = X

        def replace(self, **fields):
            return fields

    gc.collect()
    tracemalloc.start()
    try:
        block.step(Stub())
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("n, d, limit", [(50, 600, None), (50, 1200, None),
                                         (50, 3000, 400), (200, 2000, 300)])
def test_the_declared_memory_covers_the_measured_peak_within_twice(n, d, limit):
    """What tracemalloc measures a step allocating: never more than the block declares
    (the memory check trusts it), and at least half of it. The sampled path declared
    half its peak while |corr| was made twice (its product, then its absolute value)."""
    X = np.random.default_rng(7).random((n, d))
    block = CorrelationGroupsBlock(max_granularity=6, max_exact_features=limit)
    declared = block.cost(FitSize(n, d, Settings(n_clusters=3), balance=False)
                          ).memory["feature_clustering"]
    peak = _peak_of_step(block, X)
    assert peak <= declared <= 2 * peak


def test_the_declared_work_grows_as_the_products_do():
    """|corr| is an (n, d) x (d, s) product: linear in n, quadratic in d while exact,
    linear in d once sampled (s fixed); the tree's work is quadratic in s only."""
    block = CorrelationGroupsBlock(max_exact_features=1000)
    cost = lambda n, d: block.cost(FitSize(n, d, Settings(n_clusters=3),  # noqa: E731
                                           balance=False))
    assert cost(200, 500).flops == pytest.approx(2 * cost(100, 500).flops)
    assert cost(100, 1000).flops == pytest.approx(4 * cost(100, 500).flops)
    assert cost(100, 4000).flops == pytest.approx(2 * cost(100, 2000).flops)
    assert cost(100, 1000).ops == pytest.approx(4 * cost(100, 500).ops)
    assert cost(100, 4000).ops == cost(100, 2000).ops == cost(100, 1000).ops
    assert cost(100, 500).flops > 0 and cost(100, 500).ops > 0


def test_a_fit_whose_groups_exceed_the_memory_limit_is_told_to_reduce_the_features():
    """The block's phase, named with its advice, when it is the largest one."""
    cost = CorrelationGroupsBlock().cost(FitSize(100, 20_000, Settings(n_clusters=3),
                                                 balance=False))
    estimate = MemoryEstimate(resident=0, phases=dict(cost.memory), advice=dict(cost.advice))
    with pytest.raises(MemoryLimitError, match=r"\(feature_clustering: .*; reduce the number "
                                               r"of features \(d x d systems dominate\), or "
                                               "raise memory_limit"):
        check_memory(estimate, 1_000_000)


def test_groups_are_int64_on_both_paths_and_for_too_few_features():
    X, _ = factor_blocks(seed=8)
    assert correlation_groups(pearson_similarity(X), 6).dtype == np.int64
    assert sampled_correlation_groups(X, 40, 6, 0).dtype == np.int64
    assert correlation_groups(np.ones((2, 2)), 6).dtype == np.int64


def test_calinski_harabasz_of_groups_of_equal_points_is_one():
    """W = 0, every group's points equal: 1.0, as scikit-learn gives (values exact in
    binary); also where the cluster sums round (0.1, 1/3), whose W is rounding only and
    for which scikit-learn's own sums give 2e34."""
    labels = np.repeat([0, 1, 2], [4, 3, 5])
    exact = np.array([[0.5, 2.0, 0.25], [3.0, 0.75, 1.5], [1.0, 1.25, 0.5]])[labels]
    assert calinski_harabasz_score(exact, labels) == 1.0
    assert calinski_harabasz(exact, labels) == 1.0
    rounding = np.array([[0.1, 0.7, 1 / 3], [2.3, 0.2, 0.9], [1.1, 1.3, 0.6]])[labels]
    assert calinski_harabasz(rounding, labels) == 1.0


def test_calinski_harabasz_at_its_threshold_is_one_and_just_above_the_ratio():
    """The docstring's rule at its boundary: W of exactly 1e-12 times the points' sum of
    squares gives 1.0. Three points of the plane with integer coordinates (every sum
    exact in float64): P, Q = (1613, 0) +- (1, 1) grouped, R alone. W = |P - Q|^2 / 2 = 4
    and R (found by a search of integers) makes the sum of squares 4 * 10^12 exactly,
    checked here in integers. R one lower in y: the sum of squares below 4 * 10^12, W
    above the threshold, and the score the ratio scikit-learn gives."""
    P, Q, R = (1614, 1), (1612, -1), (2607, 1999997)
    labels = np.array([0, 0, 1])
    squares = sum(x * x + y * y for x, y in (P, Q, R))
    within = ((P[0] - Q[0]) ** 2 + (P[1] - Q[1]) ** 2) // 2
    assert within == 4 and squares == 10**12 * within
    assert calinski_harabasz(np.array([P, Q, R], dtype=float), labels) == 1.0
    below = np.array([P, Q, (R[0], R[1] - 1)], dtype=float)
    assert calinski_harabasz(below, labels) == pytest.approx(
        calinski_harabasz_score(below, labels), rel=1e-9)
    assert calinski_harabasz(below, labels) > 1e11


def test_ward_tree_takes_equal_values_in_index_order():
    """The docstring's tie rules: equal values in index order, ties to the leftmost pair.
    Values 1, 0, 1, 0, ... (8): on the line the 0s at 1, 3, 5, 7, then the 1s at 0, 2,
    4, 6; every adjacent pair of one level costs 0, so the 0s chain left to right (ids
    8, 9, 10), then the 1s (11, 12, 13), then the two levels join at the Ward distance
    sqrt(2 * 4 * 4 / 8) * 1 = 2. NumPy's default sort (AVX2) puts these 0s in another
    order."""
    tree = ward_tree_1d(np.tile([1.0, 0.0], 4))
    np.testing.assert_array_equal(tree, [[1, 3, 0, 2], [5, 8, 0, 3], [7, 9, 0, 4],
                                         [0, 2, 0, 2], [4, 11, 0, 3], [6, 12, 0, 4],
                                         [10, 13, 2, 8]])


def test_calinski_harabasz_of_points_all_zero_is_one_not_a_division_by_zero():
    """W = 0 and the total 0: the W = 0 fallback (scikit-learn gives 1.0 too)."""
    points, labels = np.zeros((6, 2)), np.array([0, 0, 1, 1, 2, 2])
    assert calinski_harabasz_score(points, labels) == 1.0
    with np.errstate(all="raise"):
        assert calinski_harabasz(points, labels) == 1.0


def test_of_cuts_of_equal_score_the_fewer_groups_win():
    """Levels 0, 1 and 1 + 1e-7: two groups leave a W of rounding size only and three a W
    of 0, both the fallback score 1.0; the docstring's tie rule takes two."""
    values = np.repeat([0.0, 1.0, 1.0 + 1e-7], 2)[:, None]
    tree = lambda: linkage(values, method="ward")  # noqa: E731
    labels, scores = choose_groups(tree, values, max_groups=3)
    assert scores == {2: 1.0, 3: 1.0}
    np.testing.assert_array_equal(labels, [0, 0, 1, 1, 1, 1])


def test_calinski_harabasz_is_scale_free_down_to_tiny_points():
    """A ratio of dispersions: points of size 1e-8 (squares 1e-16) score as at size 1."""
    rng = np.random.default_rng(3)
    points, labels = rng.random((60, 5)) * 1e-8, rng.integers(0, 3, 60)
    assert calinski_harabasz(points, labels) == pytest.approx(
        calinski_harabasz_score(points * 1e8, labels), rel=1e-8)


def _never_called():
    raise AssertionError("the tree of fewer than 3 features was built")


def test_the_tree_is_built_from_three_features_on():
    """Fewer than 3 features are one group (int64) without a tree; 3 are cut into 2."""
    for d in (1, 2):
        groups, scores = choose_groups(_never_called, np.eye(d), 5)
        assert groups.dtype == np.int64 and np.array_equal(groups, np.zeros(d)) \
            and scores == {}
    points = np.array([[0.0], [0.1], [5.0]])
    groups, scores = choose_groups(lambda: linkage(points, "ward"), points, 5)
    assert list(scores) == [2] and np.array_equal(groups, [0, 0, 1])


def reference_cut(points, max_groups):
    """From the docstring with SciPy and scikit-learn: every M in 2..min(max_groups,
    d - 1) whose maxclust cut has M groups, scored by scikit-learn; the best cut."""
    tree = linkage(points, "ward")
    cuts = {m: fcluster(tree, m, "maxclust") for m in range(2, min(max_groups,
                                                                   len(points) - 1) + 1)}
    scores = {m: calinski_harabasz_score(points, labels) for m, labels in cuts.items()
              if np.unique(labels).size == m}
    return scores, cuts[max(scores, key=scores.get)]


@pytest.mark.parametrize("max_groups", [3, 5, 10])
def test_every_m_up_to_d_minus_one_is_scored(max_groups):
    """Six points: M = 2..min(max_groups, 5) are scored, each as scikit-learn scores
    the cut, and the best cut wins."""
    points = np.random.default_rng(4).random((6, 2))
    scores, best = reference_cut(points, max_groups)
    groups, ours = choose_groups(lambda: linkage(points, "ward"), points, max_groups)
    assert list(ours) == sorted(scores) == list(range(2, min(max_groups, 5) + 1))
    assert all(ours[m] == pytest.approx(scores[m], rel=1e-10) for m in scores)
    assert adjusted_rand_score(best, groups) == 1.0


def test_two_groups_are_tried_first():
    """Two tight clusters far apart: the best M is 2."""
    rng = np.random.default_rng(5)
    points = np.r_[rng.normal(0, 0.3, (10, 2)), rng.normal(8, 0.3, (10, 2))]
    scores, best = reference_cut(points, 4)
    assert max(scores, key=scores.get) == 2
    groups, _ = choose_groups(lambda: linkage(points, "ward"), points, 4)
    assert np.array_equal(groups, np.repeat([0, 1], 10))


def test_an_m_no_cut_gives_is_skipped_not_the_end_of_the_search():
    """Three blocks of features equally unlike each other (|corr| 0 across, 0.9 within):
    their merges tie, so no cut has 2 groups; the cut into the 3 blocks is found."""
    blocks = np.repeat([0, 1, 2], 3)
    similarity = np.where(blocks[:, None] == blocks[None, :], 0.9, 0.0)
    np.fill_diagonal(similarity, 1.0)
    assert np.array_equal(correlation_groups(similarity, 5), blocks)
