"""Name -> piece registry over every registered plugin."""

from __future__ import annotations

import functools
import inspect

import pluggy

from . import builtin, hookspecs

KINDS = {
    "block": "causefs_blocks",
    "kernel": "causefs_kernels",
    "qp": "causefs_qp_backends",
    "schedule": "causefs_schedules",
    "selector": "causefs_selectors",
}


@functools.lru_cache(maxsize=None)
def plugin_manager() -> pluggy.PluginManager:
    """The plugin manager: built-ins plus every ``causefs`` entry point installed."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.load_setuptools_entrypoints(hookspecs.PROJECT)
    if not pm.is_registered(builtin):  # running from a source tree without metadata
        pm.register(builtin, name="builtin")
    return pm


def register_plugin(plugin, name: str | None = None) -> None:
    """Register a plugin object or module at run time (e.g. in a plugin's own tests)."""
    plugin_manager().register(plugin, name=name)
    _table.cache_clear()


def unregister_plugin(plugin) -> None:
    plugin_manager().unregister(plugin)
    _table.cache_clear()


def _name_of(kind, piece):
    return piece["name"] if kind == "schedule" else piece.name


@functools.lru_cache(maxsize=None)
def _table(kind: str) -> dict:
    hook = getattr(plugin_manager().hook, KINDS[kind])
    table, origin = {}, {}
    for plugin_pieces in hook():
        for piece in plugin_pieces or ():
            name = _name_of(kind, piece)
            if name in table and table[name] is not piece:
                raise ValueError(f"two plugins provide a {kind} named {name!r}: "
                                 f"{origin[name]!r} and {piece!r}")
            table[name], origin[name] = piece, piece
    return table


def available(kind: str) -> list[str]:
    """Sorted names of the registered pieces of ``kind`` (block, kernel, qp, schedule)."""
    if kind not in KINDS:
        raise ValueError(f"unknown plugin kind {kind!r}; allowed: {', '.join(KINDS)}")
    return sorted(_table(kind))


def _lookup(kind: str, name: str):
    table = _table(kind)
    if name not in table:
        raise ValueError(f"unknown {kind} {name!r}; available: {', '.join(sorted(table))}")
    return table[name]


def get_block(name: str):
    """Block class registered as ``name``."""
    return _lookup("block", name)


def get_schedule(name: str) -> dict:
    """Schedule mapping registered as ``name``."""
    return dict(_lookup("schedule", name))


def _construct(kind: str, spec, **options):
    if isinstance(spec, str):
        cls = _lookup(kind, spec)
    else:
        cls = spec
    accepted = inspect.signature(cls).parameters
    unknown = set(options) - set(accepted)
    if unknown:
        raise ValueError(f"{kind} {cls.name!r} has no option(s) {sorted(unknown)}; "
                         f"its options are {sorted(accepted)}")
    return cls(**options)


def make_kernel(name: str, **options):
    """Instantiate the kernel registered as ``name`` with ``options``."""
    return _construct("kernel", name, **options)


def make_selector(name: str, **options):
    """Instantiate the selector registered as ``name`` with ``options``."""
    cls = _lookup("selector", name)
    return cls(**options)


def make_qp_backend(name: str, **options):
    """Instantiate the QP backend registered as ``name`` with ``options``."""
    return _construct("qp", name, **options)
