"""Plugin registration: the layered registry, entry points, third-party pieces at run time."""

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pluggy
import pytest

from causefs import CauseFS
from causefs.blocks import Block
from causefs.kernels import Kernel, LinearKernel
from causefs.plugins import (DISABLE_AUTOLOAD, PluginError, available, get_block, hookimpl,
                             make_kernel, make_qp_backend, register_plugin, unregister_plugin)
from causefs.selectors import AllFeatures, available_selectors, make_selector
from causefs.qp import QPBackend
from causefs.qp.gradient_projection_cg import GradientProjectionCGBackend
from causefs.testing import check_block, check_kernel, check_qp_backend


class RecenterEmbedding(Block):
    """A third-party descent block: flip the sign of every column of F that points away
    from its column of X~ W; F'F = I and the graph terms are kept, the regression cannot
    rise."""

    name = "recenter_embedding"
    kind = "descent"
    reads = ("X", "mu", "W", "F")
    writes = ("F",)

    def step(self, state):
        alignment = np.einsum("ic,ic->c", state.F, state.mu[:, None] * (state.X @ state.W))
        return state.replace(F=state.F * np.where(alignment < 0, -1.0, 1.0))


class ScaledLinearKernel(LinearKernel):
    name = "scaled_linear"


class WarmStartOnly(QPBackend):
    """A third-party backend: GPCG with a tiny budget."""

    name = "short_gpcg"

    def solve(self, qp, x0):
        return GradientProjectionCGBackend(max_iter=3000).solve(qp, x0)


class FirstFeatures(AllFeatures):
    """A third-party selector: earlier features score higher."""

    name = "first_features"
    select_all = False

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0):
        return -np.arange(X.shape[1], dtype=float)


class ThirdParty:
    @hookimpl
    def causefs_register_parts(self, registry):
        registry.add_block(RecenterEmbedding)
        registry.add_kernel(ScaledLinearKernel)
        registry.add_qp_backend(WarmStartOnly)
        registry.add_schedule({"name": "with_recenter",
                               "init": ["uniform_weights", "initial_confounders",
                                        "initial_fused_graph", "spectral_embedding",
                                        "initial_selection"],
                               "loop": ["selection_matrix", "recenter_embedding", "embedding"]})

    @hookimpl
    def causefs_register_selectors(self, registry):
        registry.add_selector(FirstFeatures)


@pytest.fixture
def third_party():
    plugin = ThirdParty()
    register_plugin(plugin, name="third_party")
    yield plugin
    unregister_plugin(plugin)


def test_third_party_pieces_are_usable(third_party, blobs):
    assert "recenter_embedding" in available("block")
    assert "scaled_linear" in available("kernel") and "short_gpcg" in available("qp")
    assert "first_features" in available_selectors()
    assert list(make_selector("first_features").ranking(blobs[0], n_clusters=3,
                                                        n_features_to_select=2))[:2] == [0, 1]
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


def registered(plugin):
    """Register ``plugin`` and return the error the part registry raises, if any."""
    register_plugin(plugin, name=type(plugin).__name__)
    try:
        available("kernel")
    except PluginError as exc:
        return str(exc)
    finally:
        unregister_plugin(plugin)
    return None


def test_duplicate_names_name_both_plugins():
    class Linear2(LinearKernel):
        name = "linear"

    class Clash:
        @hookimpl
        def causefs_register_parts(self, registry):
            registry.add_kernel(Linear2)

    message = registered(Clash())
    assert "two plugins provide a kernel named 'linear'" in message
    assert "'builtin' (causefs.kernels.linear.LinearKernel)" in message
    assert "'Clash' (" in message and "Linear2)" in message


def test_the_registry_validates_what_a_plugin_adds():
    class Abstract(Block):
        name = "abstract"

    class NotAKernel:
        name = "not_a_kernel"

    def plugin_adding(method, piece):
        class Adds:
            @hookimpl
            def causefs_register_parts(self, registry):
                getattr(registry, method)(piece)
        return Adds()

    assert "is a subclass of causefs.kernels.base.Kernel" in \
        registered(plugin_adding("add_kernel", NotAKernel))
    assert "does not implement ['step']" in registered(plugin_adding("add_block", Abstract))
    assert "names block 'missing', which no plugin registers" in registered(
        plugin_adding("add_schedule", {"name": "broken", "loop": ["missing"]}))
    assert "unknown keys ['blocks']" in registered(
        plugin_adding("add_schedule", {"name": "typo", "blocks": ["embedding"]}))
    assert "a name is an identifier" in registered(
        plugin_adding("add_kernel", type("Dashed", (LinearKernel,), {"name": "my-kernel"})))


def test_a_misspelled_hook_is_an_error_not_ignored():
    class Misspelled:
        @hookimpl
        def causefs_register_kernels(self, registry):
            pass

    with pytest.raises(pluggy.PluginValidationError, match="unknown hook 'causefs_register_kern"):
        register_plugin(Misspelled())
    assert "linear" in available("kernel")  # the faulty plugin was not left registered


def test_unknown_kind():
    with pytest.raises(ValueError, match="kind='solver': must be one of 'block', 'kernel', 'qp', 'schedule'"):
        available("solver")


def test_kernel_options_are_checked():
    with pytest.raises(ValueError, match="unknown option"):
        make_kernel("linear", bandwidth=2)
    assert isinstance(make_kernel("rbf", n_components=10), Kernel)


ROOT = Path(__file__).resolve().parents[1]
INSTALLED_PLUGIN = {
    "entry_kernel.py": """
        from causefs.kernels import LinearKernel
        from causefs.plugins import hookimpl

        class EntryKernel(LinearKernel):
            name = "entry_kernel"

        @hookimpl
        def causefs_register_parts(registry):
            registry.add_kernel(EntryKernel)
        """,
    "entry_kernel-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: entry-kernel\nVersion: 1.0\n",
    "entry_kernel-1.0.dist-info/entry_points.txt": "[causefs]\nentry_kernel = entry_kernel\n",
}


def kernels_seen(site, **env):
    code = "from causefs.plugins import available; print(' '.join(available('kernel')))"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), **env}
    environment.pop(DISABLE_AUTOLOAD, None) if DISABLE_AUTOLOAD not in env else None
    out = subprocess.run([sys.executable, "-c", code], env=environment, check=True,
                         capture_output=True, text=True).stdout
    return set(out.split())


def test_installed_entry_points_load_unless_autoload_is_disabled(tmp_path):
    for relative, text in INSTALLED_PLUGIN.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    # other installed plugins (the example plugin in CI) add theirs; the built-ins stay
    assert kernels_seen(tmp_path) >= {"entry_kernel", "linear", "rbf"}
    assert kernels_seen(tmp_path, **{DISABLE_AUTOLOAD: "1"}) == {"linear", "rbf"}


def test_the_solver_layer_does_not_import_the_selector_layer():
    code = ("import sys, causefs.engine, causefs.plugins; "
            "print(any(m.startswith('causefs.selectors') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("package", ["plugins", "selectors"])
def test_every_import_of_the_plugin_layers_sits_at_the_top(package):
    for path in (ROOT / "causefs" / package).glob("*.py"):
        tree = ast.parse(path.read_text())
        nested = [node.lineno for node in ast.walk(tree)
                  if isinstance(node, (ast.Import, ast.ImportFrom))
                  and node not in tree.body]
        assert not nested, f"{path.name} imports inside a function at lines {nested}"


def test_a_plugin_view_files_under_its_plugin_and_leaves_the_registry_alone():
    from causefs.plugins import PartRegistry
    from causefs.kernels import LinearKernel

    registry = PartRegistry()
    view = registry.for_plugin("mine")
    assert view is not registry and registry._plugin is None
    view.add_kernel(LinearKernel)
    assert registry.names("kernel") == ["linear"]  # the view adds to the registry ...
    with pytest.raises(PluginError, match="'mine' .* and 'other'"):
        registry.for_plugin("other").add_kernel(LinearKernel)  # ... naming both plugins
