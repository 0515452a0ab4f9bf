"""What produced a result: the code's identity and the plugins installed beside it.

A result is only as reproducible as the code that made it is known. The version number
alone does not say it (it stays the same between releases, and an editable install runs
whatever is in the working tree), so the identity of the code is the version *and* a
hash of the installed package's source files (:func:`source_sha256`), which changes with
any edit, and every installed plugin distribution with its version
(:func:`plugin_distributions`): a plugin can add or replace what a run uses. The
results store keys every job by this identity (:func:`code_identity`), so a sweep
resumed after an update computes its jobs again instead of reusing results of the old
code. The VCS revision of a source checkout (:func:`vcs_revision`) is recorded beside
it, for a reader; it does not see uncommitted edits, so it is not part of the key.
"""

from __future__ import annotations

import functools
import hashlib
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from .._version import __version__

#: the files of the package that are its code and configuration (what the hash covers)
SOURCE_SUFFIXES = (".py", ".yaml")
#: distributions whose versions a result records (``versions``)
LIBRARIES = ("numpy", "scipy", "scikit-learn", "hydra-core", "cvxpy", "faiss-cpu")


def package_root() -> Path:
    """The directory of the installed ``causefs`` package."""
    return Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=None)
def source_sha256(root: Path | None = None) -> str:
    """sha256 over the package's source files: their paths (relative, sorted) and bytes.

    Byte-compiled caches and other files are left out, so the hash is the same for a
    source checkout, an editable install and a wheel of the same code.
    """
    root = package_root() if root is None else Path(root)
    digest = hashlib.sha256()
    files = sorted(p for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file()
                   and "__pycache__" not in p.parts)
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.lru_cache(maxsize=None)
def vcs_revision(root: Path | None = None) -> str | None:
    """The git commit of a source checkout the package runs from (``+dirty`` when its
    files differ from that commit), or None for an installed copy or without git."""
    root = package_root() if root is None else Path(root)

    def git(*args) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()

    try:
        top = Path(git("rev-parse", "--show-toplevel")).resolve()
        if root.resolve().parent != top:  # the package is not this checkout's own
            return None
        revision = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", str(root))
    except (OSError, subprocess.SubprocessError):
        return None
    return revision + ("+dirty" if dirty else "")


def plugin_distributions() -> dict:
    """``{distribution: version}`` of every plugin loaded from an installed entry point
    (built-ins and plugins registered at run time come with causefs itself)."""
    from ..plugins import installed_distributions

    return installed_distributions()


def code_identity() -> dict:
    """What the results store keys a job by: the version, the source hash and the
    installed plugins."""
    return {"version": __version__, "source_sha256": source_sha256(),
            "plugins": plugin_distributions()}


def versions() -> dict:
    """What a result records of the environment beside the code's identity (not keyed):
    causefs's version and VCS revision, Python's version and those of the libraries in
    :data:`LIBRARIES` (None where not installed)."""
    out = {"causefs": __version__, "vcs_revision": vcs_revision(),
           "python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def version_text() -> str:
    """``causefs --version``: the code's identity and the installed plugins."""
    revision = vcs_revision()
    lines = [f"causefs {__version__} (source sha256 {source_sha256()[:16]}"
             + (f", git {revision}" if revision else "") + ")"]
    plugins = plugin_distributions()
    lines += [f"plugin {name} {version}" for name, version in sorted(plugins.items())]
    if not plugins:
        lines.append("no plugins installed")
    return "\n".join(lines)
