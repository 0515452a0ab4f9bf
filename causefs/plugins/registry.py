"""Registries of named pieces, filled by the plugins' registration hooks.

A registry belongs to one plugin manager (:meth:`causefs.plugins.PluginManager.registry`
builds it, and builds it again when the registered plugins change): there is no
module-level table. Each piece is remembered with the plugin that added it, so an error
names the plugin at fault.
"""

from __future__ import annotations

import inspect
import sys
import traceback
from collections.abc import Mapping

from ..blocks import EVERY_TERM, Block
from ..core.convergence import StoppingRule
from ..core.schedule import Schedule, ScheduleError
from ..core.state import Field
from ..core.validation import check_choice, config_value, constructor_defaults, construct
from ..kernels import Kernel
from ..qp import QPBackend
from ..terms import Term
from .manager import plugin_manager


class PluginError(ValueError):
    """A plugin registered an invalid piece, or two plugins registered the same name
    (``plugins`` names the plugins at fault)."""

    def __init__(self, message: str, plugins: tuple = ()):
        super().__init__(message)
        self.plugins = plugins


def _code(function):
    return getattr(getattr(function, "__func__", function), "__code__", None)


class Registry:
    """Pieces of some kinds by name, each remembered with the plugin that added it.

    ``HOOKS`` maps every hook the registry is filled by to the kind it adds. The hooks
    are called through the manager's hook callers (:meth:`collect`); a piece is filed
    under the plugin whose hook implementation added it (found on the call stack).
    """

    #: kind -> base class every piece of that kind subclasses
    BASES: dict = {}
    #: hook name -> the kind of piece it adds
    HOOKS: dict = {}

    def __init__(self, manager=None):
        self._manager = manager
        self._pieces = {kind: {} for kind in self.BASES}
        self._impls: dict = {}  # code object of a hook implementation -> its plugin

    @classmethod
    def collect(cls, manager) -> "Registry":
        """A registry filled by calling every hook of ``HOOKS`` on ``manager``.

        An error raised while a plugin's hook runs, or a piece it adds that does not
        validate, skips an installed plugin (:meth:`PluginManager.skip_or_raise`) and is
        raised otherwise.
        """
        registry = cls(manager)
        for hook_name in cls.HOOKS:
            registry._call(hook_name)
        registry.validate()
        return registry

    def _call(self, hook_name: str) -> None:
        caller = getattr(self._manager.hook, hook_name)
        self._impls = {_code(impl.function): impl.plugin_name
                       for impl in caller.get_hookimpls()}
        try:
            caller(registry=self)
        except Exception as error:  # whatever a plugin's hook raises
            plugins = getattr(error, "plugins", ()) or (self._plugin_in(error),)
            self._manager.skip_or_raise(error, *plugins)

    def _plugin_in(self, error: BaseException) -> str | None:
        """The plugin whose hook implementation the error went through."""
        for frame, _ in traceback.walk_tb(error.__traceback__):
            if frame.f_code in self._impls:
                return self._impls[frame.f_code]
        return None

    def _calling_plugin(self) -> str | None:
        """The plugin whose hook implementation is adding a piece (outside a hook: None)."""
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code in self._impls:
                return self._impls[frame.f_code]
            frame = frame.f_back
        return None

    def _add(self, kind: str, name, piece) -> None:
        plugin = self._calling_plugin()
        if not isinstance(name, str) or not name.isidentifier():
            raise PluginError(f"plugin {plugin!r} registers a {kind} named {name!r}; "
                              "a name is an identifier such as 'my_kernel'", (plugin,))
        table = self._pieces[kind]
        if name in table:
            other, other_plugin = table[name]
            if other is piece and other_plugin == plugin:
                return
            raise PluginError(f"two plugins provide a {kind} named {name!r}: "
                              f"{other_plugin!r} ({_describe(other)}) and "
                              f"{plugin!r} ({_describe(piece)})",
                              plugins=(other_plugin, plugin))
        table[name] = (piece, plugin)

    def _add_class(self, kind: str, cls) -> None:
        plugin = self._calling_plugin()
        base = self.BASES[kind]
        if not (inspect.isclass(cls) and issubclass(cls, base)):
            raise PluginError(f"plugin {plugin!r} registers {cls!r} as a {kind}; "
                              f"a {kind} is a subclass of {base.__module__}.{base.__name__}",
                              (plugin,))
        if inspect.isabstract(cls):
            missing = sorted(cls.__abstractmethods__)
            raise PluginError(f"plugin {plugin!r} registers {kind} {cls.__name__}, "
                              f"which does not implement {missing}", (plugin,))
        # its options become a config node (causefs.app.configs): defaults a config holds
        defaults = cls.defaults() if hasattr(cls, "defaults") else constructor_defaults(
            cls, skip=getattr(cls, "requires", ()))
        for option, value in defaults.items():
            try:
                config_value(value)
            except TypeError as error:
                raise PluginError(f"plugin {plugin!r} registers {kind} {cls.__name__} "
                                  f"whose option {option} has a default that {error} (a "
                                  "str, number, bool, None, list or mapping)",
                                  (plugin,)) from None
        self._add(kind, getattr(cls, "name", None), cls)

    def names(self, kind: str) -> list[str]:
        return sorted(self._pieces[kind])

    def get(self, kind: str, name: str):
        table = self._pieces[kind]
        check_choice(kind, name, sorted(table))
        return table[name][0]

    def plugin_of(self, kind: str, name: str) -> str | None:
        """The plugin that added piece ``name`` of ``kind``."""
        return self._pieces[kind][name][1]

    def validate(self) -> None:
        """Checks across pieces, once every hook has run (none here)."""


def _describe(piece) -> str:
    if inspect.isclass(piece):
        return f"{piece.__module__}.{piece.__qualname__}"
    return repr(piece)


class PartRegistry(Registry):
    """The solver parts: state fields, blocks, objective terms, kernels, QP backends,
    stopping rules and schedules."""

    BASES = {"field": Field, "block": Block, "term": Term, "kernel": Kernel,
             "qp": QPBackend, "stopping_rule": StoppingRule, "schedule": Mapping}
    HOOKS = {"causefs_register_fields": "field", "causefs_register_blocks": "block",
             "causefs_register_terms": "term", "causefs_register_kernels": "kernel",
             "causefs_register_qp_backends": "qp",
             "causefs_register_stopping_rules": "stopping_rule",
             "causefs_register_schedules": "schedule"}

    def add_field(self, field: Field) -> None:
        """Declare a state field (:class:`~causefs.core.state.Field`)."""
        if not isinstance(field, Field):
            plugin = self._calling_plugin()
            raise PluginError(f"plugin {plugin!r} registers {field!r} as a field; a field "
                              "is a causefs.core.state.Field", (plugin,))
        self._add("field", field.name, field)

    def _add_with_fields(self, kind: str, cls) -> None:
        self._add_class(kind, cls)
        for field in getattr(cls, "fields", ()):
            self.add_field(field)

    def add_block(self, cls) -> None:
        """Add a :class:`~causefs.blocks.Block` subclass under ``cls.name`` (and the
        fields it declares)."""
        self._add_with_fields("block", cls)

    def add_term(self, cls) -> None:
        """Add a :class:`~causefs.terms.Term` subclass under ``cls.name`` (and the fields
        it declares)."""
        self._add_with_fields("term", cls)

    def add_kernel(self, cls) -> None:
        """Add a :class:`~causefs.kernels.Kernel` subclass under ``cls.name``."""
        self._add_class("kernel", cls)

    def add_qp_backend(self, cls) -> None:
        """Add a :class:`~causefs.qp.QPBackend` subclass under ``cls.name``."""
        self._add_class("qp", cls)

    def add_stopping_rule(self, cls) -> None:
        """Add a :class:`~causefs.core.convergence.StoppingRule` subclass under
        ``cls.name``."""
        self._add_class("stopping_rule", cls)

    def add_schedule(self, spec: Mapping) -> None:
        """Add a schedule ``{"name", "init", "loop", "terms", "stopping",
        "setting_defaults"}``
        (validated as a :class:`~causefs.core.schedule.Schedule`)."""
        plugin = self._calling_plugin()
        if not isinstance(spec, Mapping):
            raise PluginError(f"plugin {plugin!r} registers {spec!r} as a schedule; a "
                              "schedule is a mapping with name, init, loop, terms, stopping "
                              "and setting_defaults", (plugin,))
        if "name" not in spec:
            raise PluginError(f"plugin {plugin!r} registers a schedule without a name",
                              (plugin,))
        try:
            Schedule.from_mapping(spec)
        except ScheduleError as exc:
            raise PluginError(f"plugin {plugin!r}, schedule {spec['name']!r}: {exc}",
                              (plugin,)) from exc
        self._add("schedule", spec["name"], dict(spec))

    @property
    def fields(self) -> dict:
        """Every declared field, by name."""
        return {name: field for name, (field, _) in self._pieces["field"].items()}

    def validate(self) -> None:
        """Every field a block or term names is declared, every block writes variables,
        and every part a registered schedule names is registered (an installed plugin
        at fault is skipped: :meth:`PluginManager.skip_or_raise`)."""
        fields = self.fields
        for kind in ("block", "term"):
            for name, (cls, plugin) in self._pieces[kind].items():
                problem = _undeclared(cls, fields)
                if problem:
                    self._manager.skip_or_raise(PluginError(
                        f"{kind} {name!r} of plugin {plugin!r} {problem}"), plugin)
        for name, (spec, plugin) in self._pieces["schedule"].items():
            for kind, names in Schedule.from_mapping(spec).part_names().items():
                table, what = self._pieces[kind], kind.replace("_", " ")
                for part in names:
                    if part not in table:
                        self._manager.skip_or_raise(PluginError(
                            f"schedule {name!r} of plugin {plugin!r} names {what} {part!r}, "
                            f"which no plugin registers; {what}s: "
                            f"{', '.join(sorted(table))}"), plugin)


def _undeclared(cls, fields: Mapping) -> str | None:
    """What is wrong with the fields a block or term names, or None."""
    named = set(getattr(cls, "reads", ())) | set(getattr(cls, "optional_reads", ()))
    named |= set(getattr(cls, "writes", ())) | set(getattr(cls, "needs", ()))
    unknown = sorted(named - set(fields))
    if unknown:
        return (f"names fields {unknown} that no plugin declares (declare a new variable "
                f"in the part's fields); fields: {', '.join(sorted(fields))}")
    written = [name for name in getattr(cls, "writes", ()) if fields[name].role != "variable"]
    if written:
        return f"writes {written}, which are not variables"
    everything = getattr(cls, "derived_for", ())
    if everything != EVERY_TERM and not isinstance(everything, tuple):
        return f"has derived_for={everything!r}: a tuple of term names or {EVERY_TERM!r}"
    return None


def parts(manager=None) -> PartRegistry:
    """The solver parts of every registered plugin (of the process's plugin manager
    unless ``manager`` is given; rebuilt when the plugins change)."""
    return (manager or plugin_manager()).registry(PartRegistry)


def available(kind: str) -> list[str]:
    """Sorted names of the registered parts of ``kind`` (block, term, kernel, qp,
    stopping_rule, schedule, field)."""
    check_choice("kind", kind, sorted(PartRegistry.BASES))
    return parts().names(kind)


def get_block(name: str):
    """Block class registered as ``name``."""
    return parts().get("block", name)


def get_term(name: str):
    """Term class registered as ``name``."""
    return parts().get("term", name)


def get_stopping_rule(name: str):
    """Stopping rule class registered as ``name``."""
    return parts().get("stopping_rule", name)


def get_schedule(name: str) -> dict:
    """Schedule mapping registered as ``name``."""
    return dict(parts().get("schedule", name))


def make_kernel(name: str, **options):
    """Instantiate the kernel registered as ``name`` with ``options``."""
    return construct("kernel", parts().get("kernel", name), options)


def make_qp_backend(name: str, **options):
    """Instantiate the QP backend registered as ``name`` with ``options``."""
    return construct("qp", parts().get("qp", name), options)
