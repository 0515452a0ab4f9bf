"""The initial feature groups: exact (average linkage on 1 - |corr|) and, for many
features, a sampled tree plus assignment, each against an independent computation."""

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse import csr_matrix
from sklearn.metrics import adjusted_rand_score, calinski_harabasz_score

from causefs.blocks.initialization.correlation_groups import CorrelationGroupsBlock
from causefs.numerics.correlation import pearson_similarity
from causefs.numerics.feature_clustering import correlation_groups, sampled_correlation_groups


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
    similarity = np.abs(np.corrcoef(X, rowvar=False))
    distance = 1.0 - similarity[np.triu_indices(X.shape[1], 1)]
    tree = linkage(np.clip(distance, 0, None), method="average")
    best = max((calinski_harabasz_score(similarity, fcluster(tree, m, "maxclust")), m)
               for m in range(2, max_groups + 1)
               if np.unique(fcluster(tree, m, "maxclust")).size == m)
    return fcluster(tree, best[1], "maxclust")


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
