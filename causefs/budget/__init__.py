"""Before a fit starts: how long it will take and how much memory it will need.

Every part of the resolved schedule (block, kernel, QP backend) declares what one use of
it costs (:meth:`causefs.core.parts.Part.cost`); :func:`estimate_fit` adds them up over
the initialization and the iterations the fit is priced at (``max_iter``, or fewer
for a fit with stopping rules: :func:`expected_iterations`). Plugin parts are estimated
the same way (a part that declares nothing counts as free).
"""

from .fit import EXPECTED_ITERATIONS, FitEstimate, estimate_fit, expected_iterations
from .memory import (MemoryEstimate, MemoryLimitError, check_memory, parse_memory_limit,
                     per_feature_floor)
from .runtime import ANNOUNCED_FIT_SECONDS, LONG_FIT_SECONDS

__all__ = ["ANNOUNCED_FIT_SECONDS", "EXPECTED_ITERATIONS", "FitEstimate", "LONG_FIT_SECONDS",
           "MemoryEstimate", "MemoryLimitError", "check_memory", "estimate_fit",
           "expected_iterations", "parse_memory_limit", "per_feature_floor"]
