"""The built-in fields, blocks, terms, kernels, QP backends, stopping rules and schedules,
registered as a plugin (first, ``tryfirst``: a clash names the built-in piece first)."""

from __future__ import annotations

from importlib import resources

import yaml

from ..blocks import BUILTIN_BLOCKS
from ..core.convergence import ObjectiveChange
from ..kernels import LinearKernel, RBFKernel
from ..model.stopping import SelectionStable
from ..model.variables import FIELDS
from ..qp.cvxpy_backend import CvxpyBackend
from ..qp.gradient_projection_cg import GradientProjectionCGBackend
from ..qp.projected_gradient import ProjectedGradientBackend
from ..terms import BUILTIN_TERMS
from .hookspecs import hookimpl


def builtin_schedules() -> list[dict]:
    """The schedules of the packaged Hydra config group (their single source)."""
    folder = resources.files("causefs.conf").joinpath("schedule")
    return [yaml.safe_load(entry.read_text())
            for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if entry.name.endswith(".yaml")]


@hookimpl(tryfirst=True)
def causefs_register_fields(registry):
    for field in FIELDS:
        registry.add_field(field)


@hookimpl(tryfirst=True)
def causefs_register_blocks(registry):
    for block in BUILTIN_BLOCKS:
        registry.add_block(block)


@hookimpl(tryfirst=True)
def causefs_register_terms(registry):
    for term in BUILTIN_TERMS:
        registry.add_term(term)


@hookimpl(tryfirst=True)
def causefs_register_kernels(registry):
    for kernel in (LinearKernel, RBFKernel):
        registry.add_kernel(kernel)


@hookimpl(tryfirst=True)
def causefs_register_qp_backends(registry):
    for backend in (GradientProjectionCGBackend, ProjectedGradientBackend, CvxpyBackend):
        registry.add_qp_backend(backend)


@hookimpl(tryfirst=True)
def causefs_register_stopping_rules(registry):
    for rule in (ObjectiveChange, SelectionStable):
        registry.add_stopping_rule(rule)


@hookimpl(tryfirst=True)
def causefs_register_schedules(registry):
    for schedule in builtin_schedules():
        registry.add_schedule(schedule)
