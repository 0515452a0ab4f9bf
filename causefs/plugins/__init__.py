"""Plugin layer of the solver parts: hookspecs, the plugin manager and the part registry.

Selectors (the methods compared in experiments) are a layer above the estimator and
have their own registry (:class:`causefs.selectors.SelectorRegistry`), built by the same
plugin manager.
"""

from .hookspecs import hookimpl, hookspec
from .manager import (
    DISABLE_AUTOLOAD,
    PluginLoadWarning,
    PluginManager,
    installed_distributions,
    plugin_manager,
    register_plugin,
    unregister_plugin,
)
from .registry import (
    PartRegistry,
    PluginError,
    Registry,
    available,
    get_block,
    get_schedule,
    get_stopping_rule,
    get_term,
    make_kernel,
    make_qp_backend,
    parts,
)

__all__ = [
    "DISABLE_AUTOLOAD",
    "PartRegistry",
    "PluginError",
    "PluginLoadWarning",
    "PluginManager",
    "Registry",
    "available",
    "get_block",
    "get_schedule",
    "get_stopping_rule",
    "get_term",
    "hookimpl",
    "hookspec",
    "installed_distributions",
    "make_kernel",
    "make_qp_backend",
    "parts",
    "plugin_manager",
    "register_plugin",
    "unregister_plugin",
]
