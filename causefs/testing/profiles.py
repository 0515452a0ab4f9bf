"""Hypothesis profiles for causefs's checks and for plugins' own test suites.

``causefs-ci``: derandomized, no example database, so a run is reproducible and a CI
failure is a real one. ``causefs-dev``: fresh random examples every run and twice as many,
to look for counterexamples while developing. Load one in a ``conftest.py``::

    from causefs.testing.profiles import load_profile
    load_profile()          # $CAUSEFS_HYPOTHESIS_PROFILE, default "causefs-ci"
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: environment variable naming the profile :func:`load_profile` loads
ENV_VAR = "CAUSEFS_HYPOTHESIS_PROFILE"
CI, DEV = "causefs-ci", "causefs-dev"

# state strategies build arrays from a seed: slow and large draws are expected
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(CI, max_examples=25, deadline=None, derandomize=True,
                          database=None, suppress_health_check=_QUIET)
settings.register_profile(DEV, max_examples=50, deadline=None, suppress_health_check=_QUIET)


def load_profile(name: str | None = None) -> str:
    """Load profile ``name`` (default: ``$CAUSEFS_HYPOTHESIS_PROFILE`` or causefs-ci)."""
    name = name or os.environ.get(ENV_VAR) or CI
    if name not in (CI, DEV):
        raise ValueError(f"unknown hypothesis profile {name!r}; causefs has {CI}, {DEV}")
    settings.load_profile(name)
    return name
