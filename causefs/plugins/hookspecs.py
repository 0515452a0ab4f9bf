"""Hook specifications: what a causefs plugin may provide.

A plugin is a module or object with ``@hookimpl`` functions named as below, registered
through the ``causefs`` entry-point group::

    [project.entry-points.causefs]
    myplugin = "mypackage.causefs_plugin"

Every hook returns a list; the registry merges the lists of all plugins and refuses two
pieces with the same name.
"""

from __future__ import annotations

import pluggy

PROJECT = "causefs"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def causefs_blocks():
    """Return a list of :class:`causefs.blocks.Block` subclasses."""


@hookspec
def causefs_kernels():
    """Return a list of :class:`causefs.kernels.Kernel` subclasses."""


@hookspec
def causefs_qp_backends():
    """Return a list of :class:`causefs.qp.QPBackend` subclasses."""


@hookspec
def causefs_selectors():
    """Return a list of :class:`causefs.selectors.Selector` subclasses (methods to compare)."""


@hookspec
def causefs_schedules():
    """Return a list of schedule mappings ``{"name", "init", "loop", "params"}``."""
