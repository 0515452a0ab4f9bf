"""The selector layer's registry: methods to compare, from every registered plugin."""

from __future__ import annotations

from ..plugins import manager
from ..plugins.registry import Registry, construct
from . import builtin
from .base import Selector


class SelectorRegistry(Registry):
    """Feature selectors (:class:`~causefs.selectors.Selector` subclasses) by name."""

    BASES = {"selector": Selector}

    def add_selector(self, cls) -> None:
        """Add a :class:`~causefs.selectors.Selector` subclass under ``cls.name``."""
        self._add_class("selector", cls)


_selectors: list = [None, None]  # (generation, SelectorRegistry)


def selectors() -> SelectorRegistry:
    """The selectors of every registered plugin (rebuilt when the plugins change)."""
    manager.ensure_registered(builtin, "builtin_selectors")
    if _selectors[0] != manager.generation() or _selectors[1] is None:
        registry = SelectorRegistry()
        manager.collect("causefs_register_selectors", registry)
        _selectors[:] = [manager.generation(), registry]
    return _selectors[1]


def available_selectors() -> list[str]:
    """Sorted names of the registered selectors."""
    return selectors().names("selector")


def make_selector(name: str, **options) -> Selector:
    """Instantiate the selector registered as ``name`` with ``options``."""
    return construct("selector", selectors().get("selector", name), **options)
