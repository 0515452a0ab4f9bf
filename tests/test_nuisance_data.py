"""Datasets that return Z, files that hold it, and the command line that passes it on."""

import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf
from sklearn.exceptions import ConvergenceWarning

from causefs import CauseFS
from causefs.app.cli import run
from causefs.app.config_checks import ConfigError, check_config
from causefs.app.configs import register_configs
from causefs.datasets import (
    DatasetError,
    load_dataset,
    load_file,
    make_digits_border,
    make_shifted_clusters,
)
from causefs.selectors import Selector, accepts_nuisance, make_selector

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)

register_configs()


def test_several_training_environments_pool_and_test_environments_stay_apart():
    data = make_shifted_clusters(n_train=3000, n_test=3000, train_bias=[1.0, 0.0],
                                 test_bias=[0.0, -1.0], seed=0)
    assert data.X.shape[0] == 3000 and data.X_test.shape[0] == 6000
    first, second = slice(0, 1500), slice(1500, 3000)
    tied = data.environment == data.y % 2
    assert tied[first].all() and abs(tied[second].mean() - 0.5) < 0.05
    absent, reversed_ = data.test_names == "0", data.test_names == "-1"
    assert absent.sum() == reversed_.sum() == 3000
    # reversed: B is the group of the next cluster, never the cluster's own
    assert np.all(data.environment_test[reversed_] == (data.y_test[reversed_] + 1) % 2)
    assert abs(np.mean(data.environment_test[absent] == data.y_test[absent] % 2) - 0.5) < 0.05
    assert data.train_bias == (1.0, 0.0)


def test_a_single_bias_is_one_environment_as_before():
    data = make_shifted_clusters(train_bias=0.8, test_bias=0.0, seed=1)
    assert data.test_names is None and data.train_bias == 0.8


def test_a_wider_border_frames_the_same_digits():
    thin = make_digits_border(train_bias=[0.9, 0.5], test_bias=[0.0, -0.9], seed=0)
    wide = make_digits_border(train_bias=[0.9, 0.5], test_bias=[0.0, -0.9], border_width=2,
                              seed=0)
    assert wide.image_shape == (12, 12) and wide.spurious.size == 144 - 64
    assert np.array_equal(thin.X[:, thin.causal], wide.X[:, wide.causal])
    # every test environment frames all the test images
    assert np.array_equal(thin.X_test[thin.test_names == "0"][:, thin.causal],
                          thin.X_test[thin.test_names == "-0.9"][:, thin.causal])


def test_load_dataset_picks_z_by_name():
    data = load_dataset("shifted_clusters", nuisance="environment", seed=2)
    assert np.array_equal(data.nuisance, data.environment)
    assert load_dataset("shifted_clusters", seed=2).nuisance is None
    assert data.sha256() != load_dataset("shifted_clusters", seed=2).sha256()
    random = load_dataset("digits", nuisance="random")
    assert set(np.unique(random.nuisance)) == {0, 1, 2}
    with pytest.raises(DatasetError, match="has no such array.*'environment'"):
        load_dataset("shifted_clusters", nuisance="site")


def test_files_hold_z_under_a_key_or_in_columns(tmp_path):
    rng = np.random.default_rng(0)
    X, y, site = rng.random((6, 3)), np.arange(6) % 2, np.array(["a", "b"] * 3)
    np.savez(tmp_path / "d.npz", X=X, y=y, site=site)
    assert np.array_equal(load_file(tmp_path / "d.npz", nuisance="site").nuisance, site)
    np.savez(tmp_path / "short.npz", X=np.ones((6, 2)), site=site[:4])
    with pytest.raises(DatasetError, match=r"6 samples but the nuisance variables "
                                           r"\(nuisance='site'\) have 4 rows"):
        load_file(tmp_path / "short.npz", nuisance="site")
    with pytest.raises(DatasetError, match="has no array 'batch'"):
        load_file(tmp_path / "d.npz", nuisance="batch")
    table = np.column_stack([X, [0, 1, 2, 0, 1, 2], [0.5, 1.5, 2.5, 0.1, 0.2, 0.3], y])
    np.savetxt(tmp_path / "d.csv", table, delimiter=",")
    data = load_file(tmp_path / "d.csv", label_column=-1, nuisance=3)
    assert data.X.shape == (6, 4) and data.nuisance.dtype.kind == "i"  # whole numbers: labels
    both = load_file(tmp_path / "d.csv", label_column=-1, nuisance=[3, 4])
    assert both.X.shape == (6, 3) and both.nuisance.dtype.kind == "f"
    with pytest.raises(DatasetError, match="cannot hold both"):
        load_file(tmp_path / "d.csv", label_column=-1, nuisance=5)
    with pytest.raises(DatasetError, match="out of range"):
        load_file(tmp_path / "d.csv", nuisance=9)


def test_a_csv_column_of_text_levels_is_a_categorical_z(tmp_path):
    lines = ["f1,f2,batch,f3"] + [f"{i / 10},{i % 3},run{i % 2 + 1},{i}" for i in range(6)]
    (tmp_path / "b.csv").write_text("\n".join(lines) + "\n")
    data = load_file(tmp_path / "b.csv", nuisance="batch")
    assert data.X.shape == (6, 3)
    assert np.array_equal(data.X[:, 2], np.arange(6.0))
    assert data.nuisance.tolist() == ["run1", "run2"] * 3
    lines[3] = "0.2,2,,2"
    (tmp_path / "e.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match="line 4, column 3 \\('batch'\\): the nuisance "
                                           "variable is missing"):
        load_file(tmp_path / "e.csv", nuisance="batch")
    lines[3] = "0.2,x,run1,2"
    (tmp_path / "f.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match="line 4, column 2: 'x' is not a number"):
        load_file(tmp_path / "f.csv", nuisance="batch")


def composed(*overrides):
    with initialize_config_module(config_module="causefs.conf", version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


@pytest.mark.parametrize("cell", ["NA", "nan", "inf", "-Infinity", "null", "N/A"])
def test_a_missing_or_infinite_cell_of_a_csv_z_names_its_line(tmp_path, cell):
    """Such a cell was read as a level of its own (or turned a number column into text
    levels): the samples of unknown batch were a batch."""
    lines = ["f1,f2,batch"] + [f"{i / 10},{i % 3},{i % 2}" for i in range(6)]
    lines[4] = f"0.3,0,{cell}"
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=rf"line 5, column 3 \('batch'\): the nuisance "
                                           rf"variable is '{cell}' \(missing and infinite"):
        load_file(tmp_path / "m.csv", nuisance="batch")


@pytest.mark.parametrize("Z", [np.float64(3), np.zeros((6, 2, 2))])
def test_a_z_array_that_is_not_one_or_two_dimensional_is_refused_by_key(tmp_path, Z):
    np.savez(tmp_path / "z.npz", X=np.ones((6, 2)), Z=Z)
    with pytest.raises(DatasetError, match=rf"z.npz: nuisance 'Z' has shape "
                                           rf"{re.escape(str(Z.shape))}; Z is a 1-D array"):
        load_file(tmp_path / "z.npz", nuisance="Z")


def test_a_scipy_sparse_file_is_named_as_one(tmp_path):
    """Its member "data" (the non-zero values) was read as the features."""
    sp.save_npz(tmp_path / "s.npz", sp.random_array((6, 4), density=0.5, rng=0,
                                                    format="csr"))
    with pytest.raises(DatasetError, match="s.npz holds a scipy.sparse matrix"):
        load_file(tmp_path / "s.npz")


def test_a_list_of_csv_header_names_is_a_nuisance_key():
    """load_file takes a list of header names; the command refused it."""
    check_config(composed("dataset=file", "dataset.path=d.csv",
                          "dataset.nuisance=[batch,site]"))
    with pytest.raises(ConfigError, match="column numbers and lists apply to .csv files"):
        check_config(composed("dataset=file", "dataset.path=d.npz",
                              "dataset.nuisance=[batch,site]"))


@pytest.mark.parametrize("column, message", [
    # the command's key to leave Z out, not the Python argument
    ([1] * 30, r"nuisance does not vary .*; set dataset.nuisance=null$"),
    ([f"s{i}" for i in range(30)], "nuisance codes to 29 columns for 30 samples"),
])
def test_a_z_no_fit_can_use_is_refused_by_the_command_before_the_fit(tmp_path, column,
                                                                     message):
    """It was a traceback from inside the fit (exit 1)."""
    rows = [f"{i % 3},{i % 5},{i % 7},{value}" for i, value in enumerate(column)]
    (tmp_path / "z.csv").write_text("a,b,c,batch\n" + "\n".join(rows) + "\n")
    cfg = composed("dataset=file", f"dataset.path={tmp_path / 'z.csv'}",
                   "dataset.nuisance=batch", "n_clusters=2", "n_features_to_select=2")
    with pytest.raises(ConfigError, match=rf"^dataset.nuisance \({re.escape(str(tmp_path))}"
                                          rf"/z.csv\): {message}"):
        run(cfg, output_dir=tmp_path)


@pytest.mark.parametrize("value, match", [
    ("3.5", "must be null, the name of the array"),
    ("[1,2]", "column numbers and lists apply to .csv files only"),
])
def test_bad_nuisance_keys_are_refused_before_loading(value, match):
    with pytest.raises(ConfigError, match=match):
        check_config(composed("dataset=shifted_clusters", f"dataset.nuisance={value}"))


SMALL = ["dataset=shifted_environments", "dataset.n_train=120", "dataset.n_test=60",
         "evaluation.rhos=[8]", "evaluation.n_runs=2", "method.max_iter=2"]


def test_the_command_passes_z_and_scores_every_test_environment(tmp_path):
    cfg = composed(*SMALL, "schedule=nuisance_adjusted")
    result = run(cfg, output_dir=tmp_path)
    assert result["nuisance_given"]
    assert set(result["metrics"]["test_environments"]) == {"0", "-0.9"}
    without = run(composed(*SMALL, "schedule=full", "dataset.nuisance=null"),
                  output_dir=tmp_path)
    assert not without["nuisance_given"]
    assert "nuisance" not in without["job"]["dataset"]  # the key of a run without Z


def test_the_command_runs_auto_by_default_and_says_when_z_is_ignored(tmp_path, capsys):
    cfg = composed(*SMALL)
    assert OmegaConf.to_container(cfg.schedule) == {"name": "auto"}
    capsys.readouterr()
    default = run(cfg, output_dir=tmp_path)
    # the qp node is the default QP backend: not reported unused by nuisance_adjusted
    assert "SettingsWarning" not in capsys.readouterr().err
    assert default["nuisance_given"]
    assert default["details"]["settings"]["schedule"] == {"name": "auto"}
    assert default["job"]["params"]["schedule"]["with_nuisance"]["name"] == \
        "nuisance_adjusted"
    explicit = run(composed(*SMALL, "schedule=auto"), output_dir=tmp_path)
    assert explicit["selected_features"] == default["selected_features"]
    capsys.readouterr()
    ignored = run(composed(*SMALL, "schedule=full"), output_dir=tmp_path)
    err = capsys.readouterr().err
    assert "has nuisance variables, but schedule 'full' does not adjust for them" in err
    assert "NuisanceUnusedWarning" not in err and "SettingsWarning" not in err
    assert not ignored["nuisance_given"]


class OldSelector(Selector):
    """A plugin's selector written before Selector.score took Z."""

    name = "old_selector"

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0):
        return np.var(X, axis=0)


def test_a_selector_that_does_not_take_z_runs_without_it():
    assert not accepts_nuisance(OldSelector())
    assert accepts_nuisance(make_selector("mcfs"))
    assert accepts_nuisance(make_selector("causefs"))


@pytest.mark.skipif(not os.environ.get("CAUSEFS_DATA"), reason="CAUSEFS_DATA is not set "
                    "(.ci/run sets it to ../shared/datasets)")
def test_an_injected_block_is_driven_by_z():
    data = load_dataset("injected_shift", data_home_path=Path(os.environ["CAUSEFS_DATA"]),
                        nuisance="environment", n_train=400, n_test=200, n_injected=10,
                        n_groups=5, block_noise=0.25, strength=4.0, seed=0)
    assert data.X.shape == (400, 256 + 10) and np.array_equal(data.spurious,
                                                              np.arange(256, 266))
    block = data.X[:, data.spurious].reshape(400, 5, 2).mean(axis=2)
    assert np.mean(block.argmax(axis=1) == data.nuisance) > 0.95


def _users_csv(path, seed):
    """The issue-22 user's file: 300 samples x 40 features with a header; features 0-7
    carry 3 clusters, 8-17 an additive batch effect, the batch (text levels) agrees
    with the cluster in about 76% of the samples; the rest is noise."""
    rng = np.random.default_rng(seed)
    n = 300
    cluster = rng.integers(0, 3, n)
    batch = np.where(rng.random(n) < 0.64, cluster, rng.integers(0, 3, n))
    X = rng.standard_normal((n, 40))
    levels = [-1.5, 0.0, 1.5]
    X[:, :8] += np.array([rng.permutation(levels) for _ in range(8)]).T[cluster]
    X[:, 8:18] += np.array([rng.permutation(levels) for _ in range(10)]).T[batch]
    lines = [",".join([f"f{j}" for j in range(40)] + ["batch"])]
    lines += [",".join([f"{v:.5f}" for v in row] + [f"run{b + 1}"]) for row, b in zip(X, batch)]
    path.write_text("\n".join(lines) + "\n")
    return cluster, batch


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_users_csv_keeps_every_cluster_feature_and_no_batch_feature(tmp_path, seed):
    cluster, batch = _users_csv(tmp_path / "samples.csv", seed)
    assert 0.7 < np.mean(cluster == batch) < 0.85
    data = load_file(tmp_path / "samples.csv", nuisance="batch")
    assert set(data.nuisance) == {"run1", "run2", "run3"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = CauseFS(n_clusters=3, n_features_to_select=10, random_state=0).fit(
            data.X, nuisance=data.nuisance)
    assert est.schedule_ == "nuisance_adjusted"
    assert set(range(8)) <= set(np.flatnonzero(est.support_))
    assert np.all(est.nuisance_share_[8:18] > 0.3)  # Z explains the batch features


@pytest.mark.parametrize("key, what", [("X", "the features"), ("y", "the labels"),
                                       ("feature_names", "the feature names")])
def test_an_archive_array_that_is_already_read_is_not_z(tmp_path, key, what):
    # the features taken as Z fitted without a word (exit 0 from the command)
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "d.npz", X=rng.random((30, 6)), y=np.arange(30) % 3,
             feature_names=np.array(list("abcdef")), batch=np.arange(30) % 2)
    with pytest.raises(DatasetError, match=rf"d\.npz: array '{key}' holds {what}; the "
                                           r"nuisance variables are another array"):
        load_file(tmp_path / "d.npz", nuisance=key)
    assert load_file(tmp_path / "d.npz", nuisance="batch").nuisance.shape == (30,)


def test_a_csv_column_named_twice_as_z_is_refused(tmp_path):
    # ["batch", 4] named one column twice: Z held it twice, without a word
    lines = ["a,b,c,d,batch"] + [f"{i},{i % 3},{i % 5},{2 * i},{i % 2}" for i in range(12)]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    for twice in (["batch", 4], ["batch", "batch"], [4, -1]):
        with pytest.raises(DatasetError, match=r"t\.csv: nuisance names column 4 \('batch'\) "
                                               r"more than once .*name each nuisance column "
                                               r"once$"):
            load_file(tmp_path / "t.csv", nuisance=twice)
    assert load_file(tmp_path / "t.csv", nuisance=["batch"]).nuisance.shape == (12, 1)
