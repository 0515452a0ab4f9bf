"""Loaders (benchmarks, .npz/.mat/.csv) and clustering metrics."""

import shutil

import numpy as np
import pytest
import scipy.io

from causefs.datasets import BENCHMARKS, DatasetError, load_benchmark, load_dataset, load_file
from causefs.metrics import clustering_accuracy, kmeans_scores, nmi


@pytest.fixture
def arrays():
    rng = np.random.default_rng(0)
    return rng.random((12, 5)), np.repeat([1, 2, 3], 4)


def test_npz_and_mat_v5(tmp_path, arrays):
    X, y = arrays
    np.savez(tmp_path / "a.npz", X=X, y=y)
    scipy.io.savemat(tmp_path / "b.mat", {"fea": X, "gnd": y[:, None]})
    for name in ("a.npz", "b.mat"):
        data = load_file(tmp_path / name)
        assert np.allclose(data.X, X) and np.array_equal(data.y, y)


def test_mat_v73(tmp_path, arrays):
    h5py = pytest.importorskip("h5py")
    X, y = arrays
    path = tmp_path / "c.mat"
    # the layout MATLAB's save -v7.3 writes: a 512-byte text header, then HDF5 with
    # column-major arrays
    with h5py.File(path, "w", userblock_size=512) as handle:
        handle["X"] = X.T
        handle["Y"] = y[None, :].astype(float)
    with open(path, "r+b") as handle:
        handle.write(b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: test HDF5 schema 1.00 .")
    data = load_file(path)
    assert np.allclose(data.X, X) and np.array_equal(data.y, y)


def test_mat_stored_features_by_samples(tmp_path, arrays):
    X, y = arrays
    scipy.io.savemat(tmp_path / "t.mat", {"X": X.T, "y": y})
    assert load_file(tmp_path / "t.mat").X.shape == (12, 5)


def test_csv_with_header_and_labels(tmp_path, arrays):
    X, y = arrays
    table = np.hstack([X, y[:, None]])
    np.savetxt(tmp_path / "d.csv", table, delimiter=",", header="a,b,c,d,e,label", comments="")
    data = load_file(tmp_path / "d.csv", label_column=-1)
    assert np.allclose(data.X, X) and np.array_equal(data.y, y)
    assert load_file(tmp_path / "d.csv").y is None


@pytest.mark.parametrize("setup, match", [
    (lambda p: None, "no file at"),
    (lambda p: p.write_text("x"), "unsupported file type"),
])
def test_file_errors(tmp_path, setup, match):
    path = tmp_path / "bad.xyz" if "unsupported" in match else tmp_path / "missing.npz"
    setup(path)
    with pytest.raises(DatasetError, match=match):
        load_file(path)


def test_npz_without_features(tmp_path):
    np.savez(tmp_path / "e.npz", Z=np.ones((3, 2)))
    with pytest.raises(DatasetError, match="no feature array"):
        load_file(tmp_path / "e.npz")


def test_missing_benchmark_says_where_to_put_it(tmp_path):
    with pytest.raises(DatasetError, match=f"put JAFFE.npz in {tmp_path}"):
        load_benchmark("jaffe", tmp_path)


def test_no_data_directory(monkeypatch):
    monkeypatch.delenv("CAUSEFS_DATA", raising=False)
    with pytest.raises(DatasetError, match="CAUSEFS_DATA"):
        load_benchmark("jaffe")


def test_unknown_benchmark():
    with pytest.raises(DatasetError, match="available: jaffe, umist, coil20, usps"):
        load_benchmark("lung", ".")


def test_bad_checksum_and_wrong_shape(tmp_path):
    np.savez(tmp_path / "JAFFE.npz", X=np.ones((10, 3)), y=np.arange(10))
    with pytest.raises(DatasetError, match="sha256"):
        load_benchmark("jaffe", tmp_path)
    with pytest.raises(DatasetError, match=r"shape \(10, 3\), expected \(213, 676\)"):
        load_benchmark("jaffe", tmp_path, verify=False)


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_benchmarks_load_and_verify(data_dir, name):
    data = load_benchmark(name.upper(), data_dir)
    spec = BENCHMARKS[name]
    assert data.X.shape == (spec.n_samples, spec.n_features)
    assert data.n_classes == spec.n_classes


def test_corrupt_copy_of_a_benchmark_is_caught(data_dir, tmp_path):
    shutil.copy(data_dir / "JAFFE.npz", tmp_path / "JAFFE.npz")
    with open(tmp_path / "JAFFE.npz", "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(DatasetError, match="corrupt"):
        load_benchmark("jaffe", tmp_path)


def test_digits_is_embedded():
    data = load_dataset("digits")
    assert data.X.shape == (1797, 64) and data.n_classes == 10


def test_accuracy_is_invariant_to_relabelling():
    y = np.array([0, 0, 1, 1, 2, 2, 2])
    assert clustering_accuracy(y, np.array([5, 5, 3, 3, 9, 9, 9])) == 1.0
    assert clustering_accuracy(y, np.array([1, 1, 1, 0, 2, 2, 0])) == pytest.approx(5 / 7)


def test_nmi_normalizations():
    y = np.array([0, 0, 0, 1, 1, 1])
    pred = np.array([0, 0, 1, 1, 2, 2])
    arithmetic, largest = nmi(y, pred), nmi(y, pred, "max")
    assert nmi(y, y) == pytest.approx(1.0) and largest < arithmetic < 1.0
    assert nmi(y, pred, "sqrt") == pytest.approx(nmi(y, pred, "geometric"))
    with pytest.raises(ValueError, match="unknown NMI average"):
        nmi(y, pred, "mean")


def test_kmeans_protocol_on_separable_data():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 15)
    X = np.eye(3)[y] * 10 + rng.normal(scale=0.1, size=(45, 3))
    scores = kmeans_scores(X, y, n_runs=5)
    assert scores["acc_mean"] == pytest.approx(1.0) and scores["nmi_mean"] == pytest.approx(1.0)
    assert scores["n_runs"] == 5 and scores["acc_std"] == 0
