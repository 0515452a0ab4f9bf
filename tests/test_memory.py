"""Memory: the guard refuses what would not fit; a default fit allocates nothing n x n."""

import gc
import tracemalloc

import numpy as np
import pytest

from sklearn.base import clone

from causefs import CauseFS
from causefs.datasets import make_causal
from causefs.budget import MemoryLimitError
from causefs.core.validation import parse_bytes
from causefs.engine import estimate
from causefs.model.settings import Settings

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)


def test_default_fit_allocates_nothing_n_by_n():
    """n = 20,000: one dense n x n float64 array would be 3.2 GB, a bool one 400 MB."""
    n = 20_000
    X = make_causal(n, 12, n_clusters=3, n_causal=4, n_spurious=4, seed=0).X
    est = CauseFS(n_clusters=3, max_iter=1, max_granularity=3, random_state=0,
                  memory_limit="1GB")
    # what the first fit of a process builds once (the plugin registry, signatures) is
    # not the fit's: built before, its garbage collected
    clone(est).fit(X[:200])
    gc.collect()
    tracemalloc.start()
    try:
        est.fit(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the fit's own peak is about 100 MB (candidate tables of the granular graphs, built
    # in parallel: it varies with the threads' interleaving); half a bool n x n array
    # sits well above it
    assert peak < n * n / 2, f"peak traced allocation {peak / 2**20:.0f} MiB"
    assert est.memory_estimate_ < parse_bytes("1GB")


@pytest.mark.parametrize("options, phase", [
    (dict(qp="cvxpy"), "use a matrix-free QP backend: qp='gradient_projection_cg'"),
    (dict(neighbor_algorithm="all"), "use a kNN candidate search"),
    (dict(kernel={"name": "rbf", "approximation": "exact"}), "kernel='linear'"),
])
def test_the_guard_names_a_setting_that_fits(options, phase):
    X = np.random.default_rng(0).random((6000, 8))
    with pytest.raises(MemoryLimitError, match=phase):
        CauseFS(n_clusters=3, memory_limit="500MB", schedule="full", **options).fit(X)


def test_the_guard_can_be_switched_off(monkeypatch):
    """A fit that every limit (auto included) refuses runs with memory_limit=None."""
    monkeypatch.setattr("causefs.budget.memory.memory_headroom",
                        lambda: {"memory available on the machine": 1024})
    X = np.random.default_rng(0).random((40, 5))
    for limit in ("auto", "1KB"):
        with pytest.raises(MemoryLimitError):
            CauseFS(n_clusters=3, max_iter=1, memory_limit=limit).fit(X)
    est = CauseFS(n_clusters=3, max_iter=1, memory_limit=None).fit(X)
    assert est.memory_estimate_ > 1024


def test_estimates_grow_with_the_dense_paths():
    fast = estimate(5000, 100, Settings(n_clusters=5, schedule="full")).memory
    dense = estimate(5000, 100, Settings(n_clusters=5, schedule="full", qp="cvxpy",
                                         neighbor_algorithm="all")).memory
    assert dense.peak > 20 * 5000**2 * 8 > fast.peak


@pytest.mark.parametrize("text, value", [("8GB", 8 << 30), ("512 MB", 512 << 20),
                                         ("1e6", 10**6), (2048, 2048)])
def test_parse_bytes(text, value):
    assert parse_bytes(text) == value
