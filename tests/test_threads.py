"""The fit's threads (causefs.numerics.threads) against what they are documented to be:
the machine's busy CPU time read from /proc/stat here in the test, the caller's thread
count, and the threads that run parallel work."""

import os
import threading
import time

import pytest
from threadpoolctl import threadpool_limits

from causefs.numerics import threads as threads_module
from causefs.numerics.threads import (
    BUSY_INTERVAL,
    _BusyElsewhere,
    _cpu_seconds,
    caller_threads,
    fit_threads,
    parallel_map,
    wide_threads,
)


def busy_seconds_of_the_machine():
    """proc(5): the first line of /proc/stat counts, in clock ticks, user, nice, system,
    idle, iowait, irq, softirq, steal (then guest and guest_nice, already counted in
    user and nice); busy is everything but idle and iowait."""
    with open("/proc/stat") as stat:
        user, nice, system, idle, iowait, irq, softirq, steal = \
            map(int, stat.readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def test_the_machines_busy_seconds_are_read_from_proc_stat():
    if not os.path.exists("/proc/stat"):
        pytest.skip("no /proc/stat on this system")
    for _ in range(3):  # the counters only grow: the reading lies between two of ours
        before = busy_seconds_of_the_machine()
        busy, own = _cpu_seconds()
        after = busy_seconds_of_the_machine()
        times = os.times()
        assert before <= busy <= after
        assert own <= times.user + times.system


def test_a_virtual_machines_guest_time_is_not_counted_twice(monkeypatch):
    """proc(5): guest and guest_nice are already in user and nice. On a host that runs
    virtual machines they are not 0: a /proc/stat whose guest columns count 40 and 9
    ticks is busy for user + nice + system + irq + softirq + steal only."""
    import io

    from causefs.numerics import threads

    line = b"cpu  100 20 30 1000 50 5 6 7 40 9\ncpu0 1 2 3 4 5 6 7 8 9 10\n"
    monkeypatch.setattr(threads, "open", lambda path, mode="r": io.BytesIO(line),
                        raising=False)
    busy, _ = _cpu_seconds()
    assert busy == (100 + 20 + 30 + 5 + 6 + 7) / os.sysconf("SC_CLK_TCK")


def test_busy_cores_are_measured_once_an_interval_has_passed():
    clock = iter([0.0, BUSY_INTERVAL, 2 * BUSY_INTERVAL + 0.1])
    samples = iter([(10.0, 1.0), (10.5, 1.0), (10.5, 1.0)])
    busy = _BusyElsewhere(read=lambda: next(samples), clock=lambda: next(clock))
    assert busy() is None
    # exactly one interval on ("at least BUSY_INTERVAL"): measured, 0.5 s over 0.25 s
    assert busy() == pytest.approx(0.5 / BUSY_INTERVAL)
    assert busy() == pytest.approx(0.0)


def test_outside_a_fit_the_caller_has_one_thread():
    assert threads_module._THREADS.caller is None
    assert caller_threads() == 1 and wide_threads() == 1


def test_each_fit_reads_the_thread_pools_loaded_when_it_starts(monkeypatch):
    """A BLAS loaded after one fit (by a plugin, say) is limited in the next: every
    outermost fit makes a new controller; a fit inside a fit uses its caller's."""
    made = []
    refresh = threads_module._THREADS.refresh
    monkeypatch.setattr(threads_module._THREADS, "refresh",
                        lambda: made.append(1) or refresh())
    with fit_threads():
        with fit_threads():
            pass
    with fit_threads():
        pass
    assert len(made) == 2
    assert threads_module._THREADS.caller is None  # restored after the outer fit


def test_parallel_work_runs_on_no_more_threads_than_the_caller_allows():
    def where(item):
        time.sleep(0.02)  # long enough for a pool to spread the items over its threads
        return threading.get_ident()

    with threadpool_limits(limits=1), fit_threads():
        assert caller_threads() == 1
        # one thread: in the caller's own thread, where its heartbeat and locals are
        assert set(parallel_map(where, range(4))) == {threading.get_ident()}
    with threadpool_limits(limits=2), fit_threads():
        used = set(parallel_map(where, range(8)))
    assert 1 <= len(used) <= 2 and threading.get_ident() not in used


def test_parallel_work_runs_on_no_more_threads_than_it_is_given():
    """``threads`` caps the workers below the caller's: one runs in the caller's thread;
    more than the caller allows are not taken."""
    both = threading.Barrier(2, timeout=10)

    def where(item):
        both.wait()  # fails unless two items run at once
        return threading.get_ident()

    def alone(item):
        return threading.get_ident()

    with threadpool_limits(limits=2), fit_threads():
        assert caller_threads() == 2
        assert set(parallel_map(alone, range(4), threads=1)) == {threading.get_ident()}
        used = set(parallel_map(where, range(2), threads=2))
        assert len(used) == 2 and threading.get_ident() not in used
    with threadpool_limits(limits=1), fit_threads():
        assert set(parallel_map(alone, range(4), threads=2)) == {threading.get_ident()}
