"""What the process may still allocate: the machine's available memory, the headroom its
memory cgroup leaves and its address-space limit.

Free pages are not the measure: the page cache, which the kernel hands back on demand,
is not free, so after a large file was read (a dataset, a checkpoint) a machine with
23 GiB available had 2.7 GiB of free pages, and ``memory_limit="auto"`` refused a fit
estimated at 2.5 GiB. Nor is the machine: in a container, a batch job or a
``systemd-run -p MemoryMax=`` scope, the cgroup's limit is what the kernel enforces, by
killing the process (a fit estimated at 2.5 GiB in a cgroup of 1.5 GB, with the machine's
22 GiB free, was killed with no message). docs/PERFORMANCE.md, "The memory a fit may
use", has both runs.
"""

from __future__ import annotations

import os
import posixpath

from ..core.cgroups import cgroup_directories, read_number, stat_line

#: a cgroup v1 limit at or above this is no limit (the kernel writes its page counter's
#: maximum, about 2**63 bytes, for "unlimited")
UNLIMITED = 1 << 60
#: the files of a memory cgroup, by version: its limit, its usage, and the line of
#: ``memory.stat`` counting the file pages it may reclaim (v1's ``total_`` counts its
#: descendants too, as its usage does)
CGROUP_FILES = {
    "cgroup2": ("memory.max", "memory.current", "inactive_file"),
    "cgroup": ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"),
}


def machine_available(meminfo: str = "/proc/meminfo") -> int | None:
    """Bytes the machine can give a new allocation without swapping: Linux's
    ``MemAvailable`` (free memory plus the page cache and slabs it can reclaim; Linux
    3.14 and later), elsewhere the free pages (``sysconf``); None if neither is known."""
    available = stat_line(meminfo, "MemAvailable:", scale=1024, default=None)  # kB
    if available is not None:
        return available
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        return None


def cgroup_headroom(proc_self: str = "/proc/self") -> int | None:
    """Bytes the memory cgroups of the process let it allocate, or None without a limit.

    The process's cgroup and each of its ancestors with a limit (v2 ``memory.max``, v1
    ``memory.limit_in_bytes``) leave ``limit - usage + inactive file pages``; the least
    of them is returned (the cgroups as :mod:`causefs.core.cgroups` finds them).
    """
    least = None
    for fstype, directories in cgroup_directories("memory", proc_self):
        limit_file, usage_file, reclaimable_line = CGROUP_FILES[fstype]
        for directory in directories:  # the cgroup, then its ancestors
            limit = read_number(posixpath.join(directory, limit_file))
            if limit is None or limit >= UNLIMITED:
                continue
            usage = read_number(posixpath.join(directory, usage_file)) or 0
            reclaimable = stat_line(posixpath.join(directory, "memory.stat"),
                                    reclaimable_line)
            headroom = max(0, limit - usage + reclaimable)
            least = headroom if least is None else min(least, headroom)
    return least


def address_space_headroom(status: str = "/proc/self/status") -> int | None:
    """Bytes of address space the process may still map under its ``RLIMIT_AS`` (``ulimit
    -v``, some batch schedulers' memory limit: past it an allocation fails), or None
    without a limit or where the process's mapped size is not known."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    mapped = stat_line(status, "VmSize:", scale=1024, default=None)
    return None if mapped is None else max(0, soft - mapped)
