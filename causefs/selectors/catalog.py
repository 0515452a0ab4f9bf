"""The selector layer's registry: the methods to compare, from every registered plugin."""

from __future__ import annotations

from ..core.validation import construct
from ..plugins.manager import ensure_registered, plugin_manager
from ..plugins.registry import Registry
from . import builtin
from .base import Selector


class SelectorRegistry(Registry):
    """Feature selectors (:class:`~causefs.selectors.Selector` subclasses) by name."""

    BASES = {"selector": Selector}
    HOOKS = {"causefs_register_selectors": "selector"}

    def add_selector(self, cls) -> None:
        """Add a :class:`~causefs.selectors.Selector` subclass under ``cls.name``."""
        self._add_class("selector", cls)


def selectors() -> SelectorRegistry:
    """The selectors of every registered plugin (rebuilt when the plugins change)."""
    ensure_registered(builtin, "builtin_selectors")
    return plugin_manager().registry(SelectorRegistry)


def available_selectors() -> list[str]:
    """Sorted names of the registered selectors."""
    return selectors().names("selector")


def get_selector(name: str) -> type:
    """The selector class registered as ``name``."""
    return selectors().get("selector", name)


def make_selector(name: str, **options) -> Selector:
    """Instantiate the selector registered as ``name`` with ``options``."""
    return construct("method", get_selector(name), options)
