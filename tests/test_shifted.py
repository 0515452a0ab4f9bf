"""The shifted benchmarks: ground truth checked against the data itself."""

import numpy as np
import pytest
from sklearn.datasets import load_digits

from causefs.datasets import load_dataset, make_causal
from causefs.datasets import make_digits_border, make_shifted_clusters


def block_argmax(X, columns, n_blocks):
    """Which equal block of ``columns`` has the largest mean, per sample (the generator's
    construction read back from the data)."""
    return X[:, columns].reshape(X.shape[0], n_blocks, -1).mean(axis=2).argmax(axis=1)


def ordered_columns(data, which, n_blocks, X):
    """The shuffled columns of ``which`` put back in generator order: group the columns
    by the block whose samples they are high for."""
    columns = getattr(data, which)
    labels = data.y if which == "causal" else data.environment
    means = np.stack([X[labels == b][:, columns].mean(axis=0) for b in range(n_blocks)])
    return columns[np.argsort(means.argmax(axis=0), kind="stable")]


@pytest.mark.parametrize("bias", [0.0, 0.6, 1.0])
def test_bias_rate_is_realised_and_vanishes_at_test(bias):
    data = make_shifted_clusters(n_train=4000, n_test=4000, train_bias=bias, test_bias=0.0,
                                 seed=1)
    expected = bias + (1 - bias) / 2
    agree = np.mean(data.environment == data.y % 2)
    assert abs(agree - expected) < 4 * np.sqrt(0.25 / 4000)
    assert abs(np.mean(data.environment_test == data.y_test % 2) - 0.5) < 4 * np.sqrt(0.25 / 4000)


def test_features_carry_what_the_ground_truth_says():
    data = make_shifted_clusters(n_train=3000, n_test=3000, train_bias=0.9, seed=2)
    assert sorted(np.concatenate([data.causal, data.spurious, data.noise]).tolist()) == \
        list(range(data.X.shape[1]))
    for X, y, B in ((data.X, data.y, data.environment),
                    (data.X_test, data.y_test, data.environment_test)):
        causal = ordered_columns(data, "causal", 4, data.X)
        spurious = ordered_columns(data, "spurious", 2, data.X)
        # the causal features determine the clusters, in both environments
        assert np.mean(block_argmax(X, causal, 4) == y) > 0.95
        # the spurious features determine B, not C
        assert np.mean(block_argmax(X, spurious, 2) == B) > 0.95
        # noise features: mean 0 and variance 1 whatever the cluster
        for c in range(4):
            assert np.abs(X[y == c][:, data.noise].mean(axis=0)).max() < 0.2
        # given B, the spurious features do not depend on C
        for b in range(2):
            means = [X[(B == b) & (y == c)][:, data.spurious].mean() for c in range(4)
                     if np.sum((B == b) & (y == c)) > 50]
            assert np.ptp(means) < 0.15


def test_spurious_association_flips_with_the_environment():
    data = make_shifted_clusters(n_train=2000, n_test=2000, train_bias=1.0, test_bias=0.0,
                                 seed=3)
    spurious = data.spurious

    def association(X, y):  # spurious block mean of even minus odd clusters
        return X[y % 2 == 0][:, spurious].mean(axis=0) - X[y % 2 == 1][:, spurious].mean(axis=0)

    train, test = association(data.X, data.y), association(data.X_test, data.y_test)
    assert np.all(np.abs(train) > 1.5)  # |spurious_separation| = 2 in training
    assert np.all(np.abs(test) < 0.35)  # independent at test


def test_seeded_and_validated():
    a, b = make_shifted_clusters(seed=5), make_shifted_clusters(seed=5)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.X_test, b.X_test)
    assert not np.array_equal(a.X, make_shifted_clusters(seed=6).X)
    with pytest.raises(ValueError, match="train_bias"):
        make_shifted_clusters(train_bias=1.5)
    with pytest.raises(ValueError, match="n_groups"):
        make_shifted_clusters(n_groups=4)
    with pytest.raises(ValueError, match="n_causal"):
        make_shifted_clusters(n_causal=6)
    with pytest.raises(ValueError, match="test_bias"):
        make_digits_border(test_bias=-1.1)


@pytest.mark.parametrize("bias", [0.0, 1.0])
def test_digits_border(bias):
    data = make_digits_border(train_bias=bias, test_bias=0.0, seed=0)
    images, labels = load_digits(return_X_y=True)
    assert data.X.shape[1] == 100 and data.X.shape[0] + data.X_test.shape[0] == labels.size
    frame = np.ones((10, 10), dtype=bool)
    frame[1:-1, 1:-1] = False
    assert np.array_equal(data.spurious, np.flatnonzero(frame.ravel()))
    # the digit pixels are digits images of the same class (looked up, not recomputed)
    lookup = {row.tobytes(): label for row, label in zip(images, labels)}
    for X, y in ((data.X, data.y), (data.X_test, data.y_test)):
        assert all(lookup[row.tobytes()] == label for row, label in zip(X[:, data.causal], y))
    # the border shade is the group: 4 vs 12 (+- noise)
    shade = data.X[:, data.spurious].mean(axis=1)
    assert np.array_equal(shade > 8, data.environment == 1)
    agree = np.mean(data.environment == data.y % 2)
    assert abs(agree - (bias + (1 - bias) / 2)) < 4 * np.sqrt(0.25 / data.y.size)
    assert abs(np.mean(data.environment_test == data.y_test % 2) - 0.5) < 0.08


def test_load_dataset_by_name():
    data = load_dataset("shifted_clusters", train_bias=0.5, seed=4)
    assert np.array_equal(data.X, make_shifted_clusters(train_bias=0.5, seed=4).X)


def test_make_causal_is_symmetric_in_cluster_and_environment():
    # the joint table of (C, E) is symmetric: swapping the causal and spurious roles
    # leaves the distribution unchanged (documented in make_causal)
    data = make_causal(n_samples=40000, n_features=30, confounding=0.6, seed=0)
    table = np.zeros((4, 4))
    np.add.at(table, (data.y, data.environment), 1)
    table /= table.sum()
    expected = 0.6 * np.eye(4) / 4 + 0.4 / 16
    assert np.abs(table - expected).max() < 0.006
    assert np.abs(table - table.T).max() < 0.006
