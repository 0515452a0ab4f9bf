"""Hook specifications: what a causefs plugin may provide.

A plugin is a module or object with ``@hookimpl`` functions named as below, registered
through the ``causefs`` entry-point group::

    [project.entry-points.causefs]
    myplugin = "mypackage.causefs_plugin"

Each hook receives a registry object and adds pieces to it; the registry validates every
piece when it is added and refuses a name another plugin already took, naming both
plugins. Solver parts (what one fit is made of) and selectors (the methods an experiment
compares, which sit above the estimator) are two layers with a hook each. A function
marked ``@hookimpl`` whose name is not one of these hooks is an error at load time
(:meth:`pluggy.PluginManager.check_pending`), not silently ignored.
"""

from __future__ import annotations

import pluggy

PROJECT = "causefs"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def causefs_register_parts(registry):
    """Add solver parts to ``registry`` (a :class:`causefs.plugins.PartRegistry`).

    ``registry.add_block(cls)``, ``registry.add_kernel(cls)``,
    ``registry.add_qp_backend(cls)``, ``registry.add_schedule(mapping)``.
    """


@hookspec
def causefs_register_selectors(registry):
    """Add feature selectors to ``registry`` (a :class:`causefs.selectors.SelectorRegistry`).

    ``registry.add_selector(cls)``.
    """
