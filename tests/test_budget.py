"""The budget: a fit's time and memory are the sums of what its parts declare."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from causefs import CauseFS, Schedule
from causefs.blocks import Block
from causefs.budget import MemoryLimitError, estimate_fit
from causefs.budget.fit import state_bytes
from causefs.budget.runtime import BLAS_RATE, OTHER_RATE
from causefs.core.parts import Cost
from causefs.engine import build_parts, estimate, resolve_schedule
from causefs.kernels import LinearKernel
from causefs.model.fit_size import FitSize
from causefs.model.settings import Settings
from causefs.qp.projected_gradient import ProjectedGradientBackend

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)


class _Costly(Block):
    """A do-nothing block that declares a cost."""

    name = "costly"
    kind = "structural"
    reads = ("X",)

    def __init__(self, flops=0.0, ops=0.0, products=0.0, phase=None, nbytes=0.0):
        self.flops, self.ops, self.products = flops, ops, products
        self.phase, self.nbytes = phase, nbytes

    def step(self, state):
        return state

    def cost(self, size):
        memory = {self.phase: self.nbytes} if self.phase else {}
        return Cost(flops=self.flops, ops=self.ops, balance_products=self.products,
                    memory=memory, advice={self.phase: "make the costly block cheaper"}
                    if self.phase else {})


class _Kernel(LinearKernel):
    name = "priced"

    def cost(self, size):
        return Cost(flops=1e6, ops=1e3, memory={"balance_operator": 5e6})


def test_time_is_the_sum_over_the_initialization_and_max_iter_loops():
    size = FitSize(100, 10, Settings(n_clusters=3))
    init = [_Costly(flops=2e9, ops=1e6)]
    loop = [_Costly(flops=4e9, products=3.0), _Costly(ops=5e5)]
    qp = ProjectedGradientBackend()
    got = estimate_fit(size, init, loop, _Kernel(), qp, max_iter=7)
    flops = 2e9 + 7 * 4e9 + 7 * 3 * 1e6  # the kernel prices each balance product
    ops = 1e6 + 7 * 5e5 + 7 * 3 * 1e3
    assert got.seconds == pytest.approx(flops / BLAS_RATE + ops / OTHER_RATE, rel=1e-12)


def test_structural_blocks_are_counted_in_the_first_structure_iter_iterations_only():
    size = FitSize(100, 10, Settings(n_clusters=3))
    descent, structural = _Costly(ops=1e6), _Costly(ops=1e8)  # _Costly is structural
    descent.kind = "descent"
    loop = [descent, structural]
    qp = ProjectedGradientBackend()

    def ops(structure_iter, max_iter=30):
        got = estimate_fit(size, [], loop, _Kernel(), qp, max_iter, structure_iter)
        return got.seconds * OTHER_RATE

    assert ops(3) == pytest.approx(30 * 1e6 + 3 * 1e8, rel=1e-9)
    assert ops(None) == pytest.approx(30 * (1e6 + 1e8), rel=1e-9)
    assert ops(50, max_iter=4) == pytest.approx(4 * (1e6 + 1e8), rel=1e-9)


def test_memory_is_the_state_plus_the_largest_phase():
    size = FitSize(100, 10, Settings(n_clusters=3))
    blocks = [_Costly(phase="small", nbytes=1e3), _Costly(phase="large", nbytes=7e8)]
    got = estimate_fit(size, blocks, blocks, _Kernel(), ProjectedGradientBackend(), 3).memory
    assert got.worst_phase == "large"
    assert got.peak == state_bytes(size) + 7e8
    assert got.phases["balance_operator"] == 5e6


def test_a_plugin_part_is_estimated_and_refused(blobs, monkeypatch):
    """A block of the schedule that declares a large phase makes the fit refuse to start,
    naming the phase and the block's advice; one that declares time raises the estimate."""
    full = resolve_schedule("full")
    heavy = Schedule("heavy", full.init, (*full.loop, _Costly(phase="costly", nbytes=1e12)))
    with pytest.raises(MemoryLimitError, match="costly: .* make the costly block cheaper"):
        CauseFS(n_clusters=3, schedule=heavy, memory_limit="1GB").fit(blobs[0])
    slow = Schedule("slow", full.init, (*full.loop, _Costly(flops=1e12)))
    quick = CauseFS(n_clusters=3, max_iter=2, random_state=0, schedule="full").fit(blobs[0])
    long = CauseFS(n_clusters=3, schedule=slow, max_iter=2, random_state=0).fit(blobs[0])
    assert long.time_estimate_ == pytest.approx(quick.time_estimate_ + 2 * 1e12 / BLAS_RATE)


def test_the_full_fit_is_estimated_from_its_parts():
    """The blocks, the kernel and the QP backend all count: the dense QP and the exhaustive
    neighbour search add their n x n phases, the balance term its products."""
    n, d = 5000, 100
    fast = estimate(n, d, Settings(n_clusters=5, schedule="full"))
    dense = estimate(n, d, Settings(n_clusters=5, schedule="full", qp="cvxpy",
                                    neighbor_algorithm="all"))
    assert dense.memory.phases["dense_qp"] >= 20 * n * n * 8
    assert dense.memory.phases["graph_candidates"] == 5 * n * n * 8
    assert "dense_qp" not in fast.memory.phases
    without_balance = estimate(n, d, Settings(n_clusters=5, schedule="ablation_I"))
    assert without_balance.seconds < fast.seconds
    parts = build_parts(Settings(n_clusters=5))
    size = FitSize(n, d, Settings(n_clusters=5))
    assert parts.loop[0].name == "selection_matrix" and parts.loop[0].cost(size).flops > 0


def test_estimates_are_finite_for_every_registered_schedule():
    from causefs.plugins import available

    for name in available("schedule"):
        got = estimate(500, 40, Settings(n_clusters=4, schedule=name))
        assert np.isfinite(got.seconds) and got.seconds > 0
        assert got.memory.peak > 0


#: wall seconds of default fits (make_causal, 10 clusters, anchor graphs: n_anchors="auto"
#: takes 1000 beyond 20,000 samples; stopped after 6 iterations) measured by
#: ``benchmarks/bench_speed.py`` on the idle 2-core Intel Xeon of docs/PERFORMANCE.md
#: ("The embedding with anchors", 2026-12-01)
MEASURED_FIT_SECONDS = {(100_000, 64): 40.4, (100_000, 256): 69.6, (1_000_000, 64): 558.8}
#: the estimate's misses, said in docs/PERFORMANCE.md (none since the embedding is priced
#: at the steps its calls take)
MISSED: dict = {}


@pytest.mark.parametrize(("n", "d"), [
    pytest.param(n, d, marks=pytest.mark.xfail(strict=True, reason=MISSED[n, d]))
    if (n, d) in MISSED else (n, d) for n, d in MEASURED_FIT_SECONDS])
def test_a_large_fit_is_estimated_within_a_factor_of_two(n, d):
    """Issue 24's target for the estimate logged before a large fit. It must cover every
    phase of a large fit (neighbour search, spectral embedding, embedding) and the
    iterations the fit runs: priced at max_iter = 30 it was 3-5 times these; with the
    embedding priced at its cap of 30 steps a call, 2.4-3.4 times (a miss goes in
    MISSED, strict: a fix shows as a pass)."""
    measured = MEASURED_FIT_SECONDS[n, d]
    got = estimate(n, d, Settings(n_clusters=10, n_features_to_select=20)).seconds
    assert measured / 2 <= got <= 2 * measured, f"{got:.0f} s estimated for {measured} s"


def test_dense_data_with_zeros_are_priced_as_dense_data_in_the_graph_updates():
    """The graph updates search the dense embeddings (a k-d tree of the anchors),
    whatever the share of zeros in the data: a fit of dense data whose scaled minimum
    is 0 (density 0.999) was priced 1.2 times the same fit at density 1, its updates
    as products with the anchors."""
    settings = Settings(n_clusters=10, n_features_to_select=20)
    dense = estimate(100_000, 256, settings).seconds
    assert estimate(100_000, 256, settings, density=0.999).seconds == pytest.approx(
        dense, rel=0.05)


def test_a_fit_with_stopping_rules_is_priced_at_the_expected_iterations():
    from causefs.budget import EXPECTED_ITERATIONS
    from causefs.engine import build_parts, estimate

    def loop_seconds(max_iter, **extra):
        settings = Settings(n_clusters=3, max_iter=max_iter, memory_limit=None, **extra)
        return estimate(5000, 50, settings).seconds - estimate(
            5000, 50, Settings(n_clusters=3, max_iter=0, memory_limit=None, **extra)).seconds

    assert build_parts(Settings(n_clusters=3)).stopping  # the default fit stops early
    # the default schedule's loop is priced at EXPECTED_ITERATIONS iterations, not max_iter
    assert loop_seconds(30) == pytest.approx(loop_seconds(EXPECTED_ITERATIONS), rel=1e-9)
    assert loop_seconds(4) < loop_seconds(EXPECTED_ITERATIONS)  # fewer: max_iter counts


@pytest.mark.parametrize("shifted", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_the_fit_is_priced_at_the_non_zero_share_of_its_active_features(monkeypatch, sparse,
                                                                         shifted):
    """The estimate a fit logs is made with the share of non-zero cells of the features it
    keeps (a constant feature dropped), counted the same for dense and sparse X, after
    the scaling: a column whose minimum is not 0 is shifted, its zeros made non-zero."""
    import scipy.sparse as sp
    from sklearn.preprocessing import MinMaxScaler

    import causefs.estimator as estimator_module

    rng = np.random.default_rng(0)
    X = (rng.random((60, 30)) < 0.2) * rng.random((60, 30))
    X[:, 4] = 0.0  # constant: not active
    X[:3, 7] = 1.0
    if shifted:
        X[:, 9] -= 0.5  # its minimum is -0.5: the zeros become 0.5 / 1.5 after scaling
    active = [j for j in range(30) if j != 4]
    expected = np.count_nonzero(MinMaxScaler().fit_transform(X)[:, active]) / (60 * len(active))
    seen = []
    real = estimator_module.estimate

    def spy(n, d, settings, parts=None, density=1.0, n_nuisance=0):
        seen.append((n, d, density, n_nuisance))
        return real(n, d, settings, parts, density, n_nuisance)

    monkeypatch.setattr(estimator_module, "estimate", spy)
    selector = CauseFS(n_clusters=2, n_features_to_select=3, max_iter=1, random_state=0)
    with pytest.warns(ConvergenceWarning):  # one iteration: the stopping rules not met
        selector.fit(sp.csr_array(X) if sparse else X)
    assert seen == [(60, 29, pytest.approx(expected, rel=1e-12), 0)]
    assert 0.1 < expected < 0.3


def test_the_fit_is_priced_with_the_coded_columns_of_its_nuisance_variables(monkeypatch):
    """The nuisance blocks' memory grows with Z's q coded columns: a batch of 5 levels is
    4 indicator columns (centred), and a fit passes q to its estimate."""
    import causefs.estimator as estimator_module
    from causefs.engine import build_parts, estimate

    seen = []
    real = estimator_module.estimate

    def spy(n, d, settings, parts=None, density=1.0, n_nuisance=0):
        seen.append(n_nuisance)
        return real(n, d, settings, parts, density, n_nuisance)

    monkeypatch.setattr(estimator_module, "estimate", spy)
    X = np.random.default_rng(0).random((60, 8))
    with pytest.warns(ConvergenceWarning):
        CauseFS(n_clusters=2, n_features_to_select=3, max_iter=1,
                random_state=0).fit(X, nuisance=np.arange(60) % 5)
    assert seen == [4]
    settings = CauseFS(n_clusters=2, schedule="nuisance_adjusted").settings()
    parts = build_parts(settings, nuisance=True)
    phases = [estimate(3000, 40, settings, parts, n_nuisance=q).memory.phases
              for q in (0, 20)]
    assert phases[1]["nuisance_effect"] > phases[0]["nuisance_effect"]
