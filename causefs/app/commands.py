"""The console commands' entry points (``causefs``, ``causefs-report``, ``python -m causefs``).

They import only the core install, so a command whose optional dependencies are missing
says which extra installs them (:mod:`causefs.core.extras`) instead of failing on an
import, and ``causefs --version`` answers without Hydra.
"""

from __future__ import annotations

import contextlib
import sys
import warnings

from ..core.extras import MissingDependencyError, require


@contextlib.contextmanager
def one_line_warnings(command: str):
    """Within it, every warning is printed as one line, ``<command>: warning: <category>:
    <text>``, as the command's errors are (the library's warnings name the file, plugin
    or block they are about; Python's default form adds the library's source line)."""
    def one_line(message, category, filename, lineno, line=None) -> str:
        text = " ".join(part.strip() for part in str(message).splitlines() if part.strip())
        return f"{command}: warning: {category.__name__}: {text}\n"

    previous, warnings.formatwarning = warnings.formatwarning, one_line
    try:
        yield
    finally:
        warnings.formatwarning = previous


def _missing(command: str, error: MissingDependencyError) -> int:
    print(f"{command}: error: {error}", file=sys.stderr)
    return 2


def causefs(argv: list | None = None) -> int:
    """``causefs``: one run or a sweep (Hydra, :mod:`causefs.app.cli`); ``--version``
    prints the code's identity and the installed plugins."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--version" in argv:
        from .provenance import version_text

        print(version_text())
        return 0
    try:
        require("hydra", "cli", "the causefs command")
    except MissingDependencyError as error:
        return _missing("causefs", error)
    from .cli import main

    main()
    return 0


def causefs_report(argv: list | None = None) -> int:
    """``causefs-report``: tables and figures from a results store
    (:mod:`causefs.app.report`)."""
    from .report import main

    main(argv)
    return 0
