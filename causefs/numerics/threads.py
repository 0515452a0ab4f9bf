"""BLAS threads during a fit: one for the many small operations, all for the large ones.

Most of a fit's BLAS calls are too small to share between threads, and sharing them made
them slower (docs/PERFORMANCE.md, "Threads"). A fit therefore runs with one BLAS thread
and widens to the threads the caller had (``OMP_NUM_THREADS``, threadpoolctl limits) only
around operations above :data:`WIDE_FLOPS`, and only onto cores other processes leave
idle (:func:`busy_elsewhere`): OpenBLAS's threads wait for each other by spinning and
yielding, so a widened operation on cores another process keeps busy ran many times
slower than on one thread (COIL20's default fit beside four single-threaded jobs on two
cores: 31.8 s against 5.5 s with one thread, docs/PERFORMANCE.md, "Threads").
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from threadpoolctl import ThreadpoolController

from ..core.cgroups import cpu_quota

#: floating-point operations above which an operation uses every thread the caller allows
WIDE_FLOPS = 2e8
#: ... but the balance operators' products (``X_V' diag(v) A_T``: an output of d x |T|
#: with a long inner dimension, which OpenBLAS shares out between threads) widen from
#: this many. On the AMD EPYC (2 cores, idle), float32 products of 1e7-2e8 flops took
#: 0.5-0.8x their one-thread time on two; the full schedule's fits with this at 5e7
#: against 2e8 took 0.78x the time on UMIST, 0.85-0.92x on JAFFE, 0.90x on COIL20, 0.97x
#: on USPS, the same on digits, with the same iterations and top 20; at 1e7, digits
#: took 1.2x (benchmarks/balance_threads.py; docs/PERFORMANCE.md, "Threads for the
#: balance products")
PRODUCT_WIDE_FLOPS = 5e7
#: seconds over which the cores other processes keep busy are measured (a shorter
#: interval is noise: the kernel counts CPU time in ticks of 10 ms)
BUSY_INTERVAL = 0.25
#: cores other processes may keep busy before a widened operation loses a thread: the
#: threads a fit widens to are those the caller allows less the cores busy elsewhere,
#: rounded (half a core busy elsewhere still leaves two of two threads)
BUSY_ROUNDING = 0.5
#: several graphs of fewer samples than this are built one after another, not in
#: parallel: a small graph's many short NumPy calls hold the GIL, and two threads
#: contending for it cost more than they share. Inside default fits (2 cores, idle), the
#: graph blocks took 0.37-0.79x the time built one after another at 70-500 samples (three
#: development sets, JAFFE, digits subsets; one run of 300 samples 1.03x, two others
#: 0.66-0.72x), 0.75-1.02x at 756-1000, 1.12-1.50x at 1404-1797, 1.19x at UMIST's 575
#: in 20 clusters (benchmarks/graph_threads.py; docs/PERFORMANCE.md, "Small graphs on
#: one thread")
PARALLEL_GRAPHS_N = 500


class _Threads:
    """The thread controller of the current fit and the caller's thread count."""

    def __init__(self):
        self._controller = None
        self.caller = None  # None outside a fit
        # set in parallel_map's workers (``pool``: the map the worker's item belongs
        # to): threadpoolctl's limits are process-wide, so a worker widening BLAS would
        # widen it under the other workers too
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


def _cpu_seconds() -> tuple[float, float] | None:
    """(CPU seconds every core of the machine has been busy, CPU seconds of this
    process), from ``/proc/stat`` and :func:`os.times`; None where there is no
    ``/proc/stat`` (not Linux)."""
    try:
        with open("/proc/stat", "rb") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    # cpu  user nice system idle iowait irq softirq steal ...: idle and iowait are idle
    ticks = [int(v) for v in fields[1:9]]
    busy = sum(ticks) - ticks[3] - ticks[4]
    own = os.times()
    return busy / os.sysconf("SC_CLK_TCK"), own.user + own.system


class _BusyElsewhere:
    """Cores other processes kept busy over the last :data:`BUSY_INTERVAL` or more."""

    def __init__(self, read=_cpu_seconds, clock=time.monotonic):
        self.read, self.clock = read, clock
        self.last = None  # (time, busy, own) of the last sample
        self.cores = None  # None until an interval has been measured
        self.lock = threading.Lock()  # workers of parallel_map ask too

    def __call__(self) -> float | None:
        with self.lock:
            now = self.clock()
            if self.last is not None and now - self.last[0] < BUSY_INTERVAL:
                return self.cores
            sample = self.read()
            if sample is None:
                return 0.0  # nothing to measure with: as before (the caller's threads)
            if self.last is not None:
                elapsed = now - self.last[0]
                # the machine's busy time less this process's own (its threads included)
                others = (sample[0] - self.last[1]) - (sample[1] - self.last[2])
                self.cores = max(0.0, others / elapsed)
            self.last = (now, *sample)
            return self.cores


_BUSY = _BusyElsewhere()


def busy_elsewhere() -> float | None:
    """Cores other processes kept busy lately: the machine's busy CPU time less this
    process's over the last interval of at least :data:`BUSY_INTERVAL` (None before a
    first interval is measured; 0.0 where the machine's CPU time cannot be read)."""
    return _BUSY()


def process_cpus() -> int:
    """The CPUs the process may run on: those of its affinity mask (``taskset``, a
    batch job's cpuset), fewer under its cgroups' CPU quota (Docker's ``--cpus``, a
    Kubernetes CPU limit), rounded up as joblib rounds it. BLAS and OpenMP count the
    machine's CPUs and know no quota: under a quota of one CPU on two cores, default
    fits on one thread took 0.64-0.88x the median time of fits on two, the same top 20
    (benchmarks/cpu_quota.py; docs/PERFORMANCE.md, "Threads under a CPU quota")."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    quota = cpu_quota()
    return cpus if quota is None else max(1, min(cpus, math.ceil(quota)))


@contextlib.contextmanager
def fit_threads():
    """Run the body with one BLAS/OpenMP thread, remembering the caller's numbers (at
    most :func:`process_cpus`)."""
    busy_elsewhere()  # starts the interval the first widening is judged over
    outer = _THREADS.caller
    controller = _THREADS.controller if outer is not None else _THREADS.refresh()
    _THREADS.caller = min(process_cpus(), max(
        [info["num_threads"] for info in controller.info()] or [1]))
    try:
        with controller.limit(limits=1):
            yield
    finally:
        _THREADS.caller = outer


class _Pool:
    """What the workers of one :func:`parallel_map` share: the threads it was given and
    how many of its items wait or run."""

    def __init__(self, threads: int, items: int):
        self.threads, self.waiting, self.running = threads, items, 0
        self.lock = threading.Lock()

    def share(self) -> int:
        """The threads a running item of this map may work on: its own while items
        wait; once none waits, its share of the map's threads, those of the workers
        that finished included (they take no more, so the shares only grow)."""
        with self.lock:
            return 1 if self.waiting else max(1, self.threads // self.running)


def _worker_pool():
    """The :class:`_Pool` of the :func:`parallel_map` whose item this thread runs, or
    None (not a worker)."""
    return getattr(_THREADS.worker, "pool", None)


def in_worker() -> bool:
    """Whether this thread runs an item of a :func:`parallel_map` on a worker thread."""
    return _worker_pool() is not None


def caller_threads() -> int:
    """The threads the caller of the fit allows (1 outside a fit); inside a worker of
    :func:`parallel_map`, 1 while other items wait, then the item's share of the
    map's threads (the last items of uneven work, e.g. a third granular graph on two
    cores, spread their own parallel work over the cores the others left idle)."""
    pool = _worker_pool()
    if pool is not None:
        return pool.share()
    return _THREADS.caller or 1


def wide_threads() -> int:
    """The BLAS threads a large operation gets now: the caller's, less the cores other
    processes keep busy (rounded; one while that is not yet measured)."""
    threads = caller_threads()
    if threads <= 1:
        return 1
    busy = busy_elsewhere()
    if busy is None:
        return 1
    return max(1, min(threads, int((os.cpu_count() or 1) - busy + BUSY_ROUNDING)))


@contextlib.contextmanager
def threads_for(flops: float, wide_from: float | None = None):
    """Inside :func:`fit_threads`: the threads of :func:`wide_threads` for an operation
    of ``flops`` from ``wide_from`` (default :data:`WIDE_FLOPS`), one below.

    ``wide_from`` is for operations measured to gain from threads at fewer flops than
    most of a fit's (:data:`PRODUCT_WIDE_FLOPS`).
    """
    threshold = WIDE_FLOPS if wide_from is None else wide_from
    # never in a worker: BLAS's limits are the process's, another worker's too
    threads = 1 if flops < threshold or in_worker() else wide_threads()
    if threads <= 1:
        yield
        return
    with _THREADS.controller.limit(limits=threads, user_api="blas"):
        yield


def parallel_map(function, items, threads: int | None = None) -> list:
    """``[function(item) for item in items]``, on the caller's threads inside a fit.

    For independent pieces of work whose NumPy, SciPy and BLAS calls release the GIL
    (the granular graphs): each call's BLAS stays on one thread (:func:`threads_for`
    does not widen inside a worker), so the threads do not oversubscribe the cores.
    The results come back in the items' order whatever the threads' timing.
    ``threads`` caps the workers below the caller's (:func:`wide_threads`: the cores
    other processes leave idle). Once no item waits, a running item's own parallel
    work (a nested ``parallel_map``, an HNSW search) may spread over the threads of the
    workers that finished (:func:`caller_threads`): uneven items, such as a large
    feature group's search beside a small one's, no longer leave a core idle at the end.
    """
    items = list(items)
    allowed = caller_threads() if threads is None else min(threads, caller_threads())
    workers = min(allowed, len(items))
    if workers <= 1:
        return [function(item) for item in items]
    pool = _Pool(allowed, len(items))

    def work(item):
        with pool.lock:
            pool.waiting -= 1
            pool.running += 1
        _THREADS.worker.pool = pool
        try:
            return function(item)
        finally:
            _THREADS.worker.pool = None
            with pool.lock:
                pool.running -= 1

    with ThreadPoolExecutor(max_workers=workers) as executor:
        return list(executor.map(work, items))


def graph_threads(n: int) -> int | None:
    """The ``threads`` of the :func:`parallel_map` that builds several adaptive-neighbour
    graphs of ``n`` samples: 1 below :data:`PARALLEL_GRAPHS_N`, else None (the
    caller's)."""
    return 1 if n < PARALLEL_GRAPHS_N else None
