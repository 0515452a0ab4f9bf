"""The allocator policy of a fit (causefs.numerics.allocation): large temporaries served
from glibc's heap and kept there while a fit runs, glibc's defaults back after it."""

from __future__ import annotations

import ctypes
import threading

import numpy as np
import pytest

from causefs import CauseFS, estimator
from causefs.numerics import allocation
from causefs.numerics.allocation import retained_memory

BLOCK = 64 * 2**20  # above glibc's largest mmap threshold (32 MiB): mmap'd by default


class MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (malloc.h, glibc >= 2.33)."""

    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
        "uordblks", "fordblks", "keepcost")]


def mallinfo():
    libc = allocation.glibc()
    if libc is None or not hasattr(libc, "mallinfo2"):
        pytest.skip("needs glibc >= 2.33 (mallinfo2)")
    libc.mallinfo2.restype = MallInfo2
    return libc.mallinfo2()


@pytest.fixture
def policy_on(monkeypatch):
    monkeypatch.delenv(allocation.SWITCH, raising=False)  # the choice by size


def test_a_large_block_is_mmapped_outside_a_fit_and_comes_from_the_heap_inside(policy_on):
    before = mallinfo().hblkhd
    block = np.ones(BLOCK // 8)
    assert mallinfo().hblkhd - before >= BLOCK  # glibc's own default
    del block
    with retained_memory():
        before = mallinfo()
        block = np.ones(BLOCK // 8)
        inside = mallinfo()
        assert inside.hblkhd == before.hblkhd
        assert inside.uordblks - before.uordblks >= BLOCK
        del block


def test_freed_blocks_stay_in_the_heap_during_a_fit_and_go_back_after(policy_on):
    with retained_memory():
        start = mallinfo().arena
        block = np.ones(BLOCK // 8)
        del block
        kept = mallinfo()
        assert kept.arena - start >= BLOCK  # not trimmed: the next temporary reuses it
        reused = np.ones(BLOCK // 8)
        assert mallinfo().arena == kept.arena  # served by the freed pages, no growth
        del reused
    assert mallinfo().arena <= kept.arena - BLOCK  # malloc_trim(0) on leaving


class RecordingLibc:
    """A stand-in for glibc that records the policy's calls."""

    def __init__(self):
        self.calls = []

    def mallopt(self, parameter, value):
        self.calls.append(("mallopt", parameter, value))
        return 1

    def malloc_trim(self, pad):
        self.calls.append(("malloc_trim", pad))
        return 1


@pytest.fixture
def recording(monkeypatch, policy_on):
    libc = RecordingLibc()
    monkeypatch.setattr(allocation, "glibc", lambda: libc)
    return libc


RETAIN = [("mallopt", allocation.M_MMAP_MAX, 0),
          ("mallopt", allocation.M_TRIM_THRESHOLD, allocation.RETAINED_TRIM_THRESHOLD)]
RESTORE = [("mallopt", allocation.M_MMAP_MAX, 65536),
           ("mallopt", allocation.M_TRIM_THRESHOLD, 128 * 1024), ("malloc_trim", 0)]


def test_fits_in_threads_keep_the_policy_until_the_last_one_ends(recording):
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def first():
        with retained_memory():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait(5)
    with retained_memory():
        second_in.set()
        first_out.wait(5)
        assert recording.calls == RETAIN  # the first fit's end restored nothing
    thread.join()
    assert recording.calls == RETAIN + RESTORE


def test_the_defaults_come_back_when_the_fit_raises(recording):
    with pytest.raises(RuntimeError), retained_memory():
        raise RuntimeError("a block failed")
    assert recording.calls == RETAIN + RESTORE
    assert allocation._depth == 0


GIB = 2**30


@pytest.mark.parametrize(("switch", "peak", "available", "kept"), [
    (None, 1 * GIB, 8 * GIB, True),      # an eighth of what is available
    (None, 2 * GIB, 8 * GIB, True),      # a quarter: the edge, kept
    (None, 2 * GIB + 1, 8 * GIB, False),
    (None, 9 * GIB, 22 * GIB, False),    # 1,000,000 x 64 on the benchmark machine
    (None, 1 * GIB, None, False),        # available memory unknown
    (None, None, 8 * GIB, False),        # no estimate
    ("0", 1 * GIB, 8 * GIB, False),
    ("1", 9 * GIB, 8 * GIB, True),
    (" 1 ", None, None, True),
    ("auto", 9 * GIB, 22 * GIB, False),  # anything else: by size
])
def test_a_fit_keeps_its_memory_when_its_peak_is_a_quarter_of_what_is_available(
        monkeypatch, switch, peak, available, kept):
    if switch is None:
        monkeypatch.delenv(allocation.SWITCH, raising=False)
    else:
        monkeypatch.setenv(allocation.SWITCH, switch)
    assert allocation.worth_retaining(peak, available) is kept


def test_an_inactive_policy_leaves_glibc_alone(recording):
    with retained_memory(False):
        pass
    assert recording.calls == []


def test_other_c_libraries_are_left_alone(monkeypatch):
    monkeypatch.setattr(allocation.platform, "libc_ver", lambda: ("", ""))
    assert allocation.glibc() is None
    with retained_memory():  # a no-op
        pass


@pytest.mark.parametrize(("available", "calls"), [
    (10**12, RETAIN + RESTORE), (10**6, [])])
def test_a_fit_keeps_its_memory_by_its_estimated_peak(recording, monkeypatch,
                                                      available, calls):
    monkeypatch.setattr(estimator, "available_memory", lambda: available)
    X = np.random.default_rng(0).random((60, 8))
    fitted = CauseFS(n_clusters=2, n_features_to_select=3, random_state=0).fit(X)
    assert 10**6 / 4 < fitted.memory_estimate_ < 10**12 / 4
    assert recording.calls == calls


def test_a_fit_selects_the_same_features_with_and_without_the_policy(monkeypatch):
    X = np.random.default_rng(0).random((300, 40))
    X[:150, :5] += 2.0
    monkeypatch.setenv(allocation.SWITCH, "1")
    kept = CauseFS(n_clusters=2, n_features_to_select=8, random_state=0).fit(X)
    monkeypatch.setenv(allocation.SWITCH, "0")
    plain = CauseFS(n_clusters=2, n_features_to_select=8, random_state=0).fit(X)
    np.testing.assert_array_equal(kept.ranking_, plain.ranking_)
    np.testing.assert_array_equal(kept.objective_history_, plain.objective_history_)
