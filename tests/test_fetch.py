"""causefs.datasets.fetch against a local HTTP server on the loopback address serving small
files the tests make: download, checksum, conversion, the cache, and the errors."""

import functools
import hashlib
import http.server
import socket
import threading

import numpy as np
import pytest
import scipy.io

from causefs.datasets import BENCHMARKS, Benchmark, DatasetError, Source, fetch, load_benchmark
from causefs.datasets.base import Dataset
from causefs.datasets.fetch import main


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        self.server.requests.append(self.path)
        super().do_GET()


@pytest.fixture
def server(tmp_path):
    """Serves ``tmp_path / "www"`` on 127.0.0.1; ``server.requests`` lists the paths asked."""
    root = tmp_path / "www"
    root.mkdir()
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
    httpd.requests = []
    httpd.root = root
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _publish(server, monkeypatch, name, arrays, X, y, layout="fea_gnd", digest=None):
    """Put a .mat file holding ``arrays`` on the server and register benchmark ``name``
    whose converted content must be ``(X, y)``."""
    original = server.root / f"{name}.mat"
    scipy.io.savemat(original, arrays)
    content = Dataset(name, np.asarray(X, dtype=float), np.asarray(y, dtype=np.int64), "").sha256()
    source = Source(f"{server.url}/{name}.mat", digest or _sha256(original)[:16], layout,
                    "test data", "none")
    spec = Benchmark(f"{name.upper()}.npz", X.shape[0], X.shape[1], int(np.unique(y).size),
                     "0" * 64, content, None, source)
    monkeypatch.setitem(BENCHMARKS, name, spec)
    return original


@pytest.fixture
def tiny(server, monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 255, size=(12, 5)).astype(np.uint8)
    y = np.repeat([1, 2, 3], 4)
    _publish(server, monkeypatch, "tiny", {"fea": X, "gnd": y[:, None].astype(float)}, X, y)
    return X, y


def test_fetch_downloads_verifies_converts_and_caches(tmp_path, server, tiny):
    X, y = tiny
    path = fetch("tiny", tmp_path / "data")
    assert path == tmp_path / "data" / "TINY.npz"
    with np.load(path) as stored:
        assert stored["X"].dtype == np.uint8 and stored["y"].dtype == np.int64
        np.testing.assert_array_equal(stored["X"], X)
        np.testing.assert_array_equal(stored["y"], y)
    assert load_benchmark("tiny", tmp_path / "data").X.shape == (12, 5)
    assert server.requests == ["/tiny.mat"]
    fetch("tiny", tmp_path / "data")  # verified in place: no second download
    assert server.requests == ["/tiny.mat"]
    fetch("tiny", tmp_path / "data", force=True)
    assert len(server.requests) == 2
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["TINY.npz"]


def test_a_download_with_another_checksum_is_refused_and_not_kept(tmp_path, server,
                                                                  monkeypatch, tiny):
    (server.root / "tiny.mat").write_bytes(b"not the published file")
    with pytest.raises(DatasetError, match=r"download of 'tiny' .* has sha256 [0-9a-f]{64}, "
                                           r"expected [0-9a-f]{16}\.\.\.: not the published"):
        fetch("tiny", tmp_path / "data")
    assert list((tmp_path / "data").iterdir()) == []


def test_converted_arrays_that_differ_are_refused(tmp_path, server, monkeypatch, tiny):
    X, y = tiny
    changed = X.copy()
    changed[0, 0] += 1  # the right checksum of the download, but another content
    _publish(server, monkeypatch, "tiny", {"fea": changed, "gnd": y}, X, y)
    with pytest.raises(DatasetError, match=r"tiny.source holds arrays of sha256 .* expected"):
        fetch("tiny", tmp_path / "data")
    assert list((tmp_path / "data").iterdir()) == []


def test_offline_and_http_errors_say_what_to_do(tmp_path, server, monkeypatch, tiny):
    (server.root / "tiny.mat").unlink()
    with pytest.raises(DatasetError, match=r"could not download 'tiny' .*answered HTTP 404 .*Put "
                                           r"TINY.npz into .* by hand"):
        fetch("tiny", tmp_path / "data")
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    spec = BENCHMARKS["tiny"]
    monkeypatch.setitem(BENCHMARKS, "tiny", Benchmark(
        **{**spec.__dict__, "source": Source(f"http://127.0.0.1:{closed}/tiny.mat",
                                             spec.source.sha256, "fea_gnd", "", "")}))
    with pytest.raises(DatasetError, match=r"could not download 'tiny' .*refused.* \(offline\?\)"):
        fetch("tiny", tmp_path / "data")


def test_a_train_test_source_is_stacked_and_rescaled(tmp_path, server, monkeypatch):
    rng = np.random.default_rng(1)
    train, test = rng.uniform(-1, 1, (8, 4)), rng.uniform(-1, 1, (4, 4))
    onehot = np.eye(3)
    labels_train, labels_test = np.arange(8) % 3, np.arange(4) % 3
    X = (np.vstack([train, test]) + 1) / 2
    y = np.concatenate([labels_train, labels_test]) + 1
    _publish(server, monkeypatch, "split", {"train_X": train, "test_x": test,
                                            "train_Y": onehot[labels_train],
                                            "test_y": onehot[labels_test]}, X, y, "train_test")
    data = load_benchmark("split", fetch("split", tmp_path / "data").parent)
    np.testing.assert_allclose(data.X, X)
    np.testing.assert_array_equal(data.y, y)


def test_the_command_fetches_and_reports_errors_in_one_line(tmp_path, server, tiny, capsys):
    assert main(["tiny", "--data-dir", str(tmp_path / "data")]) == 0
    assert capsys.readouterr().out.strip() == f"tiny: {tmp_path / 'data' / 'TINY.npz'}"
    assert main(["nope", "--data-dir", str(tmp_path / "data")]) == 2
    assert "causefs-fetch: error: unknown benchmark 'nope'" in capsys.readouterr().err


def test_a_missing_benchmark_points_to_fetch(tmp_path):
    with pytest.raises(DatasetError, match=r"not found in .*: causefs-fetch jaffe \(or "
                                           r"causefs.datasets.fetch\('jaffe'\)\) downloads it"):
        load_benchmark("jaffe", tmp_path)


def test_every_benchmark_names_its_source_licence_and_checksums():
    for name, spec in BENCHMARKS.items():
        assert spec.source.url.startswith("https://github.com/"), name
        assert len(spec.source.sha256) == 16 and len(spec.content_sha256) == 64
        assert spec.source.licence and spec.source.reference
