"""Every part's declared cost is the formula its docstring states.

A part's ``cost`` feeds the fit's time estimate (logged before a large fit) and the memory
guard (which refuses a fit over the budget and names the phase); the numbers are
documented next to each part, with the measurements they were calibrated on. The memory
tests elsewhere check that each declared phase bounds the measured peak within a window;
these check the code against the documented formula itself, at sizes where every term of
it counts (primes, so that no two terms coincide). Each expected value below is written
from the docstring quoted beside it, not from the code.
"""

import math

import pytest

from causefs.blocks.descent.embedding import EmbeddingBlock
from causefs.blocks.descent.sample_weights import SampleWeightsBlock
from causefs.blocks.descent.selection_matrix import selection_cost
from causefs.blocks.initialization.correlation_groups import CorrelationGroupsBlock
from causefs.blocks.initialization.decorrelation_weights import DecorrelationWeightsBlock
from causefs.blocks.initialization.density_ratio_weights import DensityRatioWeightsBlock
from causefs.blocks.initialization.initial_confounders import InitialConfoundersBlock
from causefs.blocks.initialization.spectral_embedding import SpectralEmbeddingBlock, dense_path
from causefs.blocks.nuisance.nuisance_adjustment import NuisanceCenteringBlock, NuisanceEffectBlock
from causefs.blocks.nuisance.nuisance_balance_weights import NuisanceBalanceWeightsBlock
from causefs.blocks.structure.confounders import ConfoundersBlock
from causefs.kernels.base import gram_bytes
from causefs.kernels.linear import LinearKernel
from causefs.kernels.rbf import RBFKernel
from causefs.model.fit_size import FitSize
from causefs.model.settings import Settings
from causefs.model.subproblems import selection_system_cost
from causefs.qp.cvxpy_backend import CvxpyBackend
from causefs.qp.projected_gradient import ProjectedGradientBackend

FLOAT = 8

#: (n, d, h, k, M, q): primes, so that a changed coefficient of any term shows
SIZES = [(307, 53, 3, 5, 7, 2), (1009, 211, 7, 11, 3, 5), (59, 401, 5, 3, 13, 2)]


def fit_size(n, d, h, k, M, q, balance=True, **settings):
    return FitSize(n, d, Settings(n_clusters=h, n_neighbors=k, max_granularity=M,
                                  **settings), balance=balance, n_nuisance=q)


def sizes():
    return pytest.mark.parametrize("shape", SIZES, ids=lambda s: "x".join(map(str, s[:2])))


@sizes()
def test_the_embedding_step(shape):
    n, d, h, k, M, q = shape
    # "GPI 30 max_iter n h operations and 8 n h + 12 n k floats"
    cost = EmbeddingBlock(max_iter=17, solver="gpi").cost(fit_size(*shape))
    assert cost.ops == 30 * 17 * n * h
    assert cost.memory["embedding"] == (8 * n * h + 12 * n * k) * FLOAT
    # "subspace 240 s n h operations, s = min(max_iter, SUBSPACE_STEPS) ..., and
    # 20 n h + 12 n k floats, plus 2 m^2 + 2 min(m^2, n k^2) with m anchors"
    for max_iter, steps in [(17, 8), (5, 5)]:
        cost = EmbeddingBlock(max_iter=max_iter, solver="subspace").cost(fit_size(*shape))
        assert cost.ops == 240 * steps * n * h
        assert cost.memory["embedding"] == (20 * n * h + 12 * n * k) * FLOAT
    m = 47
    cost = EmbeddingBlock(solver="subspace").cost(fit_size(*shape, n_anchors=m))
    assert cost.memory["embedding"] == (20 * n * h + 12 * n * k + 2 * m * m
                                        + 2 * min(m * m, n * k * k)) * FLOAT


@sizes()
@pytest.mark.parametrize("precision, extra", [("float32", 3), ("float64", 0)])
@pytest.mark.parametrize("balance", [True, False])
def test_the_sample_weights_step(shape, precision, extra, balance):
    n, d, h, k, M, q = shape
    qp = ProjectedGradientBackend()
    block = SampleWeightsBlock(qp, max_products=9, precision=precision)
    size = fit_size(*shape, balance=balance)
    # "the solve's products (QPBackend.products for max_products) and, in float32, ...
    # two ... and one"; "those products where the objective has a balance term (none
    # without one), and 200 n (M k + 2) operations", M the granularities (at most d)
    cost = block.cost(size)
    assert cost.balance_products == (qp.products(9) + extra if balance else 0.0)
    assert cost.ops == 200 * n * (min(M, d) * k + 2)


def documented_selection_counts(n, d, groups, h):
    """The multiply-adds ``selection_system_cost`` documents, before its rates: the
    primal's data Gram ``n d^2`` and each group's ``n s^2`` and ``d^3 / 6``; the dual's
    ``3 n^2 d`` and each group's LU and product ``2 n^3 / 3 + n^2 d / M`` and a final
    ``n^3``; conjugate gradients' ``iterations`` products of two passes over ``n d``
    entries for each of h columns."""
    grouped = n * sum(s * s for s in groups) + d**3 / 6
    dual = 3 * n * n * d + len(groups) * (2 * n**3 / 3 + n * n * d / len(groups)) + n**3
    return {"primal": n * d * d + grouped, "repeat": grouped, "dual": dual,
            "cg": 2 * n * d * h}


@sizes()
def test_the_w_systems_counts(shape):
    from causefs.model.subproblems import CG_SLOWDOWN, DUAL_SLOWDOWN
    n, d, h, k, M, q = shape
    groups = [d // M + 1, d // M, 3]
    counts = selection_system_cost(n, d, groups, h, iterations=4)
    expected = documented_selection_counts(n, d, groups, h)
    assert counts["primal"] == pytest.approx(expected["primal"], rel=1e-12)
    assert counts["repeat"] == pytest.approx(expected["repeat"], rel=1e-12)
    assert counts["dual"] == pytest.approx(DUAL_SLOWDOWN * expected["dual"], rel=1e-12)
    assert counts["cg"] == pytest.approx(CG_SLOWDOWN * 4 * expected["cg"], rel=1e-12)


@sizes()
@pytest.mark.parametrize("system", ["primal", "dual", "cg"])
def test_the_w_step_in_each_form(shape, system):
    n, d, h, k, M, q = shape
    size = fit_size(*shape)
    # "7 n d + 4 d^2 floats for the primal form, 8 n d + 4 n^2 for the dual and
    # 2 n d + (M + 8) n h + 8 d h for conjugate gradients"; flops "twice the form's
    # multiply-adds (M groups of max(1, d // M) features)"
    memory = {"primal": 7 * n * d + 4 * d * d, "dual": 8 * n * d + 4 * n * n,
              "cg": 2 * n * d + (M + 8) * n * h + 8 * d * h}[system]
    cost = selection_cost(size, system)
    assert cost.memory["selection_matrix"] == memory * FLOAT
    counts = selection_system_cost(n, d, [max(1, d // M)] * M, h)
    assert cost.flops == pytest.approx(2 * counts[system], rel=1e-12)


@sizes()
@pytest.mark.parametrize("sampled", [False, True])
def test_the_feature_groups(shape, sampled):
    n, d, h, k, M, q = shape
    block = CorrelationGroupsBlock(max_exact_features=29 if sampled else None)
    s = 29 if sampled else d
    # "2 n d s flops, 10 s^2 operations, d s + 1.5 s^2 + 2 n d floats"
    cost = block.cost(fit_size(*shape))
    assert cost.flops == 2 * n * d * s
    assert cost.ops == 10 * s * s
    assert cost.memory["feature_clustering"] == (d * s + 1.5 * s * s + 2 * n * d) * FLOAT


@sizes()
def test_the_decorrelation_weights(shape):
    n, d, h, k, M, q = shape
    # "4 max_iter n d^2 flops; 4 n d + 3 d^2 + 8 n floats"
    cost = DecorrelationWeightsBlock(max_iter=13).cost(fit_size(*shape))
    assert cost.flops == 4 * 13 * n * d * d
    assert cost.memory["decorrelation_weights"] == (4 * n * d + 3 * d * d + 8 * n) * FLOAT


@sizes()
@pytest.mark.parametrize("max_pairs", [100, 10**6])
def test_the_density_ratio_weights(shape, max_pairs):
    n, d, h, k, M, q = shape
    pairs = min(d * (d - 1) // 2, max_pairs)
    # "p = min(d (d - 1) / 2, max_pairs) pairs: 800 n p flops; 8 n (p + d) floats"
    cost = DensityRatioWeightsBlock(max_pairs=max_pairs).cost(fit_size(*shape))
    assert cost.flops == 800 * n * pairs
    assert cost.memory["density_ratio_weights"] == 8 * n * (pairs + d) * FLOAT


def cost_ops(shape):
    return SpectralEmbeddingBlock().cost(fit_size(*shape)).ops


@sizes()
def test_the_spectral_embedding(shape):
    n, d, h, k, M, q = shape
    # "7 h n^1.6 operations; (12 h + 8 k + 30) n floats, plus 3 n^2 on the dense path"
    cost = SpectralEmbeddingBlock().cost(fit_size(*shape))
    dense = 3 * n * n if (n < 200 or 5 * h >= n) else 0
    assert cost.ops == pytest.approx(7 * h * n**1.6, rel=1e-12)
    assert cost.memory["spectral_embedding"] == ((12 * h + 8 * k + 30) * n + dense) * FLOAT
    # "or ANCHORED_OPS n h with anchors; ... plus 2 m^2 + 2 min(m^2, n k^2) with m
    # anchors on the LOBPCG path" (beyond SHIFT_INVERT_N samples)
    from causefs.blocks.initialization.spectral_embedding import ANCHORED_OPS

    m, large = 47, 5000 + n
    cost = SpectralEmbeddingBlock().cost(fit_size(large, d, h, k, M, q, n_anchors=m))
    assert cost.ops == pytest.approx(ANCHORED_OPS * large * h, rel=1e-12)
    assert cost.memory["spectral_embedding"] == ((12 * h + 8 * k + 30) * large + 2 * m * m
                                                 + 2 * min(m * m, large * k * k)) * FLOAT
    # at most SHIFT_INVERT_N samples shift-invert runs, anchors or not
    assert SpectralEmbeddingBlock().cost(fit_size(*shape, n_anchors=m)).ops == cost_ops(shape)


@pytest.mark.parametrize("n, h, dense", [(199, 2, True), (200, 2, False), (201, 2, False),
                                         (250, 50, True), (251, 50, False),
                                         (249, 50, True)])
def test_the_dense_path_is_below_200_samples_or_5_h(n, h, dense):
    # "below 200 samples, or when h is too large for an iterative solver" (5 h >= n)
    assert dense_path(n, h) is dense


@sizes()
def test_the_initial_confounders(shape):
    n, d, h, k, M, q = shape
    # "K ... d^2 bytes of bools ...; the coding's non-zeros (n d bools) and the scores
    # (16 d bytes)"
    cost = InitialConfoundersBlock().cost(fit_size(*shape))
    assert cost.resident == d * d
    assert cost.memory["initial_confounders"] == n * d + 16 * d


@sizes()
@pytest.mark.parametrize("correlation", ["cosine", "pearson"])
def test_the_confounder_pruning(shape, correlation):
    n, d, h, k, M, q = shape
    size = fit_size(*shape, max_treatments=17)
    t = size.n_treatments
    # "each (d, d) bools ... about 20 bytes a pair measured; 26 declared ... with
    # pearson ... n (2 d + t) floats"
    cost = ConfoundersBlock(correlation=correlation).cost(size)
    phase = d * d + 26 * d * t + (n * (2 * d + t) * FLOAT if correlation == "pearson" else 0)
    assert cost.resident == d * d
    assert cost.memory["confounders"] == phase


@sizes()
def test_the_nuisance_centring(shape):
    n, d, h, k, M, q = shape
    # "8 n d flops"; "2 n d floats", "n (q + 4) declared", "d (q + 1)"
    cost = NuisanceCenteringBlock().cost(fit_size(*shape))
    assert cost.flops == 8 * n * d
    assert cost.memory["nuisance_centering"] == (2 * n * d + n * (q + 4) + d * (q + 1)) * FLOAT


@sizes()
@pytest.mark.parametrize("top", [1, 4, 200])
def test_the_nuisance_effect(shape, top):
    n, d, h, k, M, q = shape
    m = min(d, top * h)
    # "4 n d (h + 4) flops and ... 120 n_init n m (h + 4)"; memory the larger of
    # "2 n d + n (2 q + 2 h + 8)" and "n (6 m + q + 3 h)", "plus 2 d (q + 1)"
    cost = NuisanceEffectBlock(top=top, n_init=3).cost(fit_size(*shape))
    assert cost.flops == 4 * n * d * (h + 4) + 120 * 3 * n * m * (h + 4)
    phase = max(2 * n * d + n * (2 * q + 2 * h + 8), n * (6 * m + q + 3 * h))
    assert cost.memory["nuisance_effect"] == (phase + 2 * d * (q + 1)) * FLOAT


@sizes()
def test_the_nuisance_balance_weights(shape):
    n, d, h, k, M, q = shape
    # "1600 n d flops"; "3 n d floats", "n (2 q + 12) declared", "2 d (q + 1)"
    cost = NuisanceBalanceWeightsBlock(ProjectedGradientBackend()).cost(fit_size(*shape))
    assert cost.flops == 1600 * n * d
    assert cost.memory["nuisance_balance"] == (3 * n * d + n * (2 * q + 12)
                                               + 2 * d * (q + 1)) * FLOAT


@sizes()
@pytest.mark.parametrize("form", ["gram", "products"])
def test_the_linear_kernel(shape, form):
    n, d, h, k, M, q = shape
    size = fit_size(*shape, balance_form=form, max_treatments=19)
    T = size.n_treatments
    # "4 n d |T| flops; 2 n d + 3 n |T| + 6 d |T| floats and gram_bytes"; gram_bytes:
    # "n^2 + 1536 n floats; 0 where it is not formed"
    gram = (n * n + 1536 * n) * FLOAT if form == "gram" else 0
    assert gram_bytes(size) == gram
    cost = LinearKernel().cost(size)
    assert cost.flops == 4 * n * d * T
    assert cost.memory["balance_operator"] == (2 * n * d + 3 * n * T + 6 * d * T) * FLOAT + gram


@sizes()
def test_the_rbf_kernel(shape):
    n, d, h, k, M, q = shape
    size = fit_size(*shape, max_treatments=19)
    T = size.n_treatments
    # "exact: 2 n^2 flops and 7 n^2 floats; random features: 4 n |T| D flops and
    # n |T| D + 4 n D + 3 n d floats"
    exact = RBFKernel(approximation="exact").cost(size)
    assert exact.flops == 2 * n * n
    assert exact.memory["balance_operator"] == 7 * n * n * FLOAT
    features = RBFKernel(approximation="rff", n_components=23).cost(size)
    assert features.flops == 4 * n * T * 23
    assert features.memory["balance_operator"] == (n * T * 23 + 4 * n * 23 + 3 * n * d) * FLOAT


@sizes()
def test_the_cvxpy_backend(shape):
    n = shape[0]
    # "20 n^2 bound them" (doubles)
    assert CvxpyBackend().cost(fit_size(*shape)).memory["dense_qp"] == 20 * n * n * FLOAT


def test_the_sizes_make_every_term_count():
    """The shapes differ in every ratio the formulas mix, so no two terms are equal."""
    for n, d, h, k, M, q in SIZES:
        assert len({n, d, h, k, M, q}) == 6
    assert len({d / n for n, d, *_ in SIZES}) == len(SIZES)
    assert not math.isclose(SIZES[0][0] / SIZES[1][0], SIZES[0][1] / SIZES[1][1])
