"""Large temporaries during a fit reuse the process's memory instead of fresh pages.

A fit allocates and frees arrays of ``n x (group size)`` floats many times an iteration
(the W system's Laplacian products, the graphs' searches, the embedding's directions).
glibc's ``malloc`` serves every block above 32 MiB (and, by its dynamic threshold, many
smaller ones) with its own ``mmap`` and gives it back with ``munmap`` when it is freed,
so the next such array starts on pages the kernel must find, zero and map again. On
the 2-core VMs the benchmarks run on, those pages cost about 3 s a GiB once the host
has taken them back (a few seconds after they were freed): a 173 MB temporary took
1.1 s to fill on first touch and 0.1 s the second time, inside a 100,000 x 256 fit
(docs/PERFORMANCE.md, "Memory kept by the allocator").

:func:`retained_memory` therefore tells glibc, for the duration of a fit, to serve
large blocks from its heap (``M_MMAP_MAX = 0``) and not to give the heap's free top back
to the kernel (``M_TRIM_THRESHOLD``), so a freed temporary's pages serve the next one.
On leaving, it restores glibc's defaults and returns the free memory with
``malloc_trim(0)``. The numbers computed do not change, only where the arrays live.

The policy is the process's, not the thread's: it is applied when the first fit of the
process starts and restored when the last running one ends (fits in threads nest).
It does nothing where the C library is not glibc, and nothing when the environment
variable ``CAUSEFS_RETAIN_MEMORY`` is ``0`` (then every fit allocates as before).
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
#: the environment variable that switches the policy off ("0")
SWITCH = "CAUSEFS_RETAIN_MEMORY"

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


def enabled() -> bool:
    """Whether fits keep their memory: not switched off by ``CAUSEFS_RETAIN_MEMORY=0``."""
    return os.environ.get(SWITCH, "1").strip() != "0"


@contextlib.contextmanager
def retained_memory():
    """Keep freed large blocks in the heap while the block runs (see the module)."""
    global _depth
    libc = glibc() if enabled() else None
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
