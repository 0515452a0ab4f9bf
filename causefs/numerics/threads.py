"""BLAS threads during a fit: one for the many small operations, all for the large ones.

Most of a fit's BLAS calls are too small to share between threads, and sharing them made
them slower (docs/PERFORMANCE.md, "Threads"). A fit therefore runs with one BLAS thread
and widens to the threads the caller had (``OMP_NUM_THREADS``, threadpoolctl limits) only
around operations above :data:`WIDE_FLOPS`.
"""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

from threadpoolctl import ThreadpoolController

#: floating-point operations above which an operation uses every thread the caller allows
WIDE_FLOPS = 2e8


class _Threads:
    """The thread controller of the current fit and the caller's thread count."""

    def __init__(self):
        self._controller = None
        self.caller = None  # None outside a fit
        # set in parallel_map's workers: threadpoolctl's limits are process-wide, so a
        # worker widening BLAS would widen it under the other workers too
        self.worker = threading.local()

    @property
    def controller(self) -> ThreadpoolController:
        if self._controller is None:
            self._controller = ThreadpoolController()
        return self._controller

    def refresh(self) -> ThreadpoolController:
        """A controller of the libraries loaded now: one made earlier does not know (and
        would not limit) a BLAS loaded since, e.g. by a plugin (about 3 ms)."""
        self._controller = ThreadpoolController()
        return self._controller


_THREADS = _Threads()


@contextlib.contextmanager
def fit_threads():
    """Run the body with one BLAS/OpenMP thread, remembering the caller's numbers."""
    outer = _THREADS.caller
    controller = _THREADS.controller if outer is not None else _THREADS.refresh()
    _THREADS.caller = max([info["num_threads"] for info in controller.info()] or [1])
    try:
        with controller.limit(limits=1):
            yield
    finally:
        _THREADS.caller = outer


def caller_threads() -> int:
    """The threads the caller of the fit allows (1 outside a fit and inside a worker of
    :func:`parallel_map`)."""
    if getattr(_THREADS.worker, "active", False):
        return 1
    return _THREADS.caller or 1


@contextlib.contextmanager
def threads_for(flops: float):
    """Inside :func:`fit_threads`: the caller's threads for an operation of ``flops``."""
    threads = caller_threads()
    if threads <= 1 or flops < WIDE_FLOPS:
        yield
        return
    with _THREADS.controller.limit(limits=threads, user_api="blas"):
        yield


def parallel_map(function, items) -> list:
    """``[function(item) for item in items]``, on the caller's threads inside a fit.

    For independent pieces of work whose NumPy, SciPy and BLAS calls release the GIL
    (the granular graphs): each call's BLAS stays on one thread (:func:`threads_for`
    does not widen inside a worker), so the threads do not oversubscribe the cores.
    The results come back in the items' order whatever the threads' timing.
    """
    items = list(items)
    workers = min(caller_threads(), len(items))
    if workers <= 1:
        return [function(item) for item in items]

    def work(item):
        _THREADS.worker.active = True
        try:
            return function(item)
        finally:
            _THREADS.worker.active = False

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(work, items))

