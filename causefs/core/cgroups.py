"""The process's cgroups: where Linux keeps the limits it enforces on a container, a batch
job or a systemd scope, which the machine's own figures (``/proc/meminfo``, the CPU
count) do not show.

A cgroup is found as the kernel names it in ``/proc/self/cgroup``, under the mount of its
hierarchy in ``/proc/self/mountinfo`` (in a container the mount's root is the
container's own cgroup); a limit may sit on the cgroup or on any of its ancestors, so
each is read. Used by the memory budget (:mod:`causefs.budget.system_memory`) and the
fit's threads (:func:`causefs.numerics.threads.process_cpus`).
"""

from __future__ import annotations

import posixpath


def cgroup_directories(controller: str, proc_self: str = "/proc/self") -> list:
    """``(fstype, directories)`` of the process's cgroups that may hold ``controller``'s
    files (``"memory"``, ``"cpu"``): v2's unified hierarchy (``"cgroup2"``) and v1's
    hierarchy of that controller (``"cgroup"``); ``directories`` from the process's own
    cgroup up to the mount point, its ancestors in order. Empty where none is known."""
    paths = {}
    try:
        with open(posixpath.join(proc_self, "cgroup")) as handle:
            for line in handle.read().splitlines():
                # hierarchy:controllers:path, and the path may hold colons
                hierarchy, controllers, path = line.split(":", 2)
                if hierarchy == "0":  # v2's one hierarchy; v1's are numbered from 1
                    paths["cgroup2"] = path
                elif controller in controllers.split(","):
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
        if tail[0] == "cgroup" and controller not in tail[2].split(","):
            continue
        root, mount_point = head[3], head[4].replace("\\040", " ")
        inside = posixpath.relpath(paths[tail[0]], root)
        # a cgroup outside the mount's root (the host's path seen from a container
        # without a cgroup namespace) is the mount's own
        parts = [] if inside == "." or inside.startswith("..") else inside.split("/")
        found.append((tail[0], [posixpath.join(mount_point, *parts[:depth])
                                for depth in range(len(parts), -1, -1)]))
    return found


def cpu_quota(proc_self: str = "/proc/self") -> float | None:
    """CPUs' worth of time per period the process's cgroups allow it (v2 ``cpu.max``,
    v1 ``cpu.cfs_quota_us / cpu.cfs_period_us``; Docker's ``--cpus``, Kubernetes' CPU
    limit): the least over its cgroup and their ancestors, or None without a quota."""
    least = None
    for fstype, directories in cgroup_directories("cpu", proc_self):
        for directory in directories:
            if fstype == "cgroup2":
                # "max 100000" (no quota) or "<quota> <period>"
                fields = _read_text(posixpath.join(directory, "cpu.max")).split()
                quota, period = (fields + ["", ""])[:2]
            else:  # -1 for no quota
                quota = _read_text(posixpath.join(directory, "cpu.cfs_quota_us"))
                period = _read_text(posixpath.join(directory, "cpu.cfs_period_us"))
            if quota.isdigit() and period.isdigit() and int(period) > 0:
                share = int(quota) / int(period)
                least = share if least is None else min(least, share)
    return least


def read_number(path: str) -> int | None:
    """The integer a cgroup file holds; None for "max" (no limit) or no such file."""
    text = _read_text(path)
    return int(text) if text.isdigit() else None


def stat_line(path: str, key: str, scale: int = 1, default: int | None = 0):
    """The number after ``key`` in a ``key value`` file (``memory.stat``,
    ``/proc/self/status``), times ``scale``; ``default`` without one."""
    try:
        with open(path) as lines:
            for line in lines:
                fields = line.split()
                if len(fields) >= 2 and fields[0] == key:
                    return int(fields[1]) * scale
    except (OSError, ValueError):
        pass
    return default


def _read_text(path: str) -> str:
    """A file's text, stripped; "" where it cannot be read."""
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return ""
