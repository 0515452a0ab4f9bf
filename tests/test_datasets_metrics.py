"""Loaders (benchmarks, .npz/.mat/.csv) and clustering metrics."""

import warnings

import numpy as np
import pytest
import scipy.io

from causefs.datasets import (BENCHMARKS, DatasetError, DatasetWarning, load_benchmark,
                              load_dataset, load_file)
from causefs.app.metrics import clustering_accuracy, kmeans_scores, nmi


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


def _csv(path, X, y, header=None, label_at=-1):
    table = np.insert(X, label_at % (X.shape[1] + 1), y, axis=1)
    np.savetxt(path, table, delimiter=",", header=header or "", comments="")
    return path


@pytest.mark.parametrize("header, label_at, label_column", [
    ("a,b,c,d,e,label", -1, None),      # named like labels: found without being asked
    ("a,b,c,d,e,Class", -1, None),
    ("y,a,b,c,d,e", 0, None),
    ("a,b,gnd_col,c,d,e", 2, "gnd_col"),  # by header name
    ("a,b,c,d,e,f", -1, -1),              # by number
    (None, 0, 0),
])
def test_csv_label_column_is_never_a_feature(tmp_path, arrays, header, label_at, label_column):
    X, y = arrays
    path = _csv(tmp_path / "d.csv", X, y, header, label_at)
    data = load_file(path, label_column=label_column)
    assert np.allclose(data.X, X) and np.array_equal(data.y, y)


def test_csv_last_column_of_small_integers_is_named_in_a_warning(tmp_path, arrays):
    X, y = arrays
    path = _csv(tmp_path / "d.csv", X, y)
    with pytest.warns(DatasetWarning, match=r"d.csv: the last column \(column 6, no header\) "
                      r"holds only 3 distinct small integers.*label_column=-1"):
        data = load_file(path)
    assert data.y is None and data.X.shape == (12, 6)  # kept, as asked: a warning only
    named = _csv(tmp_path / "n.csv", X, y, header="a,b,c,d,e,group")
    with pytest.warns(DatasetWarning, match=r"column 6 \('group'\)"):
        load_file(named)


def test_csv_of_real_values_draws_no_warning(tmp_path, arrays):
    X, _ = arrays
    np.savetxt(tmp_path / "x.csv", X, delimiter=",")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_file(tmp_path / "x.csv").X.shape == (12, 5)


@pytest.mark.parametrize("content, label_column, match", [
    ("1,2,0\n3,4,1\n", "label", r"label_column='label' names a column, but the file has no "
                                "header"),
    ("a,b,c\n1,2,0\n3,4,1\n", "label", r"label_column='label' is no column of its header "
                                       r"\['a', 'b', 'c'\]"),
    ("y,label,c\n1,2,0\n3,4,1\n", None, r"columns \['y', 'label'\] are all named like labels"),
    ("a,b,c\n1,2,0\n3,4.5,1\n", "b", r"the label of sample 2 is 4.5, not a class"),
])
def test_csv_label_column_errors_name_the_file(tmp_path, content, label_column, match):
    path = _write(tmp_path / "l.csv", content)
    with pytest.raises(DatasetError, match=match) as error:
        load_file(path, label_column=label_column)
    assert str(path) in str(error.value)


def test_fast_csv_path_reads_what_the_cell_by_cell_path_reads(tmp_path):
    """NumPy's parser (the fast path) and the cell-by-cell reader (the error path) give
    the same table, with a header, blank lines, quotes and spaces."""
    from causefs.datasets.files import _csv_head, _read_csv, _read_csv_cells

    path = _write(tmp_path / "q.csv", 'a,b,c\n\n1.5,"2",3e-3\n-4, 5.25 ,6\n\n')
    header, skip = _csv_head(path)
    table = _read_csv(path, skip, [0, 1, 2])
    np.testing.assert_array_equal(table, [[1.5, 2, 3e-3], [-4, 5.25, 6]])
    np.testing.assert_array_equal(table, _read_csv_cells(path, skip, [0, 1, 2]))
    np.testing.assert_array_equal(_read_csv(path, skip, [0, 2]), table[:, [0, 2]])
    np.testing.assert_array_equal(_read_csv_cells(path, skip, [0, 2]), table[:, [0, 2]])
    assert header == ["a", "b", "c"]


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


def test_missing_benchmark_says_how_to_get_it(tmp_path):
    with pytest.raises(DatasetError, match=f"not found in {tmp_path}: causefs-fetch jaffe .*"
                                           "or put JAFFE.npz there yourself"):
        load_benchmark("jaffe", tmp_path)


def test_without_a_data_directory_the_default_cache_is_read(tmp_path, monkeypatch):
    monkeypatch.delenv("CAUSEFS_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(DatasetError, match=rf"not found in {tmp_path / 'causefs'}: .*"
                                           r"\$CAUSEFS_DATA; default"):
        load_benchmark("jaffe")


def test_unknown_benchmark():
    with pytest.raises(DatasetError, match="available: jaffe, umist, coil20, usps"):
        load_benchmark("lung", ".")


def test_bad_checksum_and_wrong_shape(tmp_path):
    np.savez(tmp_path / "JAFFE.npz", X=np.ones((213, 676)), y=np.arange(213) % 10)
    with pytest.raises(DatasetError, match="holds arrays of sha256 .* expected dca7e996"):
        load_benchmark("jaffe", tmp_path)
    assert load_benchmark("jaffe", tmp_path, verify=False).X.shape == (213, 676)
    np.savez(tmp_path / "JAFFE.npz", X=np.ones((10, 3)), y=np.arange(10))
    with pytest.raises(DatasetError, match=r"shape \(10, 3\), expected \(213, 676\)"):
        load_benchmark("jaffe", tmp_path, verify=False)


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_benchmarks_load_and_verify(data_dir, name):
    data = load_benchmark(name.upper(), data_dir)
    spec = BENCHMARKS[name]
    assert data.X.shape == (spec.n_samples, spec.n_features)
    assert data.n_classes == spec.n_classes


def test_corrupt_copy_of_a_benchmark_is_caught(data_dir, tmp_path):
    copy = tmp_path / "JAFFE.npz"
    content = bytearray((data_dir / "JAFFE.npz").read_bytes())
    content[len(content) // 2] ^= 0xFF  # a flipped byte inside the compressed pixels
    copy.write_bytes(bytes(content))
    with pytest.raises(DatasetError, match="corrupt"):
        load_benchmark("jaffe", tmp_path)


def test_a_recompressed_copy_of_a_benchmark_is_the_same_benchmark(data_dir, tmp_path):
    with np.load(data_dir / "JAFFE.npz") as original:
        np.savez(tmp_path / "JAFFE.npz", X=original["X"], y=original["y"])  # uncompressed
    assert load_benchmark("jaffe", tmp_path).sha256() == load_benchmark("jaffe", data_dir).sha256()


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


# -- every loader failure names the file (and line/column where it applies) -------------

def _write(path, content):
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


@pytest.mark.parametrize("name, content, label_column, match", [
    ("one_row.csv", "1,2,3,4\n", None, r"1 samples x 4 features; a dataset needs at least 2"),
    ("header_only.csv", "a,b,c\n", None, "holds no data rows"),
    ("empty.csv", "", None, "holds no data rows"),
    ("blank.csv", "\n\n  \n", None, "holds no data rows"),
    ("text.csv", "a,b\n1,2\n3,x\n", None, r"line 3, column 2: 'x' is not a number"),
    ("empty_cell.csv", "1,2\n3,\n", None, r"line 2, column 2: empty cell \(missing"),
    ("nan.csv", "1,2\nnan,4\n", None, r"line 2, column 1: 'nan' \(missing and infinite"),
    ("inf.csv", "1,2\n3,-inf\n", None, r"line 2, column 2: '-inf'"),
    ("ragged.csv", "1,2,3\n4,5\n", None, r"line 2: 2 columns, the first data row has 3"),
    ("typo_first_row.csv", "1,2,x\n4,5,6\n7,8,9\n", None, r"line 1, column 3: 'x' is not"),
    ("labels.csv", "1,2,0\n3,4,1\n", 3, r"label_column=3 is out of range for its 3 columns"),
    ("labels_neg.csv", "1,2,0\n3,4,1\n", -4, r"label_column=-4 is out of range"),
    ("labels_only.csv", "0\n1\n", 0, r"2 samples x 0 features"),
    ("binary.csv", b"\xff\xfe\x00\x01", None, "is not a text \\(CSV\\) file"),
    ("random.npz", np.random.default_rng(0).bytes(300), None,
     r"is not an .npz file \(not a zip archive\)"),
    ("pickle.npz", b"\x80\x04\x95" + bytes(40), None, r"is not an .npz file"),
    ("bad.mat", np.random.default_rng(1).bytes(300), None, "is not a readable .mat file"),
    ("empty.mat", b"", None, "is not a readable .mat file"),
    ("labels.npz", None, 0, "label_column applies to .csv files only"),
    ("lab_float.csv", "1,2,0\n3,4,1\n", 1.5, "label_column must be a column number"),
])
def test_bad_files_are_reported_with_their_name(tmp_path, name, content, label_column, match):
    path = tmp_path / name
    if content is None:
        np.savez(path, X=np.ones((3, 2)))
    else:
        _write(path, content)
    with pytest.raises(DatasetError, match=match) as error:
        load_file(path, label_column=label_column)
    assert str(path) in str(error.value)
    assert "allow_pickle" not in str(error.value)


def test_truncated_npz_is_named(tmp_path, arrays):
    np.savez(tmp_path / "full.npz", X=arrays[0], y=arrays[1])
    whole = (tmp_path / "full.npz").read_bytes()
    path = _write(tmp_path / "cut.npz", whole[: len(whole) // 2])
    with pytest.raises(DatasetError, match=rf"{path} is (truncated or corrupt|not an .npz)"):
        load_file(path)


def test_object_arrays_in_npz_are_never_unpickled(tmp_path):
    path = tmp_path / "objects.npz"
    np.savez(path, X=np.array([{"a": 1}, None], dtype=object))
    with pytest.raises(DatasetError, match=rf"^{path}: array 'X' is an object \(pickled\) "
                                           r"array, which is never loaded: store numeric "
                                           r"arrays only$") as error:
        load_file(path)
    assert "allow_pickle" not in str(error.value)


def test_a_sparse_matrix_saved_by_np_savez_is_named_as_such(tmp_path):
    import scipy.sparse as sp

    path = tmp_path / "sparse.npz"
    np.savez(path, X=sp.csr_matrix(np.eye(4)))  # pickled: a 0-d object array
    with pytest.raises(DatasetError, match=rf"^{path}: array 'X' is an object \(pickled\) "
                                           r"array, which is never loaded \(a scipy\.sparse "
                                           r"matrix saved with np\.savez\? save X\.toarray"):
        load_file(path)


@pytest.mark.parametrize("X, match", [
    (np.array([["a", "b"], ["c", "d"]]), r"features 'X' hold <U1 values, not numbers"),
    (np.ones(5), r"features 'X' must be a 2-D array, got shape \(5,\)"),
    (np.array([[1.0, np.nan], [2.0, 3.0]]), r"X, sample 1, feature 2 \(1-based\) is nan"),
    (np.array([[1.0, 2.0], [np.inf, 3.0]]), r"X, sample 2, feature 1 \(1-based\) is inf"),
    (np.ones((0, 3)), r"0 samples x 3 features"),
])
def test_bad_arrays_are_named(tmp_path, X, match):
    path = tmp_path / "bad.npz"
    np.savez(path, X=X)
    with pytest.raises(DatasetError, match=match) as error:
        load_file(path)
    assert str(path) in str(error.value)


def test_a_directory_is_not_a_data_file(tmp_path):
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(DatasetError, match="is a directory"):
        load_file(tmp_path / "d.csv")


def test_one_column_csv_is_n_samples_by_one_feature(tmp_path):
    data = load_file(_write(tmp_path / "col.csv", "1\n2\n3\n"))
    assert data.X.shape == (3, 1)


def test_file_dataset_needs_a_path():
    with pytest.raises(DatasetError, match="needs a path"):
        load_dataset("file")


def test_missing_data_message_suits_the_api_and_the_cli(tmp_path):
    with pytest.raises(DatasetError, match="data_home= in Python, data_dir= on the causefs"):
        load_benchmark("jaffe", tmp_path)


@pytest.mark.parametrize("options, match", [
    ({"n_samples": 1}, "n_samples=1: must be an integer >= 2"),
    ({"n_features": 2.5}, "n_features=2.5: must be an integer >= 1"),
    ({"n_causal": 60, "n_spurious": 50}, "exceeds n_features=100"),
    ({"confounding": 1.5}, "confounding=1.5: must be a real number >= 0 and <= 1"),
    ({"separation": float("nan")}, "separation=nan: must be a real number"),
    ({"seed": -1}, "seed=-1: must be an integer >= 0"),
])
def test_synthetic_options_are_checked(options, match):
    from causefs import InvalidParameterError
    from causefs.datasets import make_causal

    with pytest.raises(InvalidParameterError, match=match):
        make_causal(**options)


def test_content_hash_ignores_the_path_and_sees_every_value(tmp_path, arrays):
    X, y = arrays
    np.savez(tmp_path / "a.npz", X=X, y=y)
    np.savez(tmp_path / "b.npz", X=X, y=y)
    first, second = load_file(tmp_path / "a.npz"), load_file(tmp_path / "b.npz")
    assert first.sha256() == second.sha256()
    X2 = X.copy()
    X2[3, 2] = np.nextafter(X2[3, 2], 2)
    np.savez(tmp_path / "b.npz", X=X2, y=y)
    assert load_file(tmp_path / "b.npz").sha256() != first.sha256()
    np.savez(tmp_path / "b.npz", X=X, y=y[::-1])
    assert load_file(tmp_path / "b.npz").sha256() != first.sha256()


def test_a_byte_order_mark_is_not_a_header(tmp_path):
    data = load_file(_write(tmp_path / "bom.csv", "\ufeff1,2\n3,4\n5,6\n"))
    np.testing.assert_array_equal(data.X, [[1, 2], [3, 4], [5, 6]])


def test_only_the_arrays_a_dataset_uses_are_read_from_an_npz(tmp_path):
    """An unused member (here an object array, which would be refused if it were read)
    is never decompressed: a small .npz with a 3 GB unused member loads at once."""
    path = tmp_path / "extra.npz"
    np.savez(path, X=np.arange(12.0).reshape(6, 2), y=np.arange(6) % 2,
             notes=np.array([{"free": "text"}], dtype=object))
    data = load_file(path)
    assert data.X.shape == (6, 2) and list(data.y) == [0, 1, 0, 1, 0, 1]


def test_an_npz_array_larger_than_its_archive_is_refused_before_allocating(tmp_path):
    import zipfile

    path = tmp_path / "bomb.npz"
    header = np.lib.format.header_data_from_array_1_0(np.zeros((1, 1)))
    header["shape"] = (100_000, 50_000)  # 40 GB declared, 1 MB stored
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("X.npy", "w") as member:
            np.lib.format.write_array_header_1_0(member, header)
            member.write(bytes(1 << 20))
    with pytest.raises(DatasetError, match=r"bomb.npz: array 'X' declares shape \(100000, "
                                           r"50000\) \(40000000000 bytes\) but the archive"):
        load_file(path)


def test_a_csv_error_does_not_echo_the_file(tmp_path):
    """A .csv link to a file that is not data (a system file) is not echoed back."""
    line = "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin"
    path = tmp_path / "linked.csv"
    path.write_text(f"name\n{line}\n")
    with pytest.raises(DatasetError) as error:
        load_file(path)
    assert (f"line 2, column 1: 'daemon:x'... ({len(line)} characters) is not a number"
            in str(error.value))
    assert line[:12] not in str(error.value)


def test_an_empty_path_is_named_as_such(tmp_path):
    with pytest.raises(DatasetError, match="the data file's path is empty"):
        load_file("")


def test_a_missing_relative_path_shows_where_it_was_looked_for(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DatasetError, match=f"no file at {tmp_path / 'data' / 'x.npz'}$"):
        load_file("data/x.npz")
