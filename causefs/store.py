"""A results store for sweeps: one JSON file per job, written atomically.

A job's key is a hash of everything that determines its result (dataset, method and
its parameters, seed, evaluation settings). A job writes ``<key>.json`` through a
temporary file and an atomic rename, so a killed job leaves no partial result, two
jobs never interleave, and a sweep re-run skips every job whose file exists: an
interrupted sweep resumes with nothing lost or duplicated. The directory may be on a
shared file system for sweeps that span machines.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

ENV_VAR = "CAUSEFS_RESULTS"


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


def write_json_atomic(path, payload) -> None:
    """Write JSON to a temporary file in the same directory, then rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(payload, out, indent=1, default=_default)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class ResultStore:
    """Directory of job results keyed by :func:`job_key`."""

    def __init__(self, root):
        self.root = Path(root).expanduser()

    def path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def has(self, key: str) -> bool:
        return self.path(key).exists()

    def get(self, key: str) -> dict:
        return json.loads(self.path(key).read_text())

    def put(self, key: str, result: dict) -> Path:
        path = self.path(key)
        write_json_atomic(path, {**result, "key": key})
        return path

    def __iter__(self):
        for path in sorted(self.root.glob("*.json")):
            yield json.loads(path.read_text())

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*.json"))
