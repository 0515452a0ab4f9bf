"""``python -m causefs``: the ``causefs`` command."""

import sys

from .app.commands import causefs

sys.exit(causefs())
