"""The plugin manager: built-in plugins, installed entry points, run-time registrations,
and the registries built from them.

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

import pluggy

from . import builtin, hookspecs

#: set to a non-empty value to skip installed ``causefs`` entry points (built-ins stay),
#: as ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` does for pytest
DISABLE_AUTOLOAD = "CAUSEFS_DISABLE_PLUGIN_AUTOLOAD"


class PluginLoadWarning(UserWarning):
    """An installed plugin failed to load or to register its pieces and is skipped."""


class PluginSkipped(Exception):
    """An installed plugin was skipped while a registry was built: build it again."""


class PluginManager(pluggy.PluginManager):
    """causefs's plugin manager: pluggy's, with the built-in plugin registered first, the
    installed ``causefs`` entry points loaded (unless ``load_entry_points`` is False or
    :data:`DISABLE_AUTOLOAD` is set), and the registries of its plugins' pieces.

    Parameters
    ----------
    load_entry_points : bool, optional
        Default: unless :data:`DISABLE_AUTOLOAD` is set.

    Attributes
    ----------
    generation : int
        Bumped by every (un)registration: registries are rebuilt when it moves.
    installed : dict
        Installed plugins that loaded: entry point name -> ("name = value",
        (distribution, version)).
    """

    def __init__(self, load_entry_points: bool | None = None):
        super().__init__(hookspecs.PROJECT)
        self.generation = 0
        self.installed: dict = {}
        self._registries: dict = {}
        self.add_hookspecs(hookspecs)
        # registered first, so an installed entry point of the same name is skipped
        self.register(builtin, name="builtin")
        self.check_pending()
        if load_entry_points is None:
            load_entry_points = not os.environ.get(DISABLE_AUTOLOAD)
        if load_entry_points:
            self._load_entry_points()

    def register(self, plugin, name=None):
        result = super().register(plugin, name)
        self.generation += 1
        return result

    def unregister(self, plugin=None, name=None):
        result = super().unregister(plugin, name)
        self.generation += 1
        return result

    def _load_entry_points(self) -> None:
        """Register every installed ``causefs`` entry point that loads and validates;
        warn about (and skip) the others."""
        for dist in importlib.metadata.distributions():
            for entry in dist.entry_points:
                if (entry.group != hookspecs.PROJECT or self.get_plugin(entry.name) is not None
                        or self.is_blocked(entry.name)):
                    continue
                origin = (f"{entry.name} = {entry.value}",
                          (dist.metadata["Name"], dist.version))
                try:
                    plugin = entry.load()
                    self.register(plugin, name=entry.name)
                except Exception as error:  # whatever a broken module raises on import
                    _warn_skipped(origin, error)
                    continue
                try:
                    self.check_pending()  # a misspelled hook of this plugin
                except pluggy.PluginValidationError as error:
                    self.unregister(plugin)
                    _warn_skipped(origin, error)
                    continue
                self.installed[entry.name] = origin

    def add_plugin(self, plugin, name: str | None = None) -> None:
        """Register a plugin at run time, validating its hooks (an invalid one is not
        left registered)."""
        self.register(plugin, name=name)
        try:
            self.check_pending()
        except pluggy.PluginValidationError:
            self.unregister(plugin)
            raise

    def skip_or_raise(self, error: BaseException, *plugin_names):
        """An error of plugins ``plugin_names`` while a registry is built (two for a
        clash of names): the first installed one is unregistered with a
        :class:`PluginLoadWarning` and :class:`PluginSkipped` is raised (the registry is
        built again without it); when none is installed, ``error`` is raised."""
        plugin_name = next((name for name in plugin_names if name in self.installed), None)
        if plugin_name is None:
            raise error
        origin = self.installed.pop(plugin_name)
        self.unregister(name=plugin_name)
        _warn_skipped(origin, error)
        raise PluginSkipped(plugin_name)

    def registry(self, kind: type):
        """The registry of class ``kind`` (e.g. :class:`~causefs.plugins.PartRegistry`)
        filled by this manager's plugins, built again when the plugins have changed."""
        while True:
            hit = self._registries.get(kind)
            if hit is not None and hit[0] == self.generation:
                return hit[1]
            try:
                registry = kind.collect(self)
            except PluginSkipped:  # an installed plugin failed and was dropped: again
                continue
            self._registries[kind] = (self.generation, registry)
            return registry

    def distributions(self) -> dict:
        """``{distribution: version}`` of every installed plugin that loaded (and was
        not skipped since)."""
        return dict(dist for _, dist in self.installed.values())


def _warn_skipped(origin: tuple, error: BaseException) -> None:
    entry, (name, version) = origin
    message = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    warnings.warn(f"installed plugin {entry} (distribution {name} {version}) is skipped: "
                  f"{type(error).__name__}: {message} (set {DISABLE_AUTOLOAD}=1 to load no "
                  "installed plugin)", PluginLoadWarning, stacklevel=4)


@functools.lru_cache(maxsize=None)
def plugin_manager() -> PluginManager:
    """The process's plugin manager: the built-in parts plus every installed ``causefs``
    entry point (made on first use).

    Raises
    ------
    pluggy.PluginValidationError
        When a plugin marks a function ``@hookimpl`` that is no causefs hook (a
        misspelled hook name) or whose arguments do not match the hook.
    """
    return PluginManager()


def installed_distributions() -> dict:
    """``{distribution: version}`` of every installed plugin that loaded (and was not
    skipped since)."""
    return plugin_manager().distributions()


def ensure_registered(plugin, name: str) -> None:
    """Register ``plugin`` under ``name`` unless it already is (a layer's built-ins)."""
    pm = plugin_manager()
    if not pm.is_registered(plugin):
        pm.add_plugin(plugin, name=name)


def register_plugin(plugin, name: str | None = None) -> None:
    """Register a plugin object or module at run time (e.g. in a plugin's own tests)."""
    plugin_manager().add_plugin(plugin, name=name)


def unregister_plugin(plugin) -> None:
    """Remove a plugin registered with :func:`register_plugin`."""
    plugin_manager().unregister(plugin)
