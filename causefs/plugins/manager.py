"""The plugin manager: built-in plugins, installed entry points, run-time registrations.

An installed plugin (a ``causefs`` entry point) that fails, whether its module does not
import, its hooks do not validate, or its registration hook raises or adds an invalid or
duplicate piece, is skipped: a :class:`PluginLoadWarning` names, in one line, the entry
point, its distribution, the error and :data:`DISABLE_AUTOLOAD`, and the rest of the
library works without it. A plugin registered at run time (:func:`register_plugin`, a
plugin's own tests) fails loudly instead: its author is the one running it.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import warnings
from collections.abc import Callable

import pluggy

from . import builtin, hookspecs

#: set to a non-empty value to skip installed ``causefs`` entry points (built-ins stay),
#: as ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` does for pytest
DISABLE_AUTOLOAD = "CAUSEFS_DISABLE_PLUGIN_AUTOLOAD"


class PluginLoadWarning(UserWarning):
    """An installed plugin failed to load or to register its pieces and is skipped."""


class PluginSkipped(Exception):
    """An installed plugin was skipped while a registry was built: build it again."""


#: installed plugins that loaded: entry point name -> (its "name = value", distribution)
_INSTALLED: dict = {}
#: ... and their distributions: entry point name -> (distribution name, version)
_DISTRIBUTIONS: dict = {}


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
    pm.check_pending()
    if not os.environ.get(DISABLE_AUTOLOAD):
        _load_entry_points(pm)
    return pm


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    """Register every installed ``causefs`` entry point that loads and validates; warn
    about (and skip) the others."""
    for dist in importlib.metadata.distributions():
        for entry in dist.entry_points:
            if (entry.group != hookspecs.PROJECT or pm.get_plugin(entry.name) is not None
                    or pm.is_blocked(entry.name)):
                continue
            origin = (f"{entry.name} = {entry.value}",
                      f"{dist.metadata['Name']} {dist.version}")
            try:
                plugin = entry.load()
                pm.register(plugin, name=entry.name)
            except Exception as error:  # whatever a broken module raises on import
                _warn_skipped(origin, error)
                continue
            try:
                pm.check_pending()  # a misspelled hook of this plugin
            except pluggy.PluginValidationError as error:
                pm.unregister(plugin)
                _warn_skipped(origin, error)
                continue
            _INSTALLED[entry.name] = origin
            _DISTRIBUTIONS[entry.name] = (dist.metadata["Name"], dist.version)


def _warn_skipped(origin: tuple, error: BaseException) -> None:
    entry, dist = origin
    message = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    warnings.warn(f"installed plugin {entry} (distribution {dist}) is skipped: "
                  f"{type(error).__name__}: {message} (set {DISABLE_AUTOLOAD}=1 to load no "
                  "installed plugin)", PluginLoadWarning, stacklevel=4)


def skip_or_raise(error: BaseException, *plugin_names: str):
    """An error of plugins ``plugin_names`` while a registry is built (two for a clash of
    names): the first installed one is unregistered with a :class:`PluginLoadWarning` and
    :class:`PluginSkipped` is raised (the registry is built again without it); when none
    is installed, ``error`` is raised."""
    plugin_name = next((name for name in plugin_names if name in _INSTALLED), None)
    if plugin_name is None:
        raise error
    origin = _INSTALLED.pop(plugin_name)
    _DISTRIBUTIONS.pop(plugin_name, None)
    plugin_manager().unregister(name=plugin_name)
    _GENERATION.value += 1
    _warn_skipped(origin, error)
    raise PluginSkipped(plugin_name)


def installed_distributions() -> dict:
    """``{distribution: version}`` of every installed plugin that loaded (and was not
    skipped since)."""
    plugin_manager()
    return dict(_DISTRIBUTIONS.values())


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
        while self._generation != generation() or self._value is None:
            try:
                self._value = self._build()
            except PluginSkipped:  # an installed plugin failed and was dropped: again
                continue
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
    for impl in hook.get_hookimpls():  # in registration order (pluggy calls the reverse)
        try:
            impl.function(registry.for_plugin(impl.plugin_name))
        except Exception as error:  # a clash names the plugin that took the name first
            skip_or_raise(error, *getattr(error, "plugins", ()), impl.plugin_name)
