"""BLAS threads during a fit: one for the many small operations, all for the large ones.

Measured on 2 cores (OpenBLAS): the thin SVD of a 1440 x 20 matrix takes 0.4 ms with one
thread and 31 ms with two, and a whole COIL20 fit without the balance term took 14.7 s with
one thread against 20.8 s with two, because most of a fit's BLAS calls are too small to
share. A fit therefore runs with one BLAS thread and widens to the threads the caller had
(``OMP_NUM_THREADS``, threadpoolctl limits) only around operations above
:data:`WIDE_FLOPS`.
"""

from __future__ import annotations

import contextlib

from threadpoolctl import ThreadpoolController

#: floating-point operations above which an operation uses every thread the caller allows
WIDE_FLOPS = 2e8

_state = {"controller": None, "threads": None}


def _controller() -> ThreadpoolController:
    # created on first use, once numpy's, scipy's and scikit-learn's libraries are loaded
    if _state["controller"] is None:
        _state["controller"] = ThreadpoolController()
    return _state["controller"]


@contextlib.contextmanager
def fit_threads():
    """Run the body with one BLAS/OpenMP thread, remembering the caller's numbers."""
    controller = _controller()
    outer = _state["threads"]
    _state["threads"] = max([info["num_threads"] for info in controller.info()] or [1])
    try:
        with controller.limit(limits=1):
            yield
    finally:
        _state["threads"] = outer


@contextlib.contextmanager
def threads_for(flops: float):
    """Inside :func:`fit_threads`: the caller's threads for an operation of ``flops``."""
    threads = _state["threads"]
    if threads is None or threads <= 1 or flops < WIDE_FLOPS:
        yield
        return
    with _controller().limit(limits=threads, user_api="blas"):
        yield
