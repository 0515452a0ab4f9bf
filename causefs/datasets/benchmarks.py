"""The paper's benchmark datasets, read from a data directory and verified.

The benchmark files are not shipped: they are read from a data directory given by the
``data_home`` argument or the ``CAUSEFS_DATA`` environment variable, and verified
(shape, number of classes, sha256) against the table below, taken from the data
directory's ``MANIFEST.md``.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from .base import Dataset, DatasetError
from .files import load_file

#: environment variable naming the data directory
ENV_VAR = "CAUSEFS_DATA"


@dataclass(frozen=True)
class Benchmark:
    """A benchmark file and what it must contain."""

    file: str
    n_samples: int
    n_features: int
    n_classes: int
    sha256: str
    image_shape: tuple | None = None


#: the paper's datasets available as .npz (MANIFEST.md of the shared data directory)
BENCHMARKS = {
    "jaffe": Benchmark("JAFFE.npz", 213, 676, 10,
                       "39ad05b9a69242f675c778d4c1fc1210e7469daf4aedb879923589ef9c6ceb86", (26, 26)),
    "umist": Benchmark("UMIST.npz", 575, 644, 20,
                       "db425cb00ec78461d28c9945a8205ee771bef496733466ed31757568ddce877a", (28, 23)),
    "coil20": Benchmark("COIL20.npz", 1440, 1024, 20,
                        "7badb296a2780c777fdfca7f8452386ec5062550c88daeb13ae34bf2266f6c95", (32, 32)),
    "usps": Benchmark("USPS.npz", 9298, 256, 10,
                      "b3579398de30b981986c6334789365904b9666650fa52738d57b9a16910fdd10", (16, 16)),
}


def data_home(path: str | os.PathLike | None = None) -> Path:
    """The data directory: ``path``, else ``$CAUSEFS_DATA``."""
    if path is None:
        path = os.environ.get(ENV_VAR)
    if not path:
        raise DatasetError(
            f"no data directory: set the environment variable {ENV_VAR} to the directory "
            "holding the benchmark .npz files, or pass it as data_home= in Python or "
            "data_dir= on the causefs command line"
        )
    if not isinstance(path, (str, os.PathLike)):
        raise DatasetError(f"data directory {path!r}: must be a directory path")
    return Path(path).expanduser().absolute()


def sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load_benchmark(name: str, data_home_path=None, verify: bool = True) -> Dataset:
    """Load a benchmark of :data:`BENCHMARKS` by (case-insensitive) name.

    Raises
    ------
    DatasetError
        Unknown name, missing file (the message says where to put it), or a file whose
        checksum, shape or number of classes differs from the expected ones.
    """
    key = name.lower()
    if key not in BENCHMARKS:
        raise DatasetError(f"unknown benchmark {name!r}; available: {', '.join(BENCHMARKS)}")
    spec = BENCHMARKS[key]
    folder = data_home(data_home_path)
    path = folder / spec.file
    if not path.exists():
        raise DatasetError(f"benchmark {key!r} not found: put {spec.file} in {folder} "
                           f"(the data directory: data_home= in Python, data_dir= on the "
                           f"causefs command line, or ${ENV_VAR})")
    if verify:
        digest = sha256(path)
        if digest != spec.sha256:
            raise DatasetError(f"{path} has sha256 {digest}, expected {spec.sha256}: "
                               "the file is corrupt or a different version")
    data = load_file(path)
    if data.X.shape != (spec.n_samples, spec.n_features):
        raise DatasetError(f"{path} holds X of shape {data.X.shape}, expected "
                           f"{(spec.n_samples, spec.n_features)}")
    if data.n_classes != spec.n_classes:
        raise DatasetError(f"{path} has {data.n_classes} classes, expected {spec.n_classes}")
    return Dataset(name=key, X=data.X, y=data.y, source=str(path), image_shape=spec.image_shape)
