"""The memory a fit may use: the machine's available memory (not its free pages), the
memory cgroup's headroom and the address-space limit, read from files laid out as Linux
lays them out."""

import os
import resource
import subprocess
import sys

import numpy as np
import pytest
from conftest import child_cgroup, fake_proc_self, write

from causefs import CauseFS
from causefs.budget import MemoryLimitError
from causefs.budget import memory, system_memory
from causefs.budget.system_memory import (address_space_headroom, cgroup_headroom,
                                          machine_available)

GIB = 1 << 30
UNLIMITED_V1 = "9223372036854771712"  # what a v1 cgroup without a limit holds

MEMINFO = """MemTotal:       24683584 kB
MemFree:         2840264 kB
MemAvailable:   24071644 kB
Buffers:            1024 kB
Cached:         20404344 kB
"""


def test_the_machine_gives_its_available_memory_not_its_free_pages(tmp_path):
    """A machine whose page cache holds 20 GB (a large file read) has 2.7 GiB free and
    23 GiB available: the kernel reclaims the cache for a new allocation."""
    write(tmp_path / "meminfo", MEMINFO)
    assert machine_available(str(tmp_path / "meminfo")) == 24071644 * 1024


def test_without_memavailable_the_free_pages_are_taken(tmp_path, monkeypatch):
    """Linux before 3.14 (or another system): sysconf's free pages."""
    write(tmp_path / "meminfo", "MemTotal: 1000 kB\nMemFree: 10 kB\n")
    pages = {"SC_AVPHYS_PAGES": 7, "SC_PAGE_SIZE": 4096}
    monkeypatch.setattr(system_memory.os, "sysconf", pages.__getitem__)
    assert machine_available(str(tmp_path / "meminfo")) == 7 * 4096
    assert machine_available(str(tmp_path / "no_such_file")) == 7 * 4096


def v1_mount(tmp_path, root="/"):
    sysfs = tmp_path / "sys" / "memory"
    line = (f"31 25 0:28 / {tmp_path / 'sys' / 'cpu'} rw,nosuid - cgroup none rw,cpu\n"
            "not a mount\n"
            f"30 25 0:27 {root} {sysfs} rw,nosuid - cgroup memcg rw,memory\n")
    return sysfs, line


def v1_cgroup(directory, limit, usage, inactive_file):
    write(directory / "memory.limit_in_bytes", f"{limit}\n")
    write(directory / "memory.usage_in_bytes", f"{usage}\n")
    write(directory / "memory.stat",
          f"cache 100\nrss 200\ntotal_cache 300\ntotal_inactive_file {inactive_file}\n")


def test_a_v1_cgroup_leaves_its_limit_less_its_usage_plus_reclaimable_cache(tmp_path):
    sysfs, mounts = v1_mount(tmp_path)
    v1_cgroup(sysfs, UNLIMITED_V1, 20 * GIB, 0)  # the root: no limit
    v1_cgroup(sysfs / "slurm", UNLIMITED_V1, 5 * GIB, 0)
    v1_cgroup(sysfs / "slurm" / "job_7", 1500 * 2**20, 500 * 2**20, 100 * 2**20)
    proc = fake_proc_self(tmp_path, "5:cpu:/slurm/job_7\n4:memory:/slurm/job_7\n0::/\n", mounts)
    # 1500 MiB - 500 MiB + 100 MiB of inactive file pages
    assert cgroup_headroom(proc) == 1100 * 2**20


def test_the_tightest_ancestor_bounds_the_headroom(tmp_path):
    """A job's cgroup with a looser limit than the user's cgroup it is in, or none."""
    sysfs, mounts = v1_mount(tmp_path)
    v1_cgroup(sysfs / "user", 4 * GIB, 3 * GIB, GIB // 2)
    v1_cgroup(sysfs / "user" / "job", 8 * GIB, GIB, 0)
    proc = fake_proc_self(tmp_path, "4:memory:/user/job\n", mounts)
    assert cgroup_headroom(proc) == 4 * GIB - 3 * GIB + GIB // 2
    v1_cgroup(sysfs / "user" / "job", UNLIMITED_V1, GIB, 0)
    assert cgroup_headroom(proc) == 4 * GIB - 3 * GIB + GIB // 2
    # the job's own limit when it is the tighter one
    v1_cgroup(sysfs / "user" / "job", GIB + GIB // 4, GIB, 0)
    assert cgroup_headroom(proc) == GIB // 4


def test_a_cgroup_over_its_limit_leaves_nothing(tmp_path):
    sysfs, mounts = v1_mount(tmp_path)
    v1_cgroup(sysfs / "job", GIB, GIB + 4096, 0)
    assert cgroup_headroom(fake_proc_self(tmp_path, "4:memory:/job\n", mounts)) == 0


def test_files_a_cgroup_lacks_count_as_nothing(tmp_path):
    """No usage file, no line of reclaimable pages: the limit is the headroom; a limit
    of 2**60 bytes or more is the kernel's "unlimited"."""
    sysfs, mounts = v1_mount(tmp_path)
    write(sysfs / "job" / "memory.limit_in_bytes", f"{GIB}\n")
    write(sysfs / "job" / "memory.stat", "cache 100\nrss 200\n")
    proc = fake_proc_self(tmp_path, "4:memory:/job\n", mounts)
    assert cgroup_headroom(proc) == GIB
    write(sysfs / "job" / "memory.limit_in_bytes", f"{1 << 60}\n")
    assert cgroup_headroom(proc) is None


def test_a_v2_cgroup_and_its_ancestors(tmp_path):
    """containerd's systemd paths hold colons; mountinfo writes a space as \\040."""
    sysfs = tmp_path / "cgroup fs"
    escaped = str(sysfs).replace(" ", "\\040")
    mounts = (f"22 1 0:5 / /proc rw - proc proc rw\n"
              f"28 22 0:26 / {escaped} rw,nosuid shared:4 - cgroup2 none rw,nsdelegate\n")
    pod = "kubepods.slice"
    write(sysfs / pod / "memory.max", f"{3 * GIB}\n")
    write(sysfs / pod / "memory.current", f"{2 * GIB}\n")
    write(sysfs / pod / "memory.stat", f"anon 5\ninactive_file {GIB // 4}\n")
    job = sysfs / pod / "cri-containerd:ab:12.scope"
    write(job / "memory.max", "max\n")
    write(job / "memory.current", f"{GIB}\n")
    write(job / "memory.stat", "anon 5\ninactive_file 0\n")
    proc = fake_proc_self(tmp_path, f"0::/{pod}/cri-containerd:ab:12.scope\n", mounts)
    assert cgroup_headroom(proc) == 3 * GIB - 2 * GIB + GIB // 4
    # no limit anywhere: None
    write(sysfs / pod / "memory.max", "max\n")
    assert cgroup_headroom(proc) is None


def test_a_container_sees_its_own_cgroup_at_the_mount(tmp_path):
    """Docker without a cgroup namespace: /proc/self/cgroup names the host's path, and
    the mount's root says the mount shows that cgroup."""
    sysfs, mounts = v1_mount(tmp_path, root="/docker/abc123")
    v1_cgroup(sysfs, 2 * GIB, GIB, 0)
    proc = fake_proc_self(tmp_path, "4:memory,hugetlb:/docker/abc123\n", mounts)
    assert cgroup_headroom(proc) == GIB
    # a path outside the mount's root is read at the mount, not where the path would
    # lead from it
    v1_cgroup(sysfs.parent.parent / "elsewhere", GIB, GIB, 0)
    proc = fake_proc_self(tmp_path, "4:memory:/elsewhere\n", mounts)
    assert cgroup_headroom(proc) == GIB


def test_no_memory_cgroup_no_limit(tmp_path):
    sysfs, mounts = v1_mount(tmp_path)
    v1_cgroup(sysfs, UNLIMITED_V1, GIB, 0)
    assert cgroup_headroom(fake_proc_self(tmp_path, "4:memory:/\n", mounts)) is None
    # another v1 hierarchy's files are not the memory cgroup's
    write(tmp_path / "sys" / "cpu" / "memory.limit_in_bytes", "4096\n")
    assert cgroup_headroom(fake_proc_self(tmp_path, "5:cpu:/\n4:memory:/\n", mounts)) is None
    # the cgroup's hierarchy is not mounted
    assert cgroup_headroom(fake_proc_self(tmp_path, "4:memory:/\n", "")) is None
    assert cgroup_headroom(str(tmp_path / "nowhere")) is None


def test_the_address_space_limit_leaves_the_limit_less_the_mapped_size(tmp_path,
                                                                        monkeypatch):
    write(tmp_path / "status", "Name:\tpython\nVmPeak:\t 9000 kB\nVmSize:\t 2048 kB\n")
    monkeypatch.setattr(resource, "getrlimit",
                        lambda which: (10 * 2**20, resource.RLIM_INFINITY))
    assert address_space_headroom(str(tmp_path / "status")) == 10 * 2**20 - 2048 * 1024
    write(tmp_path / "status", "VmSize:\t 20480 kB\n")  # mapped beyond the limit
    assert address_space_headroom(str(tmp_path / "status")) == 0
    assert address_space_headroom(str(tmp_path / "no_status")) is None
    monkeypatch.setattr(resource, "getrlimit",
                        lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert address_space_headroom(str(tmp_path / "status")) is None


def test_auto_takes_the_least_bound_and_names_it(monkeypatch):
    monkeypatch.setattr(memory, "machine_available", lambda: 20 * GIB)
    monkeypatch.setattr(memory, "cgroup_headroom", lambda: 1000)
    monkeypatch.setattr(memory, "address_space_headroom", lambda: None)
    assert memory.available_memory() == 1000
    X = np.random.default_rng(0).random((40, 5))
    with pytest.raises(MemoryLimitError,
                       match=r"'auto': 80% of 0.00 GiB, the headroom of the process's "
                             r"memory cgroup\)"):
        CauseFS(n_clusters=3, max_iter=1).fit(X)
    for bound in ("machine_available", "cgroup_headroom"):
        monkeypatch.setattr(memory, bound, lambda: None)
    assert memory.available_memory() is None
    CauseFS(n_clusters=3).fit(X)  # nothing known: no check


def meminfo_kib(field):
    with open("/proc/meminfo") as lines:
        return next(int(line.split()[1]) for line in lines if line.startswith(field))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_this_machine():
    """On Linux the machine's bound is its MemAvailable, read as the kernel writes it
    (it moves between two reads by what other processes do)."""
    machine = memory.memory_headroom()["memory available on the machine"]
    assert abs(machine - meminfo_kib("MemAvailable:") * 1024) < 256 * 2**20
    assert 0 < memory.available_memory() <= meminfo_kib("MemTotal:") * 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def vm_size():
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) for line in lines
                    if line.startswith("VmSize:")) * 1024


def test_a_process_under_an_address_space_limit():
    """``ulimit -v`` set on this process (16 GiB above what it maps: some libraries
    reserve tens of GiB of address space): the headroom is the limit less its VmSize."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = vm_size() + 16 * GIB
    if hard != resource.RLIM_INFINITY and hard < limit:
        pytest.skip(f"the hard limit, {hard} bytes, is below {limit}")
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        room = memory.memory_headroom()[
            "room left under the process's address-space limit (ulimit -v)"]
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    # other threads of the process may map a few pages between the two reads
    assert abs((limit - vm_size()) - room) < 64 * 2**20


REFUSED_IN_A_CGROUP = """
import numpy as np
from causefs import CauseFS
from causefs.budget import MemoryLimitError
X = np.random.default_rng(0).random((100_000, 64))
try:
    CauseFS(n_clusters=3, random_state=0).fit(X)
    print("fitted")
except MemoryLimitError as error:
    print(error)
"""


@pytest.fixture
def memory_cgroup():
    """A child of this process's memory cgroup limited to 600 MB, where this machine
    lets the test make one; else a skip."""
    limit = str(600 * 2**20)
    with child_cgroup("memory", {fstype: {files[0]: limit}
                                 for fstype, files in system_memory.CGROUP_FILES.items()}
                      ) as child:
        yield child


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's cgroups")
def test_a_fit_in_a_memory_cgroup_is_refused_by_name_not_killed(memory_cgroup):
    """The user's story: a fit estimated at about 1 GiB, in a cgroup of 600 MB on a
    machine with more memory available, is refused with a MemoryLimitError naming the
    cgroup (before this check, the kernel killed it)."""
    procs = memory_cgroup / "cgroup.procs"
    out = subprocess.run([sys.executable, "-c", REFUSED_IN_A_CGROUP], capture_output=True,
                         text=True, timeout=600,
                         preexec_fn=lambda: procs.write_text(str(os.getpid())))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "memory_limit='auto': 80% of" in out.stdout
    assert "the headroom of the process's memory cgroup" in out.stdout
