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


def builtin_schedules() -> list[dict]:
    """The schedules of the packaged Hydra config group (their single source)."""
    folder = resources.files("causefs.conf").joinpath("schedule")
    return [yaml.safe_load(entry.read_text())
            for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if entry.name.endswith(".yaml")]


@hookimpl
def causefs_register_parts(registry):
    for block in BUILTIN_BLOCKS:
        registry.add_block(block)
    for kernel in (LinearKernel, RBFKernel):
        registry.add_kernel(kernel)
    for backend in (GradientProjectionCGBackend, ProjectedGradientBackend, CvxpyBackend):
        registry.add_qp_backend(backend)
    for schedule in builtin_schedules():
        registry.add_schedule(schedule)
