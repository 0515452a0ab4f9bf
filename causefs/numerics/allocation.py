"""Large temporaries during a fit reuse the process's memory instead of fresh pages.

A fit allocates and frees arrays of ``n x (group size)`` floats many times an iteration
(the W system's Laplacian products, the graphs' searches, the embedding's directions).
glibc's ``malloc`` serves every block above 32 MiB (and, by its dynamic threshold, many
smaller ones) with its own ``mmap`` and gives it back with ``munmap`` when it is freed,
so the next such array starts on pages the kernel must find, zero and map again. On
the 2-core VMs the benchmarks run on, those pages cost about 3 s a GiB once the host
has taken them back (a few seconds after they were freed): inside a 100,000 x 256 fit,
a sparse product writing 173 MB took 1.1 s the first time and 0.1 s when repeated
(docs/PERFORMANCE.md, "Memory kept by the allocator").

:func:`retained_memory` therefore tells glibc, for the duration of a fit, to serve
large blocks from its heap (``M_MMAP_MAX = 0``) and not to give the heap's free top back
to the kernel (``M_TRIM_THRESHOLD``), so a freed temporary's pages serve the next one.
On leaving, it restores glibc's defaults and returns the free memory with
``malloc_trim(0)``. The numbers computed do not change, only where the arrays live.

The price is the heap's fragmentation: blocks freed in its middle stay resident, so the
peak grows (2.53 GiB for 2.30 at 100,000 x 256; 8.28 GiB for 6.21 at 1,000,000 x 64,
which then took 560.7 s for 673.0). A fit therefore keeps its memory only when its
estimated peak is at most :data:`RETAINED_SHARE` of the memory available
(:func:`worth_retaining`), and the environment variable ``CAUSEFS_RETAIN_MEMORY``
overrides that: ``0`` never, ``1`` always.

The policy is the process's, not the thread's: it is applied when the first fit of the
process that keeps its memory starts and restored when the last such one ends (fits in
threads nest). It does nothing where the C library is not glibc.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import platform
import threading

#: mallopt's parameters (glibc's malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
#: glibc's defaults, restored after the last fit (malloc.h: DEFAULT_TRIM_THRESHOLD,
#: DEFAULT_MMAP_MAX)
DEFAULT_TRIM_THRESHOLD = 128 * 1024
DEFAULT_MMAP_MAX = 65536
#: the heap's free top kept during a fit: all of it (the largest value mallopt takes)
RETAINED_TRIM_THRESHOLD = 2**31 - 1
#: the environment variable that overrides the choice by size: "0" never, "1" always
SWITCH = "CAUSEFS_RETAIN_MEMORY"
#: the share of the available memory a fit's estimated peak may take for the fit to keep
#: its freed blocks (the heap's fragmentation added 10-33 % to the measured peaks)
RETAINED_SHARE = 0.25

_lock = threading.Lock()
_depth = 0


def glibc():
    """The process's C library through ctypes when it is glibc with ``mallopt``, else
    None (musl, macOS, Windows: the policy is then a no-op)."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    if not (hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim")):
        return None
    libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    libc.malloc_trim.argtypes = (ctypes.c_size_t,)
    return libc


def worth_retaining(expected_peak: float | None, available: float | None) -> bool:
    """Whether a fit whose estimated peak is ``expected_peak`` bytes keeps its freed
    blocks, with ``available`` bytes of memory available (None: unknown): ``1`` or ``0``
    in ``CAUSEFS_RETAIN_MEMORY`` decide; else only a peak of at most
    :data:`RETAINED_SHARE` of a known available memory."""
    switch = os.environ.get(SWITCH, "").strip()
    if switch in ("0", "1"):
        return switch == "1"
    return (expected_peak is not None and available is not None
            and expected_peak <= RETAINED_SHARE * available)


@contextlib.contextmanager
def retained_memory(active: bool = True):
    """Keep freed large blocks in the heap while the block runs, if ``active`` (see the
    module)."""
    global _depth
    libc = glibc() if active else None
    if libc is None:
        yield
        return
    with _lock:
        if _depth == 0:
            libc.mallopt(M_MMAP_MAX, 0)
            libc.mallopt(M_TRIM_THRESHOLD, RETAINED_TRIM_THRESHOLD)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                libc.mallopt(M_MMAP_MAX, DEFAULT_MMAP_MAX)
                libc.mallopt(M_TRIM_THRESHOLD, DEFAULT_TRIM_THRESHOLD)
                libc.malloc_trim(0)
