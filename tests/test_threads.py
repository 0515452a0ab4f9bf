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


@pytest.fixture(autouse=True)
def cpus_for_every_thread_asked(monkeypatch):
    """The tests here play callers of more threads than this machine may have CPUs
    (``threadpool_limits(limits=4)``): the cap on the CPUs the process may run on is
    tested apart (tests/test_cgroups.py)."""
    monkeypatch.setattr(threads_module, "process_cpus", lambda: 64)


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


def test_the_last_item_of_parallel_work_takes_the_threads_the_finished_ones_left():
    """While items wait, every item has one thread; once none waits, a running item's
    share of the map's threads grows as the others finish, and its own parallel work
    spreads over it (the nested items meet at a barrier: they run at once); BLAS stays
    on one thread inside a worker (its limits are the whole process's)."""
    from threadpoolctl import threadpool_info

    from causefs.numerics.threads import in_worker, threads_for

    seen, last_done = {}, threading.Event()
    both = threading.Barrier(2, timeout=10)

    def nested(item):
        both.wait()
        return threading.get_ident()

    def item(i):
        seen[i, "start"] = caller_threads()
        if i == 2:
            last_done.set()
        if i != 0:
            return None
        assert last_done.wait(10)
        deadline = time.monotonic() + 10
        while caller_threads() < 2 and time.monotonic() < deadline:
            time.sleep(0.005)  # item 2's worker counts itself finished after returning
        seen[0, "alone"] = caller_threads()
        seen[0, "in_worker"] = in_worker()
        with threads_for(1e15):
            # the process-wide BLAS pools numpy and scipy call; an OpenMP-built BLAS
            # (faiss's) keeps its threads per calling thread
            seen[0, "blas"] = max(p["num_threads"] for p in threadpool_info()
                                  if p["user_api"] == "blas"
                                  and p.get("threading_layer") != "openmp")
        return set(parallel_map(nested, range(2)))

    # no core counts as busy elsewhere (a loaded machine would keep BLAS on one thread
    # anyway, and so hide a widening)
    with threadpool_limits(limits=2), fit_threads(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(threads_module, "busy_elsewhere", lambda: 0.0)
        first, *_ = parallel_map(item, range(3))
    # item 1 starts while item 2 waits, item 2 beside item 0 (item 0, pulled first,
    # starts before item 1 but may count itself in after it)
    assert seen[1, "start"] == seen[2, "start"] == 1
    assert seen[0, "alone"] == 2 and len(first) == 2
    assert seen[0, "blas"] == 1 and seen[0, "in_worker"] and not in_worker()


def test_items_running_side_by_side_share_the_threads_out():
    """No item waits, but the running items share the map's threads: two items on two
    threads have one each; two on four, two each."""
    both = threading.Barrier(2, timeout=10)

    def share(item):
        both.wait()  # both run: neither has finished
        value = caller_threads()
        both.wait()
        return value

    with threadpool_limits(limits=2), fit_threads():
        assert parallel_map(share, range(2)) == [1, 1]
    with threadpool_limits(limits=4), fit_threads():
        assert parallel_map(share, range(2)) == [2, 2]


def test_a_finished_item_leaves_the_running_ones_their_share_and_no_more():
    """Three items on three threads: while the first has finished and two still run, the
    two share the three threads, one each (3 // 2, never more than the map's three in
    all); they watch their share for half a second after the first has returned."""
    first_returned = threading.Event()
    started = threading.Barrier(3, timeout=10)
    both = threading.Barrier(2, timeout=10)

    def item(i):
        started.wait()  # all three run before the first returns
        if i == 0:
            first_returned.set()
            return None
        assert first_returned.wait(10)
        shares = set()
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            shares.add(caller_threads())
            time.sleep(0.005)
        both.wait()  # neither finished while the other watched
        return shares

    with threadpool_limits(limits=3), fit_threads():
        found = parallel_map(item, range(3))
    assert found[1:] == [{1}, {1}]


def test_an_item_has_one_thread_while_others_wait():
    """The share of a map's threads is its own while an item waits, even before every
    worker has started one (the first item must not widen before the second starts)."""
    from causefs.numerics.threads import _Pool

    pool = _Pool(threads=2, items=3)
    pool.waiting, pool.running = 1, 1  # one started, one starting, one waiting
    assert pool.share() == 1
    pool.waiting, pool.running = 0, 1
    assert pool.share() == 2
    pool.waiting, pool.running = 0, 2
    assert pool.share() == 1
    assert _Pool(threads=3, items=2).share() == 1  # nothing started yet: all wait


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # max_iter=2
@pytest.mark.parametrize("below", [True, False])
def test_graphs_of_few_samples_are_built_on_the_callers_thread(monkeypatch, below):
    """Below ``PARALLEL_GRAPHS_N`` samples every granular graph of a fit (initial, S
    block, regrouping) is built on the thread that called ``fit``; from it on, on the
    workers of ``parallel_map`` (two threads allowed)."""
    import numpy as np

    from causefs import CauseFS
    from causefs.blocks.descent import granular_graphs
    from causefs.blocks.initialization import initial_graphs
    from causefs.numerics.adaptive_graphs import adaptive_graph
    from causefs.numerics.threads import PARALLEL_GRAPHS_N

    built_on = []

    def recording(*args, **kwargs):
        built_on.append(threading.get_ident())
        return adaptive_graph(*args, **kwargs)

    def recording_granular(*args, **kwargs):  # the initial fused graph passes no warm
        return (recording if "warm" in kwargs else adaptive_graph)(*args, **kwargs)

    monkeypatch.setattr(granular_graphs, "adaptive_graph", recording)
    monkeypatch.setattr(initial_graphs, "adaptive_graph", recording_granular)
    n = PARALLEL_GRAPHS_N - 1 if below else PARALLEL_GRAPHS_N
    X = np.random.default_rng(0).random((n, 12))
    with threadpool_limits(limits=2):
        CauseFS(n_clusters=3, n_features_to_select=4, max_iter=2, random_state=0).fit(X)
    assert len(built_on) > 4  # the initial graphs and the S block's, several groups
    if below:
        assert set(built_on) == {threading.get_ident()}
    else:
        assert threading.get_ident() not in set(built_on)
