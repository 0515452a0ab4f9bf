"""Before a fit starts: how long it will take and how much memory it will need.

Every part of the resolved schedule (block, kernel, QP backend) declares what one use of
it costs (:meth:`causefs.core.parts.Part.cost`); :func:`estimate_fit` adds them up over
the initialization and ``max_iter`` iterations. Plugin parts are estimated the same way
(a part that declares nothing counts as free).
"""

from .fit import FitEstimate, estimate_fit
from .memory import MemoryEstimate, MemoryLimitError, check_memory, parse_memory_limit
from .runtime import ANNOUNCED_FIT_SECONDS, LONG_FIT_SECONDS

__all__ = ["ANNOUNCED_FIT_SECONDS", "FitEstimate", "LONG_FIT_SECONDS", "MemoryEstimate",
           "MemoryLimitError", "check_memory", "estimate_fit", "parse_memory_limit"]
