"""Plugin registration: built-ins through the entry point, third-party pieces at run time."""

from importlib.metadata import entry_points

import numpy as np
import pytest

from causefs import CauseFS
from causefs.blocks import Block
from causefs.kernels import Kernel, LinearKernel
from causefs.plugins import (available, get_block, hookimpl, make_qp_backend, register_plugin,
                             unregister_plugin)
from causefs.qp import QPBackend
from causefs.qp.gradient_projection_cg import GradientProjectionCGBackend
from causefs.testing import check_block, check_kernel, check_qp_backend


def test_builtins_register_through_the_entry_point_group():
    names = {ep.name: ep.value for ep in entry_points(group="causefs")}
    assert names.get("builtin") == "causefs.plugins.builtin"


class RecenterEmbedding(Block):
    """A third-party descent block: F -> F Q for the rotation that best aligns F with
    alpha X~ W (orthogonal Procrustes); F'F = I is kept and J cannot rise."""

    name = "recenter_embedding"
    kind = "descent"
    reads = ("X", "mu", "W", "F")
    writes = ("F",)

    def step(self, state):
        B = state.mu[:, None] * (state.X @ state.W)
        U, _, Vt = np.linalg.svd(state.F.T @ B)
        return state.replace(F=state.F @ (U @ Vt))


class ScaledLinearKernel(LinearKernel):
    name = "scaled_linear"


class WarmStartOnly(QPBackend):
    """A third-party backend: GPCG with a tiny budget."""

    name = "short_gpcg"

    def solve(self, qp, x0):
        return GradientProjectionCGBackend(max_iter=3000).solve(qp, x0)


class ThirdParty:
    @hookimpl
    def causefs_blocks(self):
        return [RecenterEmbedding]

    @hookimpl
    def causefs_kernels(self):
        return [ScaledLinearKernel]

    @hookimpl
    def causefs_qp_backends(self):
        return [WarmStartOnly]

    @hookimpl
    def causefs_schedules(self):
        return [{"name": "with_recenter", "init": ["uniform_weights", "initial_confounders",
                                                   "initial_fused_graph", "spectral_embedding",
                                                   "initial_selection"],
                 "loop": ["selection_matrix", "recenter_embedding", "embedding"]}]


@pytest.fixture
def third_party():
    plugin = ThirdParty()
    register_plugin(plugin, name="third_party")
    yield plugin
    unregister_plugin(plugin)


def test_third_party_pieces_are_usable(third_party, blobs):
    assert "recenter_embedding" in available("block")
    assert "scaled_linear" in available("kernel") and "short_gpcg" in available("qp")
    est = CauseFS(n_clusters=3, schedule="with_recenter", kernel="scaled_linear",
                  qp="short_gpcg", max_iter=2, random_state=0).fit(blobs[0])
    assert "recenter_embedding" in {r["block"] for r in est.trace_}


def test_third_party_pieces_pass_the_shipped_property_suite(third_party):
    check_block(get_block("recenter_embedding")(), max_examples=15)
    check_kernel(ScaledLinearKernel(), max_examples=10)
    check_qp_backend(make_qp_backend("short_gpcg"), max_examples=10)


def test_plugins_disappear_when_unregistered(blobs):
    plugin = ThirdParty()
    register_plugin(plugin)
    unregister_plugin(plugin)
    assert "recenter_embedding" not in available("block")


def test_duplicate_names_are_refused():
    class Clash:
        @hookimpl
        def causefs_kernels(self):
            class Linear2(LinearKernel):
                name = "linear"
            return [Linear2]

    plugin = Clash()
    register_plugin(plugin)
    try:
        with pytest.raises(ValueError, match="two plugins provide a kernel named 'linear'"):
            available("kernel")
    finally:
        unregister_plugin(plugin)


def test_unknown_kind():
    with pytest.raises(ValueError, match="allowed: block, kernel, qp, schedule"):
        available("solver")


def test_kernel_options_are_checked():
    from causefs.plugins import make_kernel

    with pytest.raises(ValueError, match="has no option"):
        make_kernel("linear", bandwidth=2)
    assert isinstance(make_kernel("rbf", n_components=10), Kernel)
