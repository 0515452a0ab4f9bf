"""The plugin manager: built-in plugins, installed entry points, run-time registrations."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

import pluggy

from . import builtin, hookspecs

#: set to a non-empty value to skip installed ``causefs`` entry points (built-ins stay),
#: as ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` does for pytest
DISABLE_AUTOLOAD = "CAUSEFS_DISABLE_PLUGIN_AUTOLOAD"


class _Generation:
    """A number bumped at every (un)registration; registries are rebuilt when it moves."""

    def __init__(self):
        self.value = 0


_GENERATION = _Generation()


@functools.lru_cache(maxsize=None)
def plugin_manager() -> pluggy.PluginManager:
    """The plugin manager: the built-in parts plus every installed ``causefs`` entry point.

    Raises
    ------
    pluggy.PluginValidationError
        When a plugin marks a function ``@hookimpl`` that is no causefs hook (a
        misspelled hook name) or whose arguments do not match the hook.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    # registered first, so an installed entry point of the same name is skipped
    pm.register(builtin, name="builtin")
    if not os.environ.get(DISABLE_AUTOLOAD):
        pm.load_setuptools_entrypoints(hookspecs.PROJECT)
    pm.check_pending()
    return pm


def generation() -> int:
    """A number that changes whenever the set of registered plugins changes."""
    return _GENERATION.value


class PerGeneration:
    """``build()``'s result, rebuilt when the registered plugins have changed."""

    def __init__(self, build: Callable):
        self._build = build
        self._generation = None
        self._value = None

    def get(self):
        if self._generation != generation() or self._value is None:
            self._value = self._build()
            self._generation = generation()
        return self._value


def ensure_registered(plugin, name: str) -> None:
    """Register ``plugin`` under ``name`` unless it already is (a layer's built-ins)."""
    pm = plugin_manager()
    if not pm.is_registered(plugin):
        register_plugin(plugin, name=name)


def register_plugin(plugin, name: str | None = None) -> None:
    """Register a plugin object or module at run time (e.g. in a plugin's own tests)."""
    pm = plugin_manager()
    pm.register(plugin, name=name)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError:
        pm.unregister(plugin)
        raise
    _GENERATION.value += 1


def unregister_plugin(plugin) -> None:
    """Remove a plugin registered with :func:`register_plugin`."""
    plugin_manager().unregister(plugin)
    _GENERATION.value += 1


def collect(hook_name: str, registry) -> None:
    """Call hook ``hook_name`` of every plugin with ``registry`` bound to that plugin.

    Plugins are called in registration order, so a clash names the earlier plugin first.
    """
    hook = getattr(plugin_manager().hook, hook_name)
    for impl in reversed(hook.get_hookimpls()):  # pluggy lists the latest first
        impl.function(registry.for_plugin(impl.plugin_name))
