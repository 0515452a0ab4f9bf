"""causefs: causally-aware unsupervised feature selection (CAUSE-FS) as swappable blocks.

Use :class:`CauseFS` as a scikit-learn selector, :func:`causefs_scores` as a
``SelectKBest`` score function, the ``causefs`` command (Hydra) for experiments, and
:mod:`causefs.testing` to test your own blocks, kernels and QP backends.
"""

from .estimator import CauseFS, CollapseWarning, causefs_scores
from .objective import ObjectiveValue, objective
from .scheduler import FitResult, Schedule, ScheduleError
from .state import Problem, State

__version__ = "0.1.0"

__all__ = [
    "CauseFS",
    "CollapseWarning",
    "FitResult",
    "ObjectiveValue",
    "Problem",
    "Schedule",
    "ScheduleError",
    "State",
    "causefs_scores",
    "objective",
    "__version__",
]
