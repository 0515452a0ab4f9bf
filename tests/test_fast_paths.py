"""The fast paths of a fit, each against an independent reference.

Polar factor (GPI), 1-D Ward tree, Calinski-Harabasz score, bounded treatment sets,
approximate neighbour search, the budgeted float32 mu solve, BLAS thread policy, the
time estimate and progress logging.
"""

import contextlib
import logging

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from sklearn.datasets import make_blobs
from sklearn.metrics import calinski_harabasz_score

from causefs import CauseFS
from causefs.blocks import ConfoundersBlock, GranularGraphsBlock, SampleWeightsBlock
from causefs.blocks.descent.embedding import polar_factor
from causefs.blocks.descent.sample_weights import sample_weight_qp
from causefs.numerics.feature_clustering import calinski_harabasz, ward_tree_1d
from causefs.engine import estimate, resolve_qp
from conftest import run_engine
from causefs.model.settings import Settings
from causefs.estimator import LongFitWarning
from causefs.numerics.adaptive_graphs import adaptive_graph
from causefs.numerics.neighbors import exact_neighbors, refine_neighbors
from causefs.numerics.scaling import scale_features
from causefs.testing import check_step
from causefs.model.treatments import TREATMENT_BUDGET, bounded_treatments, treatment_cap

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)


def svd_polar(M):
    U, _, Vt = np.linalg.svd(M, full_matrices=False)
    return U @ Vt


@pytest.mark.parametrize("condition", [1.0, 1e3, 1e9])
def test_polar_factor_equals_the_svd_definition(condition):
    rng = np.random.default_rng(0)
    U, _ = np.linalg.qr(rng.standard_normal((300, 8)))
    V, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    M = (U * np.geomspace(1.0, 1.0 / condition, 8)) @ V.T
    F = polar_factor(M)
    assert np.allclose(F, svd_polar(M), atol=1e-8)
    assert np.allclose(F.T @ F, np.eye(8), atol=1e-12)


def partition(labels):
    return {frozenset(np.flatnonzero(labels == v)) for v in np.unique(labels)}


@pytest.mark.parametrize("seed", range(6))
def test_ward_tree_1d_cuts_like_scipy(seed):
    """On continuous values every cut of the O(d log d) tree equals SciPy's Ward linkage."""
    rng = np.random.default_rng(seed)
    values = [rng.random(150), rng.exponential(size=150) ** 3][seed % 2]
    ours, scipy_tree = ward_tree_1d(values), linkage(values[:, None], method="ward")
    assert np.allclose(np.sort(ours[:, 2]), np.sort(scipy_tree[:, 2]))
    for m in range(2, 11):
        assert partition(fcluster(ours, m, "maxclust")) == partition(
            fcluster(scipy_tree, m, "maxclust"))


def test_calinski_harabasz_equals_scikit_learn():
    rng = np.random.default_rng(0)
    points = rng.random((200, 30))
    for m in (2, 5, 9):
        labels = rng.integers(0, m, 200)
        assert calinski_harabasz(points, labels) == pytest.approx(
            calinski_harabasz_score(points, labels), rel=1e-10)


def test_treatment_cap_rules():
    assert treatment_cap(None, 10**5, 10**4, 10**4) == 10**4
    assert treatment_cap(7, 100, 50, 50) == 7
    assert treatment_cap(70, 100, 50, 50) == 50
    # auto: every treatment within the budget, then what the budget affords, at least 32
    assert treatment_cap("auto", 213, 676, 676) == 676
    assert treatment_cap("auto", 1440, 1024, 1024) == int(TREATMENT_BUDGET // (1440 * 1024))
    assert treatment_cap("auto", 7000, 5000, 5000) == 32


def test_bounded_confounders_are_the_full_rule_on_the_top_treatments():
    """Capped K = uncapped K on the kept columns (the top ||W_f||), empty elsewhere."""
    rng = np.random.default_rng(1)
    X = scale_features(rng.random((40, 12)))
    state = _state(X).replace(W=rng.standard_normal((12, 3)))
    full = ConfoundersBlock(max_treatments=None).step(state).K
    capped = ConfoundersBlock(max_treatments=4).step(state).K
    top = np.argsort(-np.linalg.norm(state.W, axis=1))[:4]
    assert set(np.flatnonzero(capped.any(axis=0))) <= set(top)
    assert np.array_equal(capped[:, top], full[:, top])
    kept = bounded_treatments(X, state.problem.coding, state.W, 4)
    assert set(np.flatnonzero(kept)) == set(top)


def _state(X, **problem):
    from causefs.core.state import State
    from causefs.engine import balance_of
    from causefs.kernels import LinearKernel
    from causefs.model.problem import Problem
    from causefs.model.treatments import treatment_coding

    from causefs.plugins import parts
    from causefs.testing import cause_fs_objective

    weights = {key: problem.pop(key) for key in ("alpha", "beta", "lam") if key in problem}
    params = dict(n_clusters=3, n_neighbors=5, sample_weights="mean_one",
                  balance=balance_of(LinearKernel()), fields=parts().fields,
                  objective=cause_fs_objective(**{"alpha": 1.0, "beta": 1e-2, "lam": 0.1,
                                                  **weights}))
    params.update(problem)
    return State(Problem(X=X, coding=treatment_coding(X), **params))


def test_refine_neighbours_recovers_the_exact_knn():
    rng = np.random.default_rng(0)
    centers = 4 * rng.standard_normal((8, 6))
    Y = centers[rng.integers(0, 8, 2000)] + rng.standard_normal((2000, 6))
    exact = exact_neighbors(Y, 6)
    # seeded with the answer it keeps it; seeded with a moved embedding's kNN it finds most
    assert all(set(a) == set(b) for a, b in zip(refine_neighbors(Y, exact, 6), exact))
    moved = Y + 0.2 * rng.standard_normal(Y.shape)
    found = refine_neighbors(moved, exact, 6)
    truth = exact_neighbors(moved, 6)
    recall = np.mean([len(set(a) & set(b)) / 6 for a, b in zip(found, truth)])
    assert recall > 0.9


def test_auto_searches_points_of_few_dimensions_exactly_at_any_n(monkeypatch):
    from causefs.numerics import neighbors
    from causefs.numerics.neighbors import LOW_DIMS, TREE_DIMS, TREE_N, nearest_candidates

    assert neighbors.resolve_algorithm("auto", 10**7, LOW_DIMS) == "kd_tree"
    assert neighbors.resolve_algorithm("auto", TREE_N + 1, LOW_DIMS + 1) == "approximate"
    assert neighbors.resolve_algorithm("auto", TREE_N, TREE_DIMS) == "kd_tree"
    # below EXACT_N: the tree for embeddings of the default n_clusters, brute force above
    assert neighbors.resolve_algorithm("auto", neighbors.EXACT_N,
                                       neighbors.SMALL_TREE_DIMS) == "kd_tree"
    assert neighbors.resolve_algorithm("auto", neighbors.SMALL_TREE_N,
                                       neighbors.SMALL_TREE_DIMS) == "kd_tree"
    assert neighbors.resolve_algorithm("auto", neighbors.SMALL_TREE_N - 1, 2) == "exact"
    assert neighbors.resolve_algorithm("auto", neighbors.EXACT_N,
                                       neighbors.SMALL_TREE_DIMS + 1) == "exact"
    # beyond TREE_N in LOW_DIMS dimensions: the exact neighbours, and no HNSW index built
    monkeypatch.setattr(neighbors, "_hnsw_neighbors", None)
    Y = np.random.default_rng(0).random((TREE_N + 500, LOW_DIMS))
    found = nearest_candidates(Y, 6, "auto")
    rows = np.arange(0, Y.shape[0], 97)  # brute force on a sample of the points
    squared = ((Y[rows, None, :] - Y[None, :, :]) ** 2).sum(axis=2)
    squared[np.arange(rows.size), rows] = np.inf
    kth = np.sort(squared, axis=1)[:, 5]
    found_squared = ((Y[found[rows]] - Y[rows, None, :]) ** 2).sum(axis=2)
    assert np.all(found_squared <= kth[:, None] * (1 + 1e-12))


def test_approximate_granular_graphs_still_descend(blobs):
    """The S block with the warm-started search: J (gamma substituted) never rises."""
    X = scale_features(blobs[0])
    result = run_engine(X, n_clusters=3, beta=1e-3, lam=0.1, max_iter=2, schedule="full",
                        neighbor_algorithm="approximate")
    state = result.state
    for _ in range(3):
        state = check_step(GranularGraphsBlock(neighbor_algorithm="approximate"), state)


def test_budgeted_float32_solve_reaches_the_exact_optimum(blobs):
    """With enough products the float32 solve with the float64 gradient shift finds the
    float64 optimum; with a small budget it never does worse than the warm start."""
    X = scale_features(blobs[0])
    state = run_engine(X, n_clusters=3, beta=1e-1, lam=0.1, max_iter=1, schedule="full").state
    qp = sample_weight_qp(state)
    exact = resolve_qp({"name": "gradient_projection_cg", "rtol": 1e-14,
                        "max_iter": 100_000}).solve(qp, state.mu).value
    backend = resolve_qp("gradient_projection_cg")
    unlimited = SampleWeightsBlock(backend, max_products=None).step(state)
    assert qp.value(unlimited.mu) <= exact + 1e-7 * abs(exact)
    for budget in (1, 3):
        small = SampleWeightsBlock(backend, max_products=budget).step(state)
        assert qp.value(small.mu) <= qp.value(state.mu)


def test_a_long_fit_says_so_before_it_starts(monkeypatch, blobs):
    monkeypatch.setattr("causefs.estimator.LONG_FIT_SECONDS", 0.0)
    with pytest.warns(LongFitWarning, match="estimated to take about"):
        CauseFS(n_clusters=3, max_iter=1, random_state=0).fit(blobs[0])

    settings = Settings(n_clusters=10)
    assert estimate(300_000, 50, settings).seconds > estimate(30_000, 50, settings).seconds > 0


def test_progress_is_logged_at_info(caplog, blobs):
    with caplog.at_level(logging.INFO, logger="causefs"):  # verbose: at INFO (else DEBUG)
        CauseFS(n_clusters=3, max_iter=2, random_state=0, verbose=True).fit(blobs[0])
    messages = [r.getMessage() for r in caplog.records if r.name == "causefs"]
    assert any(m.startswith("initialization done") for m in messages)
    assert any("iteration 2/2" in m and "elapsed" in m for m in messages)


def test_the_fit_runs_with_one_blas_thread_and_restores_the_callers():
    from threadpoolctl import threadpool_info

    from causefs.numerics.threads import fit_threads

    before = {info["filepath"]: info["num_threads"] for info in threadpool_info()}
    with fit_threads():
        inside = {info["filepath"]: info["num_threads"] for info in threadpool_info()}
    after = {info["filepath"]: info["num_threads"] for info in threadpool_info()}
    assert set(inside.values()) == {1}
    assert after == before


def test_parallel_work_keeps_blas_on_one_thread_and_the_items_order():
    from threadpoolctl import threadpool_info, threadpool_limits

    from causefs.numerics.threads import caller_threads, fit_threads, parallel_map, threads_for

    def inside(item):
        with threads_for(1e12):  # would widen outside a worker
            # the process-wide BLAS pools numpy and scipy call; an OpenMP-built BLAS
            # (faiss's) keeps its threads per calling thread, and faiss pins its own
            blas = {info["num_threads"] for info in threadpool_info()
                    if info["user_api"] == "blas" and info.get("threading_layer") != "openmp"}
        return item, caller_threads(), blas

    with threadpool_limits(limits=2), fit_threads():
        assert caller_threads() == 2
        results = parallel_map(inside, range(7))
    assert [item for item, _, _ in results] == list(range(7))
    # the last items may widen their own parallel work onto a finished worker's thread
    # (tests/test_threads.py), never BLAS
    assert all(1 <= threads <= 2 and blas <= {1} for _, threads, blas in results)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_fit_selects_the_same_features_on_one_thread_and_on_two():
    from threadpoolctl import threadpool_limits

    X, _ = make_blobs(n_samples=1200, n_features=12, centers=3, random_state=0)
    fits = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            fits.append(CauseFS(n_clusters=3, n_features_to_select=4, max_iter=4,
                                max_granularity=3, random_state=0).fit(X))
    assert np.array_equal(fits[0].scores_, fits[1].scores_)
    assert fits[0].n_iter_ == fits[1].n_iter_


def test_granularity_rebuilds_only_the_graphs_of_changed_groups(blobs):
    from causefs.blocks import GranularityBlock

    X = scale_features(blobs[0])
    state = run_engine(X, n_clusters=3, beta=1e-3, lam=0.1, max_iter=1,
                       schedule="full").state
    block = GranularityBlock(max_granularity=3)
    once = block.step(state)
    again = block.step(once)  # same W: the same groups, every graph kept
    assert np.array_equal(again.groups, once.groups)
    assert all(a is b for a, b in zip(again.S, once.S))
    # a state whose group 0 differs: its graph is rebuilt, the others are kept
    moved = once.groups.copy()
    moved[np.flatnonzero(moved == 0)[0]] = 1
    rebuilt = block.step(once.replace(groups=moved))
    assert rebuilt.S[0] is not once.S[0] and rebuilt.S[1] is not once.S[1]
    assert all(rebuilt.S[m] is once.S[m] for m in range(2, len(once.S)))


def test_local_search_completes_rows_that_only_see_a_clique():
    """Seeds that form closed groups smaller than k + 1 (every point lists only the others
    of its group) leave rows short: those rows get their exact neighbours."""
    from causefs.numerics.neighbors import _complete

    rng = np.random.default_rng(3)
    Y = rng.standard_normal((60, 4))
    groups = np.arange(60) // 3  # cliques of 3 points, fewer than k + 1 = 6
    seeds = np.array([[j for j in np.flatnonzero(groups == groups[i]) if j != i]
                      for i in range(60)])
    found = _complete(Y, refine_neighbors(Y, seeds, 6))
    assert (found >= 0).all()
    exact = exact_neighbors(Y, 6)
    assert all(set(a) == set(b) for a, b in zip(found, exact))
    # the graph builds where the uncompleted search would have too few candidates
    prior_only = adaptive_graph(Y, 5, algorithm="approximate",
                                warm=[__import__("scipy.sparse").sparse.csc_array(
                                    (np.ones(120), (seeds.ravel(), np.repeat(np.arange(60), 2))),
                                    shape=(60, 60))])
    assert prior_only[0].nnz == 60 * 5


def test_a_fit_estimated_over_a_minute_logs_its_estimate_first(caplog, monkeypatch, blobs):
    monkeypatch.setattr("causefs.estimator.ANNOUNCED_FIT_SECONDS", 0.0)
    with caplog.at_level(logging.INFO, logger="causefs"):
        CauseFS(n_clusters=3, max_iter=1, random_state=0).fit(blobs[0])
    messages = [r.getMessage() for r in caplog.records if r.name == "causefs"]
    assert "is estimated to take about" in messages[0]


def test_a_long_block_is_logged_while_it_runs(caplog, monkeypatch, blobs):
    """A block that runs for a while (here 1.5 s, reported after 0.2 s) is logged before
    it returns: a neighbour search over 300,000 points does not stay silent."""
    import time

    from causefs.blocks import Block
    from causefs.core import progress
    from causefs.plugins import get_schedule

    monkeypatch.setattr(progress, "FIRST_REPORT", 0.2)
    ended = []

    class Slow(Block):
        name, kind, reads, writes = "slow", "descent", ("W",), ("W",)
        derived_for = "*"  # it changes nothing

        def step(self, state):
            time.sleep(1.5)
            ended.append(time.time())
            return state.replace(W=state.W.copy())

    schedule = {"name": "slow", "init": get_schedule("full")["init"],
                "loop": ["selection_matrix", Slow()]}
    with caplog.at_level(logging.INFO, logger="causefs"):
        CauseFS(n_clusters=3, max_iter=1, random_state=0, schedule=schedule).fit(blobs[0])
    beats = [r for r in caplog.records if "block 'slow' (iteration 1) running for" in
             r.getMessage()]
    assert beats and beats[0].created < ended[0]


def test_busy_elsewhere_is_the_machines_cpu_time_less_this_process_over_an_interval():
    """Cores busy elsewhere = (machine busy seconds - own seconds) / wall seconds, once an
    interval of BUSY_INTERVAL has passed; the cached value within it."""
    from causefs.numerics.threads import BUSY_INTERVAL, _BusyElsewhere

    clock = iter([0.0, 0.1, 1.0, 1.1, 3.0])
    samples = iter([(10.0, 2.0), (11.5, 2.5), (12.5, 2.5)])
    busy = _BusyElsewhere(read=lambda: next(samples), clock=lambda: next(clock))
    assert busy() is None  # t = 0: the first sample, no interval yet
    assert busy() is None  # t = 0.1 < BUSY_INTERVAL: not measured again
    assert 0.1 < BUSY_INTERVAL < 1.0
    # t = 1: the machine was busy 1.5 s, this process 0.5 s of them: one other core
    assert busy() == pytest.approx(1.0)
    assert busy() == pytest.approx(1.0)  # t = 1.1: cached
    # t = 3, two seconds on: 1.0 s busy, none of it this process's: half a core
    assert busy() == pytest.approx(0.5)
    assert _BusyElsewhere(read=lambda: None)() == 0.0  # no /proc/stat: as if idle


def test_the_cpu_seconds_read_count_this_process_within_the_machines():
    """A busy loop of this process shows in both readings of ``_cpu_seconds``, the
    machine's at least as much as the process's (to the kernel's 10 ms ticks)."""
    import os
    import time

    from causefs.numerics.threads import _cpu_seconds

    before = _cpu_seconds()
    if before is None:
        pytest.skip("no /proc/stat on this system")
    start = time.process_time()
    while time.process_time() - start < 0.3:
        pass
    after = _cpu_seconds()
    own = after[1] - before[1]
    assert 0.25 <= own <= 0.3 + 0.3 * os.cpu_count()
    assert after[0] - before[0] >= own - 0.05


def blas_threads() -> set:
    """Threads of the BLAS pools numpy and scipy call; a single-threaded build (SCS's,
    loaded with cvxpy) stays at one, and an OpenMP-built BLAS (faiss's) keeps its own."""
    from threadpoolctl import threadpool_info

    return {info["num_threads"] for info in threadpool_info()
            if info["user_api"] == "blas"
            and info.get("threading_layer") not in ("openmp", "disabled")}


@pytest.mark.parametrize("busy, cores, expected", [
    (0.0, 2, 2), (0.4, 2, 2), (0.6, 2, 1), (1.0, 2, 1), (None, 2, 1), (3.0, 8, 2),
    (7.0, 8, 1), (0.0, None, 1)])  # cores unknown (os.cpu_count() is None): one
def test_a_large_operation_widens_only_onto_cores_left_idle(monkeypatch, busy, cores,
                                                            expected):
    """The caller allows two threads; BLAS widens to them less the cores busy elsewhere
    (rounded), to one before the first interval is measured."""
    from threadpoolctl import threadpool_limits

    from causefs.numerics import threads as threads_module

    monkeypatch.setattr(threads_module, "_BUSY", lambda: busy)
    monkeypatch.setattr(threads_module.os, "cpu_count", lambda: cores)

    with threadpool_limits(limits=2), threads_module.fit_threads():
        assert threads_module.wide_threads() == expected
        with threads_module.threads_for(1e12):
            blas = blas_threads()
        with threads_module.threads_for(1e3):  # small: one thread whatever is idle
            small = blas_threads()
    assert blas == {expected} and small == {1}


@pytest.mark.parametrize("product", ["quad", "matvec", "diagonal"])
def test_the_balance_products_widen_from_fewer_flops_than_the_rest(monkeypatch, product):
    """Between PRODUCT_WIDE_FLOPS and WIDE_FLOPS, an operation widens only where it says
    it is a balance product; the linear kernel's three products say so."""
    from threadpoolctl import threadpool_limits

    from causefs.kernels import linear
    from causefs.numerics import threads as threads_module

    monkeypatch.setattr(threads_module, "_BUSY", lambda: 0.0)
    monkeypatch.setattr(threads_module.os, "cpu_count", lambda: 2)

    seen = []

    @contextlib.contextmanager
    def spy(*args):
        with threads_module.threads_for(*args):
            seen.append(blas_threads())
            yield

    monkeypatch.setattr(linear, "threads_for", spy)
    low, high = threads_module.PRODUCT_WIDE_FLOPS, threads_module.WIDE_FLOPS
    assert (low, high) == (5e7, 2e8)  # the values the docstrings' measurements are of
    rng = np.random.default_rng(0)
    n, d = 800, 300  # products of 2 n d^2 = 1.4e8 flops, the diagonal half: between
    operator = linear.LinearBalance(rng.random((n, d)), rng.random((n, d)),
                                    np.ones((d, d), dtype=bool))
    with threadpool_limits(limits=2), threads_module.fit_threads():
        with threads_module.threads_for(high - 1):
            below = blas_threads()
        with threads_module.threads_for(high):
            at = blas_threads()
        with threads_module.threads_for(low - 1, low):
            product_below = blas_threads()
        with threads_module.threads_for(low, low):
            product_at = blas_threads()
        if product == "diagonal":
            operator.diagonal()
        else:
            getattr(operator, product)(np.full(n, 1.0 / n))
    assert below == {1} and at == {2}
    assert product_below == {1} and product_at == {2}
    assert seen and all(threads == {2} for threads in seen)
