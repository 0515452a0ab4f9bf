"""Hook specifications: what a causefs plugin may provide, one hook per kind of piece.

A plugin is a module or object with ``@hookimpl`` functions named as below, registered
through the ``causefs`` entry-point group::

    [project.entry-points.causefs]
    myplugin = "mypackage.causefs_plugin"

Each hook receives a registry and adds pieces to it; the registry validates every piece
when it is added and refuses a name another plugin already took, naming both plugins.
The hooks are called through pluggy's hook callers, so the usual ordering marks
(``tryfirst``, ``trylast``) and wrappers apply; the built-in pieces register through the
same hooks (first). A function marked ``@hookimpl`` whose name is not one of these hooks
is an error at load time (:meth:`pluggy.PluginManager.check_pending`), not silently
ignored.
"""

from __future__ import annotations

import pluggy

PROJECT = "causefs"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def causefs_register_fields(registry):
    """Declare state fields: ``registry.add_field(Field(...))``
    (:class:`causefs.core.state.Field`). A block or term may instead list the fields it
    owns in its ``fields``, which are added with it."""


@hookspec
def causefs_register_blocks(registry):
    """Add :class:`causefs.blocks.Block` subclasses: ``registry.add_block(cls)``."""


@hookspec
def causefs_register_terms(registry):
    """Add objective terms, :class:`causefs.terms.Term` subclasses:
    ``registry.add_term(cls)``."""


@hookspec
def causefs_register_kernels(registry):
    """Add MMD kernels, :class:`causefs.kernels.Kernel` subclasses:
    ``registry.add_kernel(cls)``."""


@hookspec
def causefs_register_qp_backends(registry):
    """Add backends of the sample-weight QP, :class:`causefs.qp.QPBackend` subclasses:
    ``registry.add_qp_backend(cls)``."""


@hookspec
def causefs_register_stopping_rules(registry):
    """Add stopping rules, :class:`causefs.core.convergence.StoppingRule` subclasses:
    ``registry.add_stopping_rule(cls)``."""


@hookspec
def causefs_register_schedules(registry):
    """Add schedules, mappings ``{"name", "init", "loop", "terms", "stopping",
    "setting_defaults"}``: ``registry.add_schedule(mapping)``."""


@hookspec
def causefs_register_selectors(registry):
    """Add feature selectors (the methods an experiment compares, a layer above the
    estimator), :class:`causefs.selectors.Selector` subclasses:
    ``registry.add_selector(cls)``."""
