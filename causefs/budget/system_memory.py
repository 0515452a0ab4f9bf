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
    try:
        with open(meminfo) as lines:
            for line in lines:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024  # the kernel writes kB
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        return None


def cgroup_headroom(proc_self: str = "/proc/self") -> int | None:
    """Bytes the memory cgroups of the process let it allocate, or None without a limit.

    The process's cgroup and each of its ancestors with a limit (v2 ``memory.max``, v1
    ``memory.limit_in_bytes``) leave ``limit - usage + inactive file pages``; the least
    of them is returned. The cgroup is found as the kernel names it in
    ``/proc/self/cgroup``, under the mount of its hierarchy in ``/proc/self/mountinfo``
    (in a container the mount's root is the container's cgroup).
    """
    least = None
    for fstype, mount_point, parts in _memory_cgroups(proc_self):
        limit_file, usage_file, reclaimable_line = CGROUP_FILES[fstype]
        for depth in range(len(parts), -1, -1):  # the cgroup, then its ancestors
            directory = posixpath.join(mount_point, *parts[:depth])
            limit = _read_number(posixpath.join(directory, limit_file))
            if limit is None or limit >= UNLIMITED:
                continue
            usage = _read_number(posixpath.join(directory, usage_file)) or 0
            reclaimable = _stat_line(posixpath.join(directory, "memory.stat"),
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
    mapped = _stat_line(status, "VmSize:", scale=1024, default=None)
    return None if mapped is None else max(0, soft - mapped)


def _memory_cgroups(proc_self: str):
    """``(fstype, mount point, path)`` of every memory cgroup of the process, ``path``
    the list of directories from the mount point down to its cgroup: v2's unified one and
    v1's ``memory`` hierarchy (a machine may mount both)."""
    paths = {}
    try:
        with open(posixpath.join(proc_self, "cgroup")) as handle:
            for line in handle.read().splitlines():
                # hierarchy:controllers:path, and the path may hold colons
                hierarchy, controllers, path = line.split(":", 2)
                if hierarchy == "0":  # v2's one hierarchy; v1's are numbered from 1
                    paths["cgroup2"] = path
                elif "memory" in controllers.split(","):
                    paths["cgroup"] = path
        with open(posixpath.join(proc_self, "mountinfo")) as handle:
            mounts = handle.read().splitlines()
    except (OSError, ValueError):
        return []
    found = []
    for line in mounts:
        # id parent device root mount-point options [optional...] - type source options
        head, _, tail = line.partition(" - ")
        head, tail = head.split(), tail.split()
        if len(tail) < 3 or tail[0] not in paths:  # no " - ": not a mount's line
            continue
        if tail[0] == "cgroup" and "memory" not in tail[2].split(","):
            continue
        root, mount_point = head[3], head[4].replace("\\040", " ")
        inside = posixpath.relpath(paths[tail[0]], root)
        # a cgroup outside the mount's root (the host's path seen from a container
        # without a cgroup namespace) is the mount's own
        parts = [] if inside == "." or inside.startswith("..") else inside.split("/")
        found.append((tail[0], mount_point, parts))
    return found


def _read_number(path: str) -> int | None:
    """The integer a cgroup file holds; None for "max" (no limit) or no such file."""
    try:
        with open(path) as handle:
            text = handle.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _stat_line(path: str, key: str, scale: int = 1, default: int | None = 0):
    """The number after ``key`` in a ``key value`` file (``memory.stat``, ``status``)."""
    try:
        with open(path) as lines:
            for line in lines:
                fields = line.split()
                if len(fields) >= 2 and fields[0] == key:
                    return int(fields[1]) * scale
    except (OSError, ValueError):
        pass
    return default
