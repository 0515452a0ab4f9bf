"""CPU quotas of the process's cgroups, and the fit's threads under them: files laid out
as Linux lays them out, and a real cgroup where the machine lets the test make one."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import child_cgroup, fake_proc_self, write
from threadpoolctl import threadpool_limits

from causefs.core.cgroups import cgroup_directories, cpu_quota

from causefs.numerics import threads
from causefs.numerics.threads import caller_threads, fit_threads, process_cpus


def v1_cpu(tmp_path, directory, quota, period=100_000):
    write(directory / "cpu.cfs_quota_us", f"{quota}\n")
    write(directory / "cpu.cfs_period_us", f"{period}\n")


def test_the_directories_run_from_the_cgroup_up_to_the_mount(tmp_path):
    cpu = tmp_path / "cpu,cpuacct"
    mounts = (f"25 1 0:20 / {tmp_path / 'memory'} rw - cgroup cgroup rw,memory\n"
              f"26 1 0:21 / {cpu} rw shared:3 - cgroup cgroup rw,cpu,cpuacct\n")
    proc = fake_proc_self(tmp_path, "4:memory:/a\n3:cpu,cpuacct:/kubepods/pod1/c:2\n", mounts)
    assert cgroup_directories("cpu", proc) == [
        ("cgroup", [f"{cpu}/kubepods/pod1/c:2", f"{cpu}/kubepods/pod1",
                    f"{cpu}/kubepods", f"{cpu}"])]
    assert cgroup_directories("memory", proc) == [("cgroup", [f"{tmp_path}/memory/a",
                                                              f"{tmp_path}/memory"])]
    assert cgroup_directories("pids", proc) == []


def test_a_v1_quota_is_its_quota_over_its_period_the_least_of_the_ancestors(tmp_path):
    cpu = tmp_path / "cpu"
    mounts = f"26 1 0:21 / {cpu} rw - cgroup none rw,cpuacct,cpu\n"
    proc = fake_proc_self(tmp_path, "3:cpuacct,cpu:/job/step\n", mounts)
    v1_cpu(tmp_path, cpu, -1)
    v1_cpu(tmp_path, cpu / "job", 300_000)
    v1_cpu(tmp_path, cpu / "job" / "step", -1)
    assert cpu_quota(proc) == 3.0
    v1_cpu(tmp_path, cpu / "job" / "step", 75_000, period=50_000)
    assert cpu_quota(proc) == 1.5
    v1_cpu(tmp_path, cpu / "job", -1)
    v1_cpu(tmp_path, cpu / "job" / "step", -1)
    assert cpu_quota(proc) is None


def test_a_v2_quota(tmp_path):
    unified = tmp_path / "unified"
    mounts = f"28 22 0:26 / {unified} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
    proc = fake_proc_self(tmp_path, "0::/system.slice/docker-1.scope\n", mounts)
    write(unified / "system.slice" / "cpu.max", "max 100000\n")
    write(unified / "system.slice" / "docker-1.scope" / "cpu.max", "50000 100000\n")
    assert cpu_quota(proc) == 0.5
    write(unified / "system.slice" / "docker-1.scope" / "cpu.max", "max 100000\n")
    assert cpu_quota(proc) is None
    # a period of one microsecond is a period
    write(unified / "system.slice" / "cpu.max", "3 1\n")
    assert cpu_quota(proc) == 3.0
    # a period of 0 or a file cut short is no quota
    write(unified / "system.slice" / "cpu.max", "50000 0\n")
    write(unified / "system.slice" / "docker-1.scope" / "cpu.max", "50000\n")
    assert cpu_quota(proc) is None


@pytest.mark.skipif(not Path("/proc/self/cgroup").exists(), reason="no cgroups")
@pytest.mark.parametrize("controller", ["memory", "cpu"])
def test_this_process_cgroups_are_found(controller):
    """Against the kernel's own lists, read apart: every hierarchy /proc/self/cgroup names
    for the controller (v2's, v1's of the controller) whose file system /proc/self/mounts
    lists is found, from an existing directory up to a mount point of that type."""
    with open("/proc/self/cgroup") as lines:
        named = [line.rstrip("\n").split(":", 2) for line in lines]
    with open("/proc/self/mounts") as lines:
        mounts = [line.split() for line in lines]
    expected = set()
    if any(hierarchy == "0" for hierarchy, _, _ in named) and any(
            fields[2] == "cgroup2" for fields in mounts):
        expected.add("cgroup2")
    if any(controller in controllers.split(",") for _, controllers, _ in named) and any(
            fields[2] == "cgroup" and controller in fields[3].split(",")
            for fields in mounts):
        expected.add("cgroup")
    found = cgroup_directories(controller)
    assert {fstype for fstype, _ in found} == expected
    for fstype, directories in found:
        assert Path(directories[0]).is_dir()
        assert any(fields[1] == directories[-1] and fields[2] == fstype
                   for fields in mounts)


def test_the_cpus_are_the_affinity_mask_fewer_under_a_quota_rounded_up(monkeypatch):
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    for quota, cpus in ((None, 4), (8.0, 4), (2.5, 3), (2.0, 2), (0.2, 1)):
        monkeypatch.setattr(threads, "cpu_quota", lambda: quota)
        assert process_cpus() == cpus


def test_without_an_affinity_mask_the_cpus_are_the_machines(monkeypatch):
    """macOS and Windows have no ``os.sched_getaffinity``: the machine's CPU count, 1 if
    unknown."""
    monkeypatch.delattr(threads.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(threads, "cpu_quota", lambda: None)
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 3)
    assert process_cpus() == 3
    monkeypatch.setattr(threads.os, "cpu_count", lambda: None)
    assert process_cpus() == 1


def test_a_fit_takes_no_more_threads_than_the_cpus_it_may_run_on(monkeypatch):
    monkeypatch.setattr(threads, "process_cpus", lambda: 1)
    with threadpool_limits(limits=2):
        with fit_threads():
            assert caller_threads() == 1
    monkeypatch.setattr(threads, "process_cpus", lambda: 64)
    with threadpool_limits(limits=2):
        with fit_threads():
            assert caller_threads() == 2


THREADS_IN_A_CGROUP = """
from causefs.numerics.threads import caller_threads, fit_threads
with fit_threads():
    print(caller_threads())
"""


@pytest.fixture
def cpu_cgroup():
    """A child of this process's CPU cgroup with a quota of one CPU, where this machine
    lets the test make one; else a skip."""
    with child_cgroup("cpu", {"cgroup": {"cpu.cfs_period_us": "100000",
                                         "cpu.cfs_quota_us": "100000"},
                              "cgroup2": {"cpu.max": "100000 100000"}}) as child:
        yield child


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,
                    reason="one CPU: a quota of one changes nothing")
def test_a_fit_in_a_cgroup_of_one_cpu_takes_one_thread(cpu_cgroup):
    """BLAS counts the machine's CPUs; in a cgroup with a quota of one CPU a fit works on
    one thread (two made COIL20's fit 1.4x slower there)."""
    procs = cpu_cgroup / "cgroup.procs"
    # a caller of two threads, whatever this process was given
    env = {**os.environ, "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"}
    inside = subprocess.run([sys.executable, "-c", THREADS_IN_A_CGROUP], text=True,
                            capture_output=True, check=True, timeout=300, env=env,
                            preexec_fn=lambda: procs.write_text(str(os.getpid())))
    assert inside.stdout.split() == ["1"]
    outside = subprocess.run([sys.executable, "-c", THREADS_IN_A_CGROUP], text=True,
                             capture_output=True, check=True, timeout=300, env=env)
    assert outside.stdout.split() == ["2"]
