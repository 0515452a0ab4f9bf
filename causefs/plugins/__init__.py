"""Plugin layer: pluggy hookspecs, the built-in plugin and the registry of named pieces."""

from .hookspecs import hookimpl, hookspec
from .registry import (
    available,
    get_block,
    get_schedule,
    make_kernel,
    make_qp_backend,
    make_selector,
    plugin_manager,
    register_plugin,
    unregister_plugin,
)

__all__ = [
    "available",
    "get_block",
    "get_schedule",
    "hookimpl",
    "hookspec",
    "make_kernel",
    "make_qp_backend",
    "make_selector",
    "plugin_manager",
    "register_plugin",
    "unregister_plugin",
]
