"""Optional dependencies: import one where it is needed, or say which extra installs it.

The core install is what a fit needs. The rest comes with an extra of the ``causefs``
distribution (``pip install "causefs[cli]"``); :data:`EXTRAS` lists them, and a feature
whose dependency is missing raises :class:`MissingDependencyError` naming the extra.
"""

from __future__ import annotations

import importlib

#: extra -> (the distributions it installs, what needs them)
EXTRAS = {
    "cli": ("hydra-core, hydra-joblib-launcher, matplotlib",
            "the causefs command and the figures of causefs-report"),
    "faiss": ("faiss-cpu", "the HNSW neighbour search of large fits (beyond the sizes "
              "causefs.numerics.neighbors searches exactly) with neighbor_algorithm='auto' "
              "or 'approximate'"),
    "cvxpy": ("cvxpy", "qp='cvxpy', the dense reference backend of the sample-weight QP"),
    "mat73": ("h5py", "MATLAB v7.3 (HDF5) .mat files"),
    "cluster": ("hydra-submitit-launcher", "sweeps on a cluster (hydra/launcher=submitit_*)"),
}


class MissingDependencyError(ImportError):
    """An optional dependency a feature needs is not installed (the message names the
    extra that installs it)."""


def require(module: str, extra: str, feature: str):
    """Import and return ``module``, or raise :class:`MissingDependencyError` saying that
    ``feature`` needs it and that ``pip install "causefs[<extra>]"`` installs it.

    Only a missing module is reported so; a module that is installed but fails to import
    raises its own error.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is None or module.split(".")[0] != error.name.split(".")[0]:
            raise
        raise MissingDependencyError(
            f"{feature} needs {module!r}, which is not installed; the {extra!r} extra "
            f"installs it: pip install \"causefs[{extra}]\"") from None
