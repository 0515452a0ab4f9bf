"""BLAS threads during a fit: one for the many small operations, all for the large ones.

Most of a fit's BLAS calls are too small to share between threads, and sharing them made
them slower (docs/PERFORMANCE.md, "Threads"). A fit therefore runs with one BLAS thread
and widens to the threads the caller had (``OMP_NUM_THREADS``, threadpoolctl limits) only
around operations above :data:`WIDE_FLOPS`.
"""

from __future__ import annotations

import contextlib

from threadpoolctl import ThreadpoolController

#: floating-point operations above which an operation uses every thread the caller allows
WIDE_FLOPS = 2e8


class _Threads:
    """The thread controller (made on first use, once numpy's, scipy's and
    scikit-learn's libraries are loaded) and the caller's thread count during a fit."""

    def __init__(self):
        self._controller = None
        self.caller = None  # None outside a fit

    @property
    def controller(self) -> ThreadpoolController:
        if self._controller is None:
            self._controller = ThreadpoolController()
        return self._controller


_THREADS = _Threads()


@contextlib.contextmanager
def fit_threads():
    """Run the body with one BLAS/OpenMP thread, remembering the caller's numbers."""
    controller = _THREADS.controller
    outer = _THREADS.caller
    _THREADS.caller = max([info["num_threads"] for info in controller.info()] or [1])
    try:
        with controller.limit(limits=1):
            yield
    finally:
        _THREADS.caller = outer


def caller_threads() -> int:
    """The threads the caller of the fit allows (1 outside a fit)."""
    return _THREADS.caller or 1


@contextlib.contextmanager
def threads_for(flops: float):
    """Inside :func:`fit_threads`: the caller's threads for an operation of ``flops``."""
    threads = _THREADS.caller
    if threads is None or threads <= 1 or flops < WIDE_FLOPS:
        yield
        return
    with _THREADS.controller.limit(limits=threads, user_api="blas"):
        yield
