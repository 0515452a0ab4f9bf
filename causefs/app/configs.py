"""Hydra config nodes generated from the plugin registries and the constructors.

Every registered kernel, QP backend, schedule and selector gets a node in its config
group (``kernel/``, ``qp/``, ``schedule/``, ``method/``), and every block a node
``block/<name>`` listing its options, so ``causefs kernel=<any registered name>``
composes for third-party plugins too. A node is ``{"name": ..., **defaults}`` with the
defaults read from the code (a constructor's signature, or for ``method=causefs`` the
settings table :class:`causefs.model.settings.Settings`): the code is their single
source. A method option named like a part group (``schedule``, ``kernel``, ``qp``) takes
that group's node, so ``causefs schedule=ablation_I`` reaches CAUSE-FS. A schedule's
YAML file under ``conf/schedule/`` is its source and its node.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources

from hydra.core.config_store import ConfigStore

from ..core.validation import InvalidParameterError, config_value, constructor_defaults
from ..plugins.registry import get_schedule, parts
from ..selectors.catalog import selectors

#: config groups of the parts a method may take as options
PART_GROUPS = ("schedule", "kernel", "qp")


def _node(name: str, defaults: Mapping) -> dict:
    # the registries refused pieces whose defaults a config cannot hold
    return {"name": name, **{key: config_value(value) for key, value in defaults.items()}}


def config_nodes() -> dict:
    """``{group: {name: node}}`` for every registered piece."""
    registry = parts()
    nodes = {
        group: {n: _node(n, constructor_defaults(registry.get(group, n)))
                for n in registry.names(group)}
        for group in ("kernel", "qp")
    }
    nodes["schedule"] = {n: get_schedule(n) for n in registry.names("schedule")}
    # the estimator's default, resolved when the fit knows whether Z is given
    nodes["schedule"]["auto"] = {"name": "auto"}
    nodes["block"] = {}
    for name in registry.names("block"):
        cls = registry.get("block", name)
        nodes["block"][name] = _node(name, constructor_defaults(cls, skip=cls.requires))
    methods = selectors()
    nodes["method"] = {}
    for name in methods.names("selector"):
        cls = methods.get("selector", name)
        node = _node(name, cls.defaults())
        node.update({group: f"${{{group}}}" for group in PART_GROUPS if group in node})
        nodes["method"][name] = node
    return nodes


def register_configs(store: ConfigStore | None = None) -> None:
    """Store the nodes of :func:`config_nodes` in Hydra's ConfigStore (call before
    composing; the CLI does at start)."""
    store = store if store is not None else ConfigStore.instance()
    packaged = resources.files("causefs.conf")
    for group, nodes in config_nodes().items():
        for name, node in nodes.items():
            # a node next to a YAML file of the same name would become its schema
            if not packaged.joinpath(group, f"{name}.yaml").is_file():
                store.store(group=group, name=name, node=node, provider="causefs")


def check_schedule_config(spec: Mapping) -> None:
    """Refuse a schedule config that names a registered schedule but lists other parts.

    ``causefs schedule.name=ablation_I`` renames the default schedule instead of
    choosing ablation I (that is ``schedule=ablation_I``); a schedule whose blocks were
    edited must get a name of its own, so results are not filed under the wrong name.

    Raises
    ------
    InvalidParameterError
    """
    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():  # schedule.name=nan, =1e3, =null
        raise InvalidParameterError(
            f"schedule.name={name!r}: must be a name (text); the command line reads "
            f"nan, null, true and numbers as values: quote it, schedule.name='{name}'")
    if name not in parts().names("schedule"):
        return
    registered = get_schedule(name)
    fields = ("init", "loop", "terms", "stopping", "setting_defaults")
    if any((_as_plain(spec.get(f)) or None) != (_as_plain(registered.get(f)) or None)
           for f in fields):
        raise InvalidParameterError(
            f"the schedule config is named {name!r}, a registered schedule, but its blocks, "
            "terms, stopping rules or setting_defaults differ from it; choose a registered "
            f"schedule with schedule={name}, and give an edited schedule a new name "
            "(schedule.name=my_schedule)")


def _as_plain(value):
    """Dicts and lists for mappings and sequences (a composed config and a registered
    schedule then compare equal)."""
    if isinstance(value, Mapping):
        return {k: _as_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_plain(v) for v in value]
    return value
