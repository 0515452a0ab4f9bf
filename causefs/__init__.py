"""causefs: causally-aware unsupervised feature selection (CAUSE-FS) as swappable blocks.

Use :class:`CauseFS` as a scikit-learn selector, :func:`causefs_scores` as a
``SelectKBest`` score function, the ``causefs`` command (Hydra) for experiments, and
:mod:`causefs.testing` to test your own blocks, kernels and QP backends.

The package's rooms, from the bottom up (a module imports only from rooms below its own):

- ``core``: the block-coordinate framework (state, schedules, the scheduler, block
  contracts, parts and their costs, validation of values);
- ``numerics``: neighbour search, adaptive-neighbour graphs, Laplacians, feature
  clustering, simplex projection, scaling, BLAS threads;
- ``datasets``: loaders, the paper's benchmarks, synthetic and shifted generators;
- ``model``: the CAUSE-FS model (its settings table, problem, objective, treatment
  coding and treatment sets, weight diagnostics);
- ``budget``: a fit's time and memory estimated from its parts;
- the plugin kinds ``kernels``, ``qp``, ``blocks``; the registry in ``plugins``;
- ``engine`` (names to parts, a fit), ``estimator`` (:class:`CauseFS`);
- ``selectors`` (the methods an experiment compares) and ``testing`` (the property
  suite for plugin authors);
- ``model_selection`` (:class:`LabelFreeSearch`: a selector's settings chosen without
  labels);
- ``app``: the ``causefs`` and ``causefs-report`` commands (configs, checks, store,
  evaluation protocol, metrics, report).
"""

import logging

from ._version import __version__
from .core.schedule import Schedule, ScheduleError
from .core.loop import FitResult
from .core.state import Field, State
from .core.validation import InvalidParameterError
from .estimator import (
    CauseFS,
    CollapseWarning,
    LongFitWarning,
    NuisanceUnusedWarning,
    causefs_scores,
)
from .model.nuisance_coding import NuisanceWarning
from .model.objective import Objective, ObjectiveValue, objective
from .model.problem import Problem
from .model.settings import Settings, SettingsWarning
from . import plot  # causefs.plot.report(selector, "report.png"): a fit's picture

# a library logs, the application decides where to (Python's logging HOWTO); progress of
# a fit is logged at INFO when it runs with verbose=True, at DEBUG otherwise
logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = [
    "CauseFS",
    "CollapseWarning",
    "Field",
    "FitResult",
    "InvalidParameterError",
    "LabelFreeSearch",
    "LongFitWarning",
    "NuisanceUnusedWarning",
    "NuisanceWarning",
    "Objective",
    "ObjectiveValue",
    "Problem",
    "Schedule",
    "ScheduleError",
    "Settings",
    "SettingsWarning",
    "State",
    "causefs_scores",
    "objective",
    "__version__",
]


def __getattr__(name):
    # LabelFreeSearch reads the selector layer (MCFS's graph): loaded on first use, so
    # importing the library or its engine does not load the selectors (PEP 562)
    if name == "LabelFreeSearch":
        from .model_selection import LabelFreeSearch

        return LabelFreeSearch
    raise AttributeError(f"module 'causefs' has no attribute {name!r}")
