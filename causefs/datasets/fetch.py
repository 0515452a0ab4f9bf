"""Download a benchmark from its public source into the data directory, verify, convert.

    causefs-fetch jaffe umist            # into $CAUSEFS_DATA, else ~/.cache/causefs
    causefs-fetch --all --data-dir DIR
    python -m causefs.datasets.fetch jaffe

:func:`fetch` downloads the original file of a benchmark (:data:`BENCHMARKS`, each with
its :class:`~causefs.datasets.benchmarks.Source`), checks it against the checksum known
for it, reads its arrays, checks them against the benchmark's content checksum, and
writes ``<NAME>.npz`` (``X`` in the source's dtype, ``y`` as int64) into the data
directory, where :func:`load_benchmark` finds it. Every file is written through a
temporary file and a rename, so an interrupted download leaves nothing behind; a
benchmark already there (and verified) is not downloaded again. Without a network, or
when the source does not answer, the error says so and where to put the file by hand.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

from .base import Dataset, DatasetError
from .benchmarks import BENCHMARKS, check_benchmark, data_home, load_benchmark
from .files import (_as_labels, _check_classes, _FEATURE_KEYS, _LABEL_KEYS, _load_mat, _orient,
                    _pick)

#: seconds to wait for the source to answer
TIMEOUT = 60
#: bytes read at a time while downloading
CHUNK = 1 << 20


@contextlib.contextmanager
def _written(target: Path):
    """A binary file handle whose content becomes ``target`` only when the block ends
    without an error (a temporary file beside it, then an atomic rename)."""
    handle, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                   suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _download(url: str, target: Path) -> str:
    """Write ``url`` to ``target``; returns its sha256."""
    digest = hashlib.sha256()
    with _written(target) as out, urllib.request.urlopen(url, timeout=TIMEOUT) as answer:
        for chunk in iter(lambda: answer.read(CHUNK), b""):
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


def _why(error: Exception) -> str:
    """What went wrong with a download, in words."""
    if isinstance(error, urllib.error.HTTPError):
        return f"the source answered HTTP {error.code} {error.reason} (moved or gone?)"
    return f"{getattr(error, 'reason', None) or error} (offline?)"


def _fea_gnd(contents: dict, path: Path):
    """Features and labels under the usual names (``X``/``fea``, ``y``/``gnd``/``Y``...)."""
    key = _pick(contents, _FEATURE_KEYS, "feature", str(path))
    labels = _pick(contents, _LABEL_KEYS, "label", str(path))
    return np.asarray(contents[key]), _as_labels(contents[labels])


def _train_test(contents: dict, path: Path):
    """A training and a test split (``train_x``/``test_x``, one-hot ``train_y``/
    ``test_y``, any case) stacked training first; labels ``argmax + 1``; values on
    [-1, 1] mapped to [0, 1] by ``(v + 1) / 2`` (MANIFEST.md, USPS)."""
    by_name = {k.lower(): k for k in contents if not k.startswith("__")}
    try:
        X = np.vstack([contents[by_name["train_x"]], contents[by_name["test_x"]]])
        y = np.concatenate([_as_labels(contents[by_name["train_y"]]),
                            _as_labels(contents[by_name["test_y"]])]) + 1
    except KeyError as missing:
        raise DatasetError(f"{path} has no {missing} array; found {sorted(by_name)}") from None
    if X.min() < 0:
        X = (X + 1) / 2
    return X, y


#: how a source file's arrays are read, by :attr:`Source.layout`
LAYOUTS = {"fea_gnd": _fea_gnd, "train_test": _train_test}


def convert(name: str, original: Path) -> tuple:
    """The arrays ``(X, y)`` of benchmark ``name`` read from its ``original`` file and
    checked against :data:`BENCHMARKS` (shape, classes, content checksum)."""
    X, y = LAYOUTS[BENCHMARKS[name].source.layout](_load_mat(original), original)
    X, y = _orient(X, y, str(original))
    _check_classes(y, original)
    y = y.astype(np.int64)
    check_benchmark(name, Dataset(name, np.asarray(X, dtype=float), y, str(original)),
                    original)
    return X, y


def fetch(name: str, data_home_path=None, *, force: bool = False) -> Path:
    """Download benchmark ``name`` from its public source into the data directory.

    Parameters
    ----------
    name : str
        A benchmark of :data:`BENCHMARKS` (``jaffe``, ``umist``, ``coil20``, ``usps``).
    data_home_path : path, optional
        The data directory (default: ``$CAUSEFS_DATA``, else ``~/.cache/causefs``).
    force : bool, default=False
        Download again even if a verified file is there.

    Returns
    -------
    Path
        The verified ``<NAME>.npz``.

    Raises
    ------
    DatasetError
        Unknown name; the source cannot be reached (offline) or answers with an error;
        the download's checksum, or the converted arrays' checksum, differs from the
        expected one. Nothing is left in the data directory then.
    """
    key = name.lower()
    if key not in BENCHMARKS:
        raise DatasetError(f"unknown benchmark {name!r}; available: {', '.join(BENCHMARKS)}")
    spec, folder = BENCHMARKS[key], data_home(data_home_path)
    target = folder / spec.file
    if target.exists() and not force:
        load_benchmark(key, folder)  # verified, or a DatasetError naming the file
        return target
    _check_writable(folder)
    original = folder / f".{key}.source"
    try:
        try:
            digest = _download(spec.source.url, original)
        except (urllib.error.URLError, OSError) as error:
            raise DatasetError(
                f"could not download {key!r} from {spec.source.url}: {_why(error)}. Put "
                f"{spec.file} into {folder} by hand (its arrays' sha256 must be "
                f"{spec.content_sha256})") from None
        if not digest.startswith(spec.source.sha256):
            raise DatasetError(f"the download of {key!r} from {spec.source.url} has sha256 "
                               f"{digest}, expected {spec.source.sha256}...: not the "
                               "published file")
        X, y = convert(key, original)
    finally:
        if original.exists():
            original.unlink()
    with _written(target) as out:
        np.savez_compressed(out, X=X, y=y)
    return target


def _check_writable(folder: Path) -> None:
    """Create ``folder`` and a file in it before downloading, or a :class:`DatasetError`
    naming it and why (a file of that name, no permission): not a download error."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        what = "is a file, not a directory" if folder.is_file() else \
            f"is not writable ({error.strerror or error})"
        raise DatasetError(f"data directory {folder} {what}: choose another with --data-dir "
                           "(or $CAUSEFS_DATA)") from None


def main(argv=None) -> int:
    """``causefs-fetch``: download benchmarks by name."""
    parser = argparse.ArgumentParser(prog="causefs-fetch", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"benchmarks to fetch: {', '.join(BENCHMARKS)}")
    parser.add_argument("--all", action="store_true", help="every benchmark")
    parser.add_argument("--data-dir", default=None,
                        help="data directory (default $CAUSEFS_DATA, else ~/.cache/causefs)")
    parser.add_argument("--force", action="store_true", help="download even if present")
    args = parser.parse_args(argv)
    names = list(BENCHMARKS) if args.all else args.names
    if not names:
        parser.error("name a benchmark, or --all")
    for name in names:
        try:
            path = fetch(name, args.data_dir, force=args.force)
        except DatasetError as error:
            print(f"{parser.prog}: error: {error}", file=sys.stderr)
            return 2
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
