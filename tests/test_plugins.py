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

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)


class RecenterEmbedding(Block):
    """A third-party descent block: flip the sign of every column of F that points away
    from its column of X~ W; F'F = I and the graph terms are kept, the regression cannot
    rise."""

    name = "recenter_embedding"
    kind = "descent"
    reads = ("X_adjusted", "mu", "W", "F")
    writes = ("F",)
    derived_for = ("regression", "fused_smoothness")

    def step(self, state):
        alignment = np.einsum("ic,ic->c", state.F,
                              state.mu[:, None] * (state.X_adjusted @ state.W))
        return state.replace(F=state.F * np.where(alignment < 0, -1.0, 1.0))


class ScaledLinearKernel(LinearKernel):
    name = "scaled_linear"


class WarmStartOnly(QPBackend):
    """A third-party backend: GPCG with a tiny budget."""

    name = "short_gpcg"

    def __init__(self):
        self.solver = GradientProjectionCGBackend(max_iter=3000)

    def solve(self, qp, x0):
        return self.solver.solve(qp, x0)

    def products(self, max_products):
        return self.solver.products(max_products)


class FirstFeatures(AllFeatures):
    """A third-party selector: earlier features score higher."""

    name = "first_features"
    select_all = False

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0):
        return -np.arange(X.shape[1], dtype=float)


class ThirdParty:
    @hookimpl
    def causefs_register_blocks(self, registry):
        registry.add_block(RecenterEmbedding)

    @hookimpl
    def causefs_register_kernels(self, registry):
        registry.add_kernel(ScaledLinearKernel)

    @hookimpl
    def causefs_register_qp_backends(self, registry):
        registry.add_qp_backend(WarmStartOnly)

    @hookimpl
    def causefs_register_schedules(self, registry):
        registry.add_schedule({"name": "with_recenter",
                               "init": ["uniform_weights", "initial_confounders",
                                        "initial_fused_graph", "spectral_embedding",
                                        "initial_selection"],
                               "loop": ["selection_matrix", "recenter_embedding", "embedding",
                                        "sample_weights"]})

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
    # every third-party piece ran: the block, and the kernel and QP backend through the
    # sample-weight step (a schedule without it would leave them unused, and say so)
    assert {"recenter_embedding", "sample_weights"} <= {r["block"] for r in est.trace_}


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
        def causefs_register_kernels(self, registry):
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

    hooks = {"add_kernel": "causefs_register_kernels", "add_block": "causefs_register_blocks",
             "add_schedule": "causefs_register_schedules"}

    def plugin_adding(method, piece):
        def add(self, registry):
            getattr(registry, method)(piece)
        add.__name__ = hooks[method]
        return type("Adds", (), {hooks[method]: hookimpl(add)})()

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
        def causefs_register_kernel(self, registry):
            pass

    with pytest.raises(pluggy.PluginValidationError, match="unknown hook 'causefs_register_kern"):
        register_plugin(Misspelled())
    assert "linear" in available("kernel")  # the faulty plugin was not left registered


def test_unknown_kind():
    with pytest.raises(ValueError, match="kind='solver': must be one of 'block', 'field', "
                                         "'kernel', 'qp', 'schedule', 'stopping_rule', 'term'"):
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
        def causefs_register_kernels(registry):
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


def test_registries_belong_to_their_plugin_manager():
    """A plugin manager of its own (no entry points) sees the built-ins and what is
    registered on it, not what the process's manager has."""
    from causefs.plugins import PartRegistry, PluginManager, plugin_manager

    class Extra:
        @hookimpl
        def causefs_register_kernels(self, registry):
            registry.add_kernel(ScaledLinearKernel)

    own = PluginManager(load_entry_points=False)
    own.add_plugin(Extra(), name="extra")
    assert "scaled_linear" in own.registry(PartRegistry).names("kernel")
    assert own.registry(PartRegistry).plugin_of("kernel", "scaled_linear") == "extra"
    assert own.registry(PartRegistry).plugin_of("kernel", "linear") == "builtin"
    assert "scaled_linear" not in plugin_manager().registry(PartRegistry).names("kernel")


def test_hooks_are_called_through_pluggy_so_a_wrapper_sees_every_plugin():
    """pluggy's hook callers run the hooks: a plugin's wrapper around a hook runs around
    every implementation (here it counts the kernels the others add)."""
    from causefs.plugins import PartRegistry, PluginManager

    seen = []

    class Counter:
        @hookimpl(wrapper=True)
        def causefs_register_kernels(self, registry):
            before = len(registry.names("kernel"))
            result = yield
            seen.append(len(registry.names("kernel")) - before)
            return result

    own = PluginManager(load_entry_points=False)
    own.add_plugin(Counter(), name="counter")
    assert own.registry(PartRegistry).names("kernel") == ["linear", "rbf"] and seen == [2]


#: installed plugins that fail in every way a careless author could make them fail
BROKEN_PLUGINS = {
    "import": ("import causefs_no_such_module_xyz\n", "ModuleNotFoundError"),
    "raise": ("raise RuntimeError('exploded at import')\n", "RuntimeError: exploded"),
    "syntax": ("def broken(:\n", "SyntaxError"),
    "attribute": ("x = 1\n", "AttributeError"),
    "duplicate": ("""
        from causefs.kernels import LinearKernel
        from causefs.plugins import hookimpl

        class Dup(LinearKernel):
            name = "linear"

        @hookimpl
        def causefs_register_kernels(registry):
            registry.add_kernel(Dup)
        """, "two plugins provide a kernel named 'linear'"),
    "misspelled": ("""
        from causefs.plugins import hookimpl

        @hookimpl
        def causefs_register_kernel(registry):
            pass
        """, "unknown hook 'causefs_register_kernel'"),
    "hook_raises": ("""
        from causefs.plugins import hookimpl

        @hookimpl
        def causefs_register_kernels(registry):
            raise ValueError("no parts today")
        """, "ValueError: no parts today"),
    "ghost_block": ("""
        from causefs.plugins import hookimpl

        @hookimpl
        def causefs_register_schedules(registry):
            registry.add_schedule({"name": "ghost", "loop": ["no_such_block"]})
        """, "names block 'no_such_block', which no plugin registers"),
    "ghost_field": ("""
        from causefs.blocks import Block
        from causefs.plugins import hookimpl

        class Ghost(Block):
            name, kind, reads, writes = "ghost", "structural", ("V",), ("V",)

            def step(self, state):
                return state

        @hookimpl
        def causefs_register_blocks(registry):
            registry.add_block(Ghost)
        """, "names fields ['V'] that no plugin declares"),
    "odd_default": ("""
        from causefs.kernels import LinearKernel
        from causefs.plugins import hookimpl

        class Odd(LinearKernel):
            name = "odd"

            def __init__(self, thing=object()):
                self.thing = thing

        @hookimpl
        def causefs_register_kernels(registry):
            registry.add_kernel(Odd)
        """, "whose option thing has a default that"),
}


def install_broken(site, kind):
    source, _ = BROKEN_PLUGINS[kind]
    site.mkdir(parents=True, exist_ok=True)
    (site / "broken_plugin.py").write_text(textwrap.dedent(source))
    info = site / "broken_plugin-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    target = "broken_plugin:missing" if kind == "attribute" else "broken_plugin"
    (info / "entry_points.txt").write_text(f"[causefs]\nbroken = {target}\n")


def run_with(site, code, *args):
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    environment.pop(DISABLE_AUTOLOAD, None)
    return subprocess.run([sys.executable, *code, *args], env=environment,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("kind", BROKEN_PLUGINS)
def test_an_installed_plugin_that_fails_is_skipped_with_one_line(tmp_path, kind):
    install_broken(tmp_path, kind)
    out = run_with(tmp_path, ["-c", "from causefs.plugins import available; "
                              "print(' '.join(available('kernel')))"])
    assert out.returncode == 0, out.stderr
    assert {"linear", "rbf"} <= set(out.stdout.split()) and "odd" not in out.stdout.split()
    warned = [line for line in out.stderr.splitlines() if "PluginLoadWarning" in line]
    assert len(warned) == 1 and "Traceback" not in out.stderr
    assert ("installed plugin broken = broken_plugin" in warned[0]
            and "(distribution broken-plugin 0.1) is skipped" in warned[0]
            and BROKEN_PLUGINS[kind][1] in warned[0]
            and f"set {DISABLE_AUTOLOAD}=1 to load no installed plugin" in warned[0])


def test_the_command_runs_beside_a_broken_plugin(tmp_path):
    install_broken(tmp_path / "site", "duplicate")
    out = run_with(tmp_path / "site", ["-m", "causefs.app.cli"], "method=all_features",
                   "dataset=synthetic", "dataset.n_samples=40", "dataset.n_features=8",
                   "dataset.n_causal=2", "dataset.n_spurious=2", "n_features_to_select=4",
                   "evaluation.n_runs=1", f"hydra.run.dir={tmp_path / 'run'}")
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().splitlines() == [
        "causefs: warning: PluginLoadWarning: installed plugin broken = broken_plugin "
        "(distribution broken-plugin 0.1) is skipped: PluginError: two plugins provide a "
        "kernel named 'linear': 'builtin' (causefs.kernels.linear.LinearKernel) and 'broken' "
        f"(broken_plugin.Dup) (set {DISABLE_AUTOLOAD}=1 to load no installed plugin)"]


def test_an_installed_selector_that_takes_a_builtin_name_is_the_one_skipped(tmp_path):
    """The built-in selectors register after the installed plugins: the clash still skips
    the installed plugin, not the built-ins."""
    site = tmp_path / "site"
    install_broken(site, "duplicate")
    (site / "broken_plugin.py").write_text(textwrap.dedent("""
        from causefs.selectors import AllFeatures
        from causefs.plugins import hookimpl

        class Dup(AllFeatures):
            name = "mcfs"

        @hookimpl
        def causefs_register_selectors(registry):
            registry.add_selector(Dup)
        """))
    out = run_with(site, ["-c", "from causefs.selectors import get_selector; "
                          "print(get_selector('mcfs').__module__)"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "causefs.selectors.mcfs"
    assert "two plugins provide a selector named 'mcfs'" in out.stderr
    assert "installed plugin broken = broken_plugin" in out.stderr
