"""Registries of named pieces, filled by the plugins' registration hooks."""

from __future__ import annotations

import inspect
from collections.abc import Mapping

from ..blocks import Block
from ..core.schedule import Schedule, ScheduleError
from ..core.validation import check_choice, config_value, construct, constructor_defaults
from ..kernels import Kernel
from ..qp import QPBackend
from . import manager


class PluginError(ValueError):
    """A plugin registered an invalid piece, or two plugins registered the same name
    (``plugins`` names the plugins at fault)."""

    def __init__(self, message: str, plugins: tuple = ()):
        super().__init__(message)
        self.plugins = plugins


class Registry:
    """Pieces of some kinds by name, each remembered with the plugin that added it.

    A registration hook receives a view of the registry bound to its plugin
    (:meth:`for_plugin`), so that an error names the plugin at fault.
    """

    #: kind -> base class every piece of that kind subclasses
    BASES: dict = {}

    def __init__(self):
        self._pieces = {kind: {} for kind in self.BASES}
        self._plugin = None

    def for_plugin(self, plugin_name: str) -> "Registry":
        """A view of this registry that files what is added under ``plugin_name``."""
        view = object.__new__(type(self))
        view._pieces, view._plugin = self._pieces, plugin_name
        return view

    def _add(self, kind: str, name, piece) -> None:
        if not isinstance(name, str) or not name.isidentifier():
            raise PluginError(f"plugin {self._plugin!r} registers a {kind} named {name!r}; "
                              "a name is an identifier such as 'my_kernel'")
        table = self._pieces[kind]
        if name in table:
            other, other_plugin = table[name]
            raise PluginError(f"two plugins provide a {kind} named {name!r}: "
                              f"{other_plugin!r} ({_describe(other)}) and "
                              f"{self._plugin!r} ({_describe(piece)})",
                              plugins=(other_plugin, self._plugin))
        table[name] = (piece, self._plugin)

    def _add_class(self, kind: str, cls) -> None:
        base = self.BASES[kind]
        if not (inspect.isclass(cls) and issubclass(cls, base)):
            raise PluginError(f"plugin {self._plugin!r} registers {cls!r} as a {kind}; "
                              f"a {kind} is a subclass of {base.__module__}.{base.__name__}")
        if inspect.isabstract(cls):
            missing = sorted(cls.__abstractmethods__)
            raise PluginError(f"plugin {self._plugin!r} registers {kind} {cls.__name__}, "
                              f"which does not implement {missing}")
        # its options become a config node (causefs.app.configs): defaults a config holds
        defaults = cls.defaults() if hasattr(cls, "defaults") else constructor_defaults(
            cls, skip=getattr(cls, "requires", ()))
        for option, value in defaults.items():
            try:
                config_value(value)
            except TypeError as error:
                raise PluginError(f"plugin {self._plugin!r} registers {kind} {cls.__name__} "
                                  f"whose option {option} has a default that {error} (a "
                                  "str, number, bool, None, list or mapping)") from None
        self._add(kind, getattr(cls, "name", None), cls)

    def names(self, kind: str) -> list[str]:
        return sorted(self._pieces[kind])

    def get(self, kind: str, name: str):
        table = self._pieces[kind]
        check_choice(kind, name, sorted(table))
        return table[name][0]


def _describe(piece) -> str:
    if inspect.isclass(piece):
        return f"{piece.__module__}.{piece.__qualname__}"
    return repr(piece)


class PartRegistry(Registry):
    """The solver parts: blocks, kernels, QP backends and schedules."""

    BASES = {"block": Block, "kernel": Kernel, "qp": QPBackend, "schedule": Mapping}

    def add_block(self, cls) -> None:
        """Add a :class:`~causefs.blocks.Block` subclass under ``cls.name``."""
        self._add_class("block", cls)

    def add_kernel(self, cls) -> None:
        """Add a :class:`~causefs.kernels.Kernel` subclass under ``cls.name``."""
        self._add_class("kernel", cls)

    def add_qp_backend(self, cls) -> None:
        """Add a :class:`~causefs.qp.QPBackend` subclass under ``cls.name``."""
        self._add_class("qp", cls)

    def add_schedule(self, spec: Mapping) -> None:
        """Add a schedule ``{"name", "init", "loop", "params"}`` (validated as a Schedule)."""
        if not isinstance(spec, Mapping):
            raise PluginError(f"plugin {self._plugin!r} registers {spec!r} as a schedule; "
                              "a schedule is a mapping with name, init, loop and params")
        if "name" not in spec:
            raise PluginError(f"plugin {self._plugin!r} registers a schedule without a name")
        try:
            Schedule.from_mapping(spec)
        except ScheduleError as exc:
            raise PluginError(f"plugin {self._plugin!r}, schedule {spec['name']!r}: {exc}") \
                from exc
        self._add("schedule", spec["name"], dict(spec))

    def check_schedules(self) -> None:
        """Every block a registered schedule names is a registered block (an installed
        plugin whose schedule names another is skipped: :func:`manager.skip_or_raise`)."""
        blocks = self._pieces["block"]
        for name, (spec, plugin) in self._pieces["schedule"].items():
            for block in Schedule.from_mapping(spec).block_names():
                if block not in blocks:
                    manager.skip_or_raise(PluginError(
                        f"schedule {name!r} of plugin {plugin!r} names block {block!r}, "
                        f"which no plugin registers; blocks: {', '.join(sorted(blocks))}"),
                        plugin)


def _collect_parts() -> PartRegistry:
    registry = PartRegistry()
    manager.collect("causefs_register_parts", registry)
    registry.check_schedules()
    return registry


_PARTS = manager.PerGeneration(_collect_parts)


def parts() -> PartRegistry:
    """The solver parts of every registered plugin (rebuilt when the plugins change)."""
    return _PARTS.get()


def available(kind: str) -> list[str]:
    """Sorted names of the registered parts of ``kind`` (block, kernel, qp, schedule)."""
    check_choice("kind", kind, list(PartRegistry.BASES))
    return parts().names(kind)


def get_block(name: str):
    """Block class registered as ``name``."""
    return parts().get("block", name)


def get_schedule(name: str) -> dict:
    """Schedule mapping registered as ``name``."""
    return dict(parts().get("schedule", name))


def make_kernel(name: str, **options):
    """Instantiate the kernel registered as ``name`` with ``options``."""
    return construct("kernel", parts().get("kernel", name), options)


def make_qp_backend(name: str, **options):
    """Instantiate the QP backend registered as ``name`` with ``options``."""
    return construct("qp", parts().get("qp", name), options)
