"""The paper's benchmark datasets, read from a data directory and verified.

The benchmark files are not shipped. They are read from a data directory: the
``data_home`` argument, else the ``CAUSEFS_DATA`` environment variable, else
:func:`default_data_home` (``~/.cache/causefs``), where :func:`causefs.datasets.fetch`
puts the files it downloads from their public sources. A file is verified by its content
(shape, number of classes, and the sha256 of its arrays, :meth:`Dataset.sha256`), so a
copy written with another compression is accepted and any other change is refused. The
table below holds, for every benchmark, what the file must contain, the sha256 of the
file in the shared data directory (``MANIFEST.md``) and where it comes from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .base import Dataset, DatasetError
from .files import load_file

#: environment variable naming the data directory
ENV_VAR = "CAUSEFS_DATA"


@dataclass(frozen=True)
class Source:
    """Where a benchmark file comes from and how it becomes the benchmark's arrays.

    ``url`` is the original file at a fixed commit of a public repository; ``sha256``
    the checksum of that file as far as it is known (MANIFEST.md lists the first 16 hex
    digits of each, the rest was never recorded: a download is checked against what is
    known); ``layout`` names how its arrays are read (:mod:`causefs.datasets.fetch`).
    """

    url: str
    sha256: str
    layout: str
    licence: str
    reference: str


@dataclass(frozen=True)
class Benchmark:
    """A benchmark file, what it must contain and where it comes from."""

    file: str
    n_samples: int
    n_features: int
    n_classes: int
    #: sha256 of the .npz file in the shared data directory (MANIFEST.md)
    sha256: str
    #: sha256 of its content (:meth:`Dataset.sha256`: X as float64, y as int64): verified
    content_sha256: str
    image_shape: tuple | None = None
    source: Source | None = None


_GITHUB = "https://github.com/{}/raw/{}/{}"

#: the paper's datasets available as .npz (MANIFEST.md of the shared data directory)
BENCHMARKS = {
    "jaffe": Benchmark(
        "JAFFE.npz", 213, 676, 10,
        "39ad05b9a69242f675c778d4c1fc1210e7469daf4aedb879923589ef9c6ceb86",
        "dca7e9962d4f3755d3e8297003728e568f2dfa5289731d6b617c57d079b8f2d7", (26, 26),
        Source(_GITHUB.format(
            "Zongxin-Shen/Causally-Aware-Unsupervised-Feature-Selection-Learning-CAUSE-FS-",
            "b20fb5ee54e51f7cacd3196f81ab0768ebfbab50", "Datasets/jaffe.mat"),
            "301a2cb13632d4f9", "fea_gnd",
            "JAFFE terms: non-commercial scientific research, citing Lyons et al. (1998); "
            "the copy is the one the CAUSE-FS authors ship",
            "M. J. Lyons, S. Akamatsu, M. Kamachi, J. Gyoba, Coding facial expressions "
            "with Gabor wavelets, IEEE FG 1998")),
    "umist": Benchmark(
        "UMIST.npz", 575, 644, 20,
        "db425cb00ec78461d28c9945a8205ee771bef496733466ed31757568ddce877a",
        "b42d8b601c3de5fb0a1ff037a62c2c8f6ad0717448689e808a77bc54f0565458", (28, 23),
        Source(_GITHUB.format("anony259106/icml2024", "b3e3f2e6382b", "data/umist.mat"),
               "b89f79abb84d5825", "fea_gnd",
               "no licence stated by the repository; the Sheffield (UMIST) face database "
               "is distributed for research",
               "D. B. Graham, N. M. Allinson, Characterising virtual eigensignatures for "
               "general purpose face recognition, 1998")),
    "coil20": Benchmark(
        "COIL20.npz", 1440, 1024, 20,
        "7badb296a2780c777fdfca7f8452386ec5062550c88daeb13ae34bf2266f6c95",
        "6b4df4fcc19226cc1b1d1dd6d263b99d2d2359516121c0a55552aa4266527a87", (32, 32),
        Source(_GITHUB.format("jundongl/scikit-feature", "48cffad4e88f",
                              "skfeature/data/COIL20.mat"),
               "4595ebdda07f47b0", "fea_gnd",
               "COIL-20 is available for research purposes (Columbia University); the "
               "file is scikit-feature's",
               "S. A. Nene, S. K. Nayar, H. Murase, Columbia Object Image Library "
               "(COIL-20), Technical Report CUCS-005-96, 1996")),
    "usps": Benchmark(
        "USPS.npz", 9298, 256, 10,
        "b3579398de30b981986c6334789365904b9666650fa52738d57b9a16910fdd10",
        "aa18248234cff1397d99cb49bf819574bfa871c63ec0664bc7acfac20ecd271b", (16, 16),
        Source(_GITHUB.format("SK4772/GReBLS", "499c4188c8552e67515b5f1348f5cfe3dbba01ea",
                              "data/usps.mat"),
               "f895ed4a60217c5e", "train_test",
               "no licence stated by the repository; USPS is distributed for research",
               "J. J. Hull, A database for handwritten text recognition research, IEEE "
               "TPAMI 16(5), 1994")),
}


def default_data_home() -> Path:
    """Where fetched benchmarks go when no data directory is given:
    ``$XDG_CACHE_HOME/causefs`` (``~/.cache/causefs``)."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache).expanduser() / "causefs"


def data_home(path: str | os.PathLike | None = None) -> Path:
    """The data directory: ``path``, else ``$CAUSEFS_DATA``, else
    :func:`default_data_home`."""
    if path is None:
        path = os.environ.get(ENV_VAR) or default_data_home()
    if not path:
        raise DatasetError(
            f"no data directory: set the environment variable {ENV_VAR} to the directory "
            "holding the benchmark .npz files, or pass it as data_home= in Python or "
            "data_dir= on the causefs command line"
        )
    if not isinstance(path, (str, os.PathLike)):
        raise DatasetError(f"data directory {path!r}: must be a directory path")
    return Path(path).expanduser().absolute()


def load_benchmark(name: str, data_home_path=None, verify: bool = True) -> Dataset:
    """Load a benchmark of :data:`BENCHMARKS` by (case-insensitive) name.

    Raises
    ------
    DatasetError
        Unknown name, missing file (the message says how to fetch it and where to put
        it), or a file whose content (checksum of its arrays), shape or number of
        classes differs from the expected ones.
    """
    key = name.lower()
    if key not in BENCHMARKS:
        raise DatasetError(f"unknown benchmark {name!r}; available: {', '.join(BENCHMARKS)}")
    spec = BENCHMARKS[key]
    folder = data_home(data_home_path)
    path = folder / spec.file
    if not path.exists():
        raise DatasetError(
            f"benchmark {key!r} not found in {folder}: causefs-fetch {key} (or "
            f"causefs.datasets.fetch({key!r})) downloads it from its public source into the "
            f"data directory, or put {spec.file} there yourself (the data directory: "
            f"data_home= in Python, data_dir= on the causefs command line, or ${ENV_VAR}; "
            f"default {default_data_home()})")
    data = load_file(path)
    return check_benchmark(key, data, path, verify)


def check_benchmark(key: str, data: Dataset, path, verify: bool = True) -> Dataset:
    """``data`` as benchmark ``key`` if it holds what :data:`BENCHMARKS` says, else a
    :class:`DatasetError` naming ``path`` and the difference."""
    spec = BENCHMARKS[key]
    if data.X.shape != (spec.n_samples, spec.n_features):
        raise DatasetError(f"{path} holds X of shape {data.X.shape}, expected "
                           f"{(spec.n_samples, spec.n_features)}")
    if data.n_classes != spec.n_classes:
        raise DatasetError(f"{path} has {data.n_classes} classes, expected {spec.n_classes}")
    if verify:
        digest = data.sha256()
        if digest != spec.content_sha256:
            raise DatasetError(f"{path} holds arrays of sha256 {digest}, expected "
                               f"{spec.content_sha256}: the file is corrupt or a different "
                               "version")
    return Dataset(name=key, X=data.X, y=data.y, source=str(path),
                   image_shape=spec.image_shape)
