"""The pose benchmark: COIL-20's own pose as the nuisance Z (make_pose_shift).

Every expectation is computed here from COIL-20's file (72 consecutive poses per object,
labels 1..20) and the bias semantics of causefs.datasets.shifted, not by the generator.
"""

import os
from pathlib import Path

import numpy as np
import pytest
from hydra import compose, initialize_config_module

from causefs.app.cli import load
from causefs.app.configs import register_configs
from causefs.core.validation import InvalidParameterError
from causefs.datasets import DatasetError, make_pose_shift, pose_bins

register_configs()

needs_data = pytest.mark.skipif(not os.environ.get("CAUSEFS_DATA"), reason="CAUSEFS_DATA "
                                "is not set (.ci/run sets it to ../shared/datasets)")


def coil20():
    with np.load(Path(os.environ["CAUSEFS_DATA"]) / "COIL20.npz") as data:
        return np.asarray(data["X"], dtype=float), np.asarray(data["y"])


def pose(**options):
    return make_pose_shift(data_home=os.environ["CAUSEFS_DATA"], **options)


def file_rows(X, images):
    """The row of COIL-20's file that every row of ``X`` is (its images are distinct)."""
    row_of = {image.tobytes(): i for i, image in enumerate(images)}
    assert len(row_of) == images.shape[0]
    return np.array([row_of[x.tobytes()] for x in X])


def tolerance(share, n):
    """Four standard errors of a share over ``n`` independent draws."""
    return 4 * np.sqrt(share * (1 - share) / n) + 1e-9


@needs_data
@pytest.mark.parametrize("n_bins, train_bias, n_train", [(2, (0.9, 0.6, 0.3), 400),
                                                         (3, (0.8, 0.2), 300),
                                                         (4, (0.5,), 200)])
def test_training_pose_is_tied_to_the_object_group_as_the_bias_says(n_bins, train_bias,
                                                                     n_train):
    data = pose(n_bins=n_bins, train_bias=train_bias, n_train=n_train, n_test=100)
    start = 0
    for bias, size in zip(train_bias, [a.size for a in np.array_split(np.arange(n_train),
                                                                      len(train_bias))]):
        part = slice(start, start + size)
        start += size
        tied = data.environment[part] == (data.y[part] - 1) % n_bins
        expected = bias + (1 - bias) / n_bins
        assert abs(tied.mean() - expected) <= tolerance(expected, size)
    # every object equally often (n_train split evenly among environments and objects)
    counts = np.bincount(data.y, minlength=21)[1:]
    assert counts.max() - counts.min() <= len(train_bias)


@needs_data
def test_test_environments_are_balanced_and_reversed():
    data = pose(n_bins=2, n_test=360)
    assert set(data.test_names) == {"0", "-0.9"}
    balanced, reversed_ = data.test_names == "0", data.test_names == "-0.9"
    assert balanced.sum() == reversed_.sum() == 360
    group = (data.y_test - 1) % 2
    # balanced: every object shows every bin about equally often (B independent of C)
    for obj in range(1, 21):
        mine = balanced & (data.y_test == obj)
        assert abs(np.mean(data.environment_test[mine] == 0) - 0.5) <= 0.5 / mine.sum() + 1e-9
    assert abs(np.mean(data.environment_test[balanced] == group[balanced]) - 0.5) <= \
        tolerance(0.5, 360)
    # reversed: the bin of the next object's group, with probability 0.9 + 0.1 / 2
    next_group = (data.y_test[reversed_]) % 2
    share = np.mean(data.environment_test[reversed_] == next_group)
    assert abs(share - 0.95) <= tolerance(0.95, 360)


@needs_data
@pytest.mark.parametrize("n_bins", [2, 3, 8])
def test_bins_follow_the_file_order_and_pools_are_disjoint(n_bins):
    images, labels = coil20()
    data = pose(n_bins=n_bins, train_bias=(0.5,), test_bias=(0.0, -0.5), n_train=120,
                n_test=60, seed=3)
    train, test = file_rows(data.X, images), file_rows(data.X_test, images)
    for rows, bins, y in ((train, data.environment, data.y),
                          (test, data.environment_test, data.y_test)):
        assert np.array_equal(y, labels[rows])
        # 72 consecutive rows per object, one full turn: bin = (pose * n_bins) // 72
        assert np.array_equal(bins, (rows % 72) * n_bins // 72)
    assert np.unique(train).size == train.size  # without replacement
    assert not set(train) & set(test)  # no test image is a training image
    for name in np.unique(data.test_names):
        rows = test[data.test_names == name]
        assert np.unique(rows).size == rows.size


@needs_data
def test_ground_truth_is_every_pixel_and_nothing_injected():
    data = pose()
    assert data.X.shape == (400, 1024) and data.X_test.shape == (720, 1024)
    assert np.array_equal(data.causal, np.arange(1024))
    assert data.spurious.size == 0 and data.noise.size == 0
    assert data.image_shape == (32, 32) and data.name == "coil20_poses"


@needs_data
def test_the_same_seed_gives_the_same_data_and_another_seed_other_data():
    first, again, other = pose(seed=1), pose(seed=1), pose(seed=2)
    for name in ("X", "y", "environment", "X_test", "environment_test"):
        assert np.array_equal(getattr(first, name), getattr(again, name))
    assert not np.array_equal(first.X, other.X)
    assert not np.array_equal(first.X_test, other.X_test)


@needs_data
@pytest.mark.parametrize("options, match", [
    (dict(n_bins=1), "n_bins=1"),
    (dict(n_bins=20), "n_bins=20"),
    (dict(train_bias=1.5), "train_bias=1.5"),
    (dict(test_bias=[]), r"test_bias=\[\]"),
    (dict(train_share=1.0), "train_share=1.0"),
    (dict(n_train=10), "n_train=10"),
    (dict(n_train=600), "n_train=600: .*object 0 needs up to 25 images of pose bin 0 but its "
                        "training pool holds 18; the largest n_train that fits is 420"),
    (dict(n_test=400), "n_test=400: .*test pool holds 18; the largest n_test that fits is 360"),
])
def test_bad_arguments_are_refused_by_name(options, match):
    with pytest.raises(InvalidParameterError, match=match):
        pose(**options)


def test_a_base_without_a_pose_order_is_refused():
    with pytest.raises(InvalidParameterError, match="base='umist'.*pose order"):
        make_pose_shift("umist")


def test_pose_bins_need_runs_of_consecutive_poses():
    labels = np.repeat([1, 2, 3], 4)
    assert np.array_equal(pose_bins(labels, 4, 2), np.tile([0, 0, 1, 1], 3))
    with pytest.raises(DatasetError, match="4 consecutive rows per object"):
        pose_bins(np.r_[labels, 1], 4, 2)
    with pytest.raises(DatasetError, match="repeat an object"):
        pose_bins(np.r_[labels, [1] * 4], 4, 2)


@needs_data
def test_the_dataset_config_gives_z_as_the_pose_bin():
    with initialize_config_module(config_module="causefs.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=["dataset=coil20_poses",
                                                       f"data_dir={os.environ['CAUSEFS_DATA']}"])
    data = load(cfg)
    assert np.array_equal(data.nuisance, data.environment)
    assert data.X.shape == (cfg.dataset.n_train, 1024)
