"""Progress of a long phase, logged while it runs.

A fit's phases (a block's step: a neighbour search over 300,000 points, an eigensolver)
are single calls that can run for minutes without returning to the loop that logs
iterations. :class:`Heartbeat` logs from a daemon thread what is running and for how
long, at growing intervals, while the caller's thread works (NumPy, SciPy and faiss
release the interpreter lock in their long loops, so the thread gets to run).
"""

from __future__ import annotations

import logging
import threading
import time

_LOCAL = threading.local()  # the heartbeat of the fit running in this thread, if any

#: a phase is reported once it has run this many seconds ...
FIRST_REPORT = 5.0
#: ... and then at intervals of a quarter of its time so far, at most this many seconds
LONGEST_SILENCE = 30.0


class Heartbeat:
    """Log at INFO what the caller is doing while it runs longer than a few seconds.

    Use as a context manager; :meth:`doing` (or :func:`phase`, for code that does not
    hold the heartbeat) names the current phase. A phase is logged
    after :data:`FIRST_REPORT` seconds, then every ``max(FIRST_REPORT, elapsed / 4)``
    seconds, at most :data:`LONGEST_SILENCE` apart::

        block 'initial_fused_graph' (iteration 0) running for 12 s
    """

    def __init__(self, logger: logging.Logger, check_every: float = 1.0):
        self.logger, self.check_every = logger, check_every
        self._phase = None  # (name, start): replaced whole, read whole (no lock needed)
        self._stop = threading.Event()
        self._thread = None

    def doing(self, phase: str) -> None:
        """Start timing ``phase`` (a new phase replaces the current one)."""
        self._phase = (phase, time.perf_counter())

    def __enter__(self) -> "Heartbeat":
        self._outer, _LOCAL.active = getattr(_LOCAL, "active", None), self
        if self.logger.isEnabledFor(logging.INFO):  # nobody listens: no thread
            self._thread = threading.Thread(target=self._beat, name="causefs-heartbeat",
                                            daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        _LOCAL.active = self._outer
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _beat(self) -> None:
        reported = None  # (phase, time of the last report)
        while not self._stop.wait(self.check_every):
            current = self._phase
            if current is None:
                continue
            name, start = current
            now = time.perf_counter()
            last = reported[1] if reported is not None and reported[0] is current else start
            wait = FIRST_REPORT if last == start else min(LONGEST_SILENCE,
                                                          max(FIRST_REPORT, (now - start) / 4))
            if now - last >= wait:
                self.logger.info("%s running for %.0f s", name, now - start)
                reported = (current, now)


def phase(name: str) -> None:
    """Name the current phase of the heartbeat active in this thread (none: nothing)."""
    active = getattr(_LOCAL, "active", None)
    if active is not None:
        active.doing(name)
