"""Seconds from counted operations: an order of magnitude, not a bound.

The rates are assumed, not measured per machine; against ``benchmarks/bench_speed.py``
the estimate ranged from 3x the measured time to a third of it (docs/PERFORMANCE.md,
"Time estimates").
"""

from __future__ import annotations

#: operations per second assumed for dense linear algebra (BLAS, one thread) and for the
#: rest (gathers, sorting, selection of nearest neighbours)
BLAS_RATE = 2e10
OTHER_RATE = 1e9
#: a fit estimated above this many seconds logs its estimate at INFO before it starts
ANNOUNCED_FIT_SECONDS = 60.0
#: a fit estimated above this many seconds is announced (logging WARNING + LongFitWarning)
LONG_FIT_SECONDS = 600.0


def seconds(flops: float, ops: float) -> float:
    """Estimated seconds of ``flops`` BLAS operations and ``ops`` other operations."""
    return flops / BLAS_RATE + ops / OTHER_RATE
