"""The built-in blocks, kernels, QP backends and schedules, registered as a plugin."""

from __future__ import annotations

from importlib import resources

import yaml

from ..blocks import BUILTIN_BLOCKS
from ..kernels import LinearKernel, RBFKernel
from ..qp.cvxpy_backend import CvxpyBackend
from ..qp.gradient_projection_cg import GradientProjectionCGBackend
from ..qp.projected_gradient import ProjectedGradientBackend
from .hookspecs import hookimpl


@hookimpl
def causefs_blocks():
    return list(BUILTIN_BLOCKS)


@hookimpl
def causefs_kernels():
    return [LinearKernel, RBFKernel]


@hookimpl
def causefs_qp_backends():
    return [GradientProjectionCGBackend, ProjectedGradientBackend, CvxpyBackend]


@hookimpl
def causefs_selectors():
    from ..selectors import BUILTIN_SELECTORS

    return list(BUILTIN_SELECTORS)


@hookimpl
def causefs_schedules():
    # the Hydra config group is the single source of the built-in schedules
    folder = resources.files("causefs.conf").joinpath("schedule")
    return [
        yaml.safe_load(entry.read_text())
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".yaml")
    ]
