"""A results store for sweeps: one self-describing JSON file per job, written atomically.

A job's key is a hash of everything that determines its result (the data's content,
the code's identity: its version, a hash of its source and the installed plugins
(:mod:`causefs.app.provenance`), the method and its parameters, the seeds, the
evaluation settings); the caller builds that specification (:func:`causefs.app.cli.plan`).
An entry holds its key, :data:`SCHEMA_VERSION` and the specification it answers, and is
checked against them on every read: an entry that is not valid JSON, lacks a field, or
answers another job is never trusted. :meth:`ResultStore.lookup` warns (:class:`StoreWarning`, naming the
file), moves it into ``invalid/`` and reports a miss, so the job is computed again.

A job writes ``<key>.json`` through a temporary file and an atomic rename, so a killed
job leaves no partial result, two jobs never interleave, and a sweep re-run skips every
job with a valid entry: an interrupted sweep resumes with nothing lost or duplicated.
Temporary files a killed write left behind are removed when the store is opened (those
older than :data:`STALE_TEMP_SECONDS`, so a concurrent write is never disturbed).
Files are created with the user's umask, so a store on a shared file system is as
readable as the user's other files.

The store opens only regular files under an entry's name, never blocking and never
following a link: a FIFO, a directory, a link (a loop included) or an unreadable file
there is an invalid entry, moved aside or skipped with a warning like any other.

Concurrent sweeps on one store compute every job once: a job that is not stored takes
its claim, ``<key>.claim``, an exclusive lock (``fcntl.lockf``) held while it computes;
a job whose claim another live process holds is skipped (:meth:`ResultStore.claim`).
The operating system releases the lock of a process that dies, so a crashed job's
claim is taken over by the next run (the file left behind is reused, then removed).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import socket
import stat
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: version of the entry layout (``result.json``'s, docs/guide/results.md); an entry of another
#: version is recomputed
SCHEMA_VERSION = 4

#: fields every entry has (besides its key, schema and job)
REQUIRED_FIELDS = ("scores", "features_best_first", "selected_features", "metrics")

#: a temporary file this old (seconds) belongs to a killed write: removed on open
STALE_TEMP_SECONDS = 600

#: subdirectory that invalid entries are moved into
INVALID_DIR = "invalid"

#: what a file of each type under an entry's name is called in a warning
_FILE_TYPES = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
               (stat.S_ISLNK, "a symbolic link"), (stat.S_ISSOCK, "a socket"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


class StoreWarning(UserWarning):
    """An invalid store entry was found (and, for a job's lookup, moved aside)."""


class InvalidEntryError(ValueError):
    """A store file that is not a valid entry for its key."""


class StoreError(OSError):
    """A store directory that cannot be used or holds no results."""


@dataclass(frozen=True)
class Claim:
    """Whether this process holds a job's claim, and who does (:meth:`ResultStore.claim`)."""

    held: bool
    holder: str


def _default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def canonical(value) -> str:
    """Canonical JSON of ``value`` (sorted keys, no whitespace)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_default)


def job_key(spec: dict) -> str:
    """A stable 16-hex-digit key of a job specification."""
    return hashlib.sha256(canonical(spec).encode()).hexdigest()[:16]


def _umask() -> int:
    # the only portable way to read the umask is to set it; restored at once
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_json_atomic(path, payload) -> None:
    """Write JSON to a temporary file in the same directory, then rename it into place.

    The file gets the permissions of a file the user creates (``0o666`` less the umask),
    not ``mkstemp``'s owner-only ``0o600``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(handle, 0o666 & ~_umask())
        with os.fdopen(handle, "w") as out:
            json.dump(payload, out, indent=1, default=_default)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_regular(path: Path) -> bytes:
    """The bytes of ``path`` if it is a regular file; :class:`InvalidEntryError` saying
    what it is otherwise. Never blocks (a FIFO) and never follows a link."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError as error:
        kind = ("a symbolic link" if error.errno == errno.ELOOP
                else f"unreadable ({error.strerror})")
        raise InvalidEntryError(f"{path}: {kind}, not an entry") from None
    mode = os.fstat(handle).st_mode
    if not stat.S_ISREG(mode):
        os.close(handle)
        kind = next((name for test, name in _FILE_TYPES if test(mode)), "not a file")
        raise InvalidEntryError(f"{path}: {kind}, not an entry")
    with os.fdopen(handle, "rb") as file:
        return file.read()


def validate_entry(entry, key: str, spec: dict | None = None) -> dict:
    """``entry`` if it is a valid entry of ``key`` (and answers ``spec``), else raise
    :class:`InvalidEntryError` saying why."""
    if not isinstance(entry, dict):
        raise InvalidEntryError(f"not a JSON object but {type(entry).__name__}")
    if entry.get("schema") != SCHEMA_VERSION:
        raise InvalidEntryError(f"schema {entry.get('schema')!r}, expected {SCHEMA_VERSION}")
    if entry.get("key") != key:
        raise InvalidEntryError(f"holds key {entry.get('key')!r}")
    job = entry.get("job")
    if not isinstance(job, dict) or job_key(job) != key:
        raise InvalidEntryError("its job specification does not hash to its key")
    if spec is not None and canonical(job) != canonical(spec):
        raise InvalidEntryError("answers another job")
    missing = [name for name in REQUIRED_FIELDS if name not in entry]
    if missing:
        raise InvalidEntryError(f"missing field(s) {', '.join(missing)}")
    return entry


class ResultStore:
    """Directory of job results keyed by :func:`job_key`.

    Parameters
    ----------
    root : path
        The directory (created on the first :meth:`put`).
    """

    def __init__(self, root):
        self.root = Path(root).expanduser()
        self.remove_stale_temporaries()

    def path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def check_writable(self) -> None:
        """Create the directory and a file in it, or raise :class:`StoreError`."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=self.root):
                pass
        except OSError as error:
            raise StoreError(f"results store {self.root} is not writable: "
                             f"{error.strerror or error}") from None

    def remove_stale_temporaries(self, age: float = STALE_TEMP_SECONDS) -> list:
        """Remove temporary files older than ``age`` seconds; returns their paths."""
        removed = []
        now = time.time()
        for tmp in self.root.glob(".*.json.*.tmp") if self.root.is_dir() else ():
            try:
                status = tmp.lstat()
                if stat.S_ISREG(status.st_mode) and now - status.st_mtime > age:
                    tmp.unlink()
                    removed.append(tmp)
            except OSError:  # removed meanwhile by another process
                continue
        return removed

    def read(self, key: str, spec: dict | None = None) -> dict:
        """The valid entry of ``key``; :class:`InvalidEntryError` (naming the file) if it
        is unreadable, invalid or not a regular file, ``FileNotFoundError`` if there is
        none."""
        path = self.path(key)
        content = read_regular(path)
        try:
            return validate_entry(json.loads(content), key, spec)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise InvalidEntryError(f"{path}: not valid JSON ({error})") from None
        except InvalidEntryError as error:
            raise InvalidEntryError(f"{path}: {error}") from None

    def lookup(self, key: str, spec: dict | None = None) -> dict | None:
        """The valid entry of ``key``, or None. An invalid entry is moved into
        ``invalid/`` with a :class:`StoreWarning` naming both places."""
        try:
            return self.read(key, spec)
        except FileNotFoundError:
            return None
        except InvalidEntryError as error:
            try:
                moved = f"moved to {self.move_aside(key)}"
            except FileNotFoundError:  # another job of the sweep moved or replaced it
                moved = "moved by another process"
            warnings.warn(f"invalid store entry {error}; {moved}, recomputing",
                          StoreWarning, stacklevel=2)
            return None

    def move_aside(self, key: str, suffix: str = ".json") -> Path:
        """Move ``<key><suffix>`` (whatever it is) into ``invalid/``, never overwriting;
        returns its new path. Where ``invalid/`` cannot be made (a file of that name),
        it is renamed in place to a name no lookup reads."""
        folder = self.root / INVALID_DIR
        try:
            folder.mkdir(exist_ok=True)
        except OSError:
            folder = self.root
        if not folder.is_dir() or folder.is_symlink():
            folder = self.root
        stamp = time.strftime("%Y%m%dT%H%M%S")
        target = folder / f"{key}{suffix}.{stamp}.invalid"
        n = 1
        while os.path.lexists(target):
            target = folder / f"{key}{suffix}.{stamp}.{n}.invalid"
            n += 1
        os.replace(self.root / f"{key}{suffix}", target)
        return target

    @contextlib.contextmanager
    def claim(self, key: str):
        """The claim of job ``key`` while it computes (a :class:`Claim`).

        ``claim.held`` is False when another live process holds it (the job is being
        computed there; ``claim.holder`` says where). A claim left by a process that died
        is free again. On a file system without locks, or with a claim file this process
        cannot open, the claim is held with a :class:`StoreWarning` (concurrent sweeps
        may then compute a job twice).
        """
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / f"{key}.claim"
        try:
            handle = self._open_claim(key, path)
        except PermissionError as error:  # a claim file this process may not open
            warnings.warn(f"results store {self.root} cannot open {path.name} "
                          f"({error.strerror}): the job runs unclaimed, and concurrent "
                          "sweeps may compute it twice", StoreWarning, stacklevel=3)
            yield Claim(True, "this process")
            return
        try:
            try:
                fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except (BlockingIOError, PermissionError):  # EAGAIN / EACCES: held elsewhere
                holder = os.pread(handle, 200, 0).decode(errors="replace").strip()
                yield Claim(False, holder or "another process")
                return
            except OSError as error:  # no lock support (some network file systems)
                warnings.warn(f"results store {self.root} cannot lock {path.name} "
                              f"({error.strerror}): concurrent sweeps may compute this job "
                              "twice", StoreWarning, stacklevel=3)
            os.ftruncate(handle, 0)
            os.pwrite(handle, f"pid {os.getpid()} on {socket.gethostname()} since "
                              f"{time.strftime('%Y-%m-%d %H:%M:%S')}".encode(), 0)
            try:
                yield Claim(True, "this process")
            finally:  # done, or failed in this process: no claim is left behind
                with contextlib.suppress(OSError):  # a folder made read-only meanwhile
                    path.unlink(missing_ok=True)
        finally:
            os.close(handle)  # releases the lock

    def _open_claim(self, key: str, path: Path) -> int:
        """The claim file's descriptor; anything but a regular file of one link there is
        moved aside first: a claim is truncated and written, and a hard link would make
        that write land in the file it links to."""
        for _ in range(2):  # moved aside, then made anew
            if os.path.lexists(path):
                info = os.lstat(path)
                if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
                    what = "not a regular file" if not stat.S_ISREG(info.st_mode) else \
                        f"a hard link to another file ({info.st_nlink} links)"
                    moved = self.move_aside(key, ".claim")
                    warnings.warn(f"{path}: {what}, moved to {moved}", StoreWarning,
                                  stacklevel=4)
            handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW,
                             0o666)
            if os.fstat(handle).st_nlink <= 1:  # linked between the check and the open
                return handle
            os.close(handle)
        raise PermissionError(errno.EPERM, "a hard link to another file, made again "
                              "after it was moved aside", str(path))

    def put(self, key: str, result: dict, spec: dict | None = None) -> Path:
        """Store ``result`` under ``key`` with the schema version and the job ``spec``
        (default ``result["job"]``)."""
        job = result.get("job") if spec is None else spec
        if not isinstance(job, dict) or job_key(job) != key:
            raise ValueError(f"key {key!r} is not the key of the result's job specification")
        path = self.path(key)
        if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):
            # a rename cannot replace a directory (and must not replace a link's target)
            warnings.warn(f"{path}: not a regular file, moved to {self.move_aside(key)}",
                          StoreWarning, stacklevel=2)
        write_json_atomic(path, {**result, "schema": SCHEMA_VERSION, "key": key, "job": job})
        return path

    def entries(self):
        """Every valid entry; an invalid file is skipped with a :class:`StoreWarning`."""
        for path in sorted(self.root.glob("*.json")):
            try:
                yield self.read(path.stem)
            except (InvalidEntryError, OSError) as error:
                warnings.warn(f"skipped invalid store entry {error}", StoreWarning,
                              stacklevel=2)

    def __iter__(self):
        return self.entries()
