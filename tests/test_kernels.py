"""The MMD kernels' balance operators against the balance Hessian written from its
definition here (docs/MODEL.md, "Confounder balance"; paper eqs. 3.2-3.3):

    H = sum_r (a_r a_r') o kappa_r,   kappa_r(i, j) = kappa(x_i[K_r], x_j[K_r]),

for the linear kernel ``<z, z'>`` and the Gaussian ``exp(-||z - z'||^2 / (2 s_r^2))``, and
what each kernel declares a product costs against what building and using it allocates."""

import gc
import re
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from causefs.kernels import LinearKernel, RBFKernel
from causefs.kernels.base import GRAM_MAX_BYTES, gram_bytes, gram_fits
from causefs.kernels.rbf import ExactRBFBalance, RandomFeatureRBFBalance, median_bandwidths
from causefs.model.fit_size import FitSize
from causefs.model.settings import Settings
from causefs.model.treatments import treatment_coding


def linear_hessian(X, coding, K):
    """sum_r (a_r a_r') o (X[:, K_r] X[:, K_r]'), pair by pair."""
    n = X.shape[0]
    H = np.zeros((n, n))
    for r in range(K.shape[1]):
        Z = X[:, K[:, r]]
        H += np.outer(coding[:, r], coding[:, r]) * (Z @ Z.T)
    return H


def gaussian_hessian(X, coding, K, s2):
    """sum_r (a_r a_r') o exp(-||x_i[K_r] - x_j[K_r]||^2 / (2 s2_r)), entry by entry."""
    n = X.shape[0]
    H = np.zeros((n, n))
    for r in range(K.shape[1]):
        Z = X[:, K[:, r]]
        for i in range(n):
            for j in range(n):
                H[i, j] += coding[i, r] * coding[j, r] * np.exp(
                    -np.sum((Z[i] - Z[j]) ** 2) / (2.0 * s2[r]))
    return H


def case(n=24, d=7, density=0.5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    K = rng.random((d, d)) < density
    np.fill_diagonal(K, False)
    return X, treatment_coding(X), K, rng.random(n)


@pytest.mark.parametrize("density, d", [(0.0, 7), (0.2, 7), (0.8, 7), (1.0, 7),
                                        (0.3, 40)])  # 40 features: more pairs than a chunk
@pytest.mark.parametrize("sparse", [False, True])
def test_the_linear_balance_is_the_mmd_hessian(density, d, sparse):
    X, coding, K, v = case(d=d, density=density)
    H = linear_hessian(X, coding, K)
    op = LinearKernel().balance_operator(sp.csr_matrix(X) if sparse else X, coding, K)
    assert op.quad(v) == pytest.approx(v @ H @ v, rel=1e-12, abs=1e-12)
    assert op.quad(v) == pytest.approx(v @ H @ v, rel=1e-12, abs=1e-12)  # kept, the same
    other = v[::-1].copy()
    assert op.quad(other) == pytest.approx(other @ H @ other, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(op.matvec(v), H @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.diagonal(), np.diag(H), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.dense(), H, rtol=1e-12, atol=1e-12)
    assert op.matvec(v).dtype == np.float64 and op.diagonal().dtype == np.float64


def test_the_low_precision_linear_balance_is_float32_and_made_once():
    X, coding, K, v = case(n=60, density=0.6)
    H = linear_hessian(X, coding, K)
    op = LinearKernel().balance_operator(X, coding, K)
    low = op.low_precision()
    assert op.low_precision() is low and low.low_precision() is low
    for value, exact in [(low.quad(v), v @ H @ v), (low.matvec(v), H @ v),
                         (low.diagonal(), np.diag(H))]:
        np.testing.assert_allclose(value, exact, rtol=1e-5)
        assert np.asarray(value).dtype == np.float64  # float32 products, float64 results
    # float32 rounding, not the float64 products: the results differ in the last digits
    assert not np.array_equal(low.matvec(v), op.matvec(v))
    assert low.quad(v) != op.quad(v)
    X32 = X.astype(np.float32)
    op32 = LinearKernel().balance_operator(X32, coding.astype(np.float32), K)
    assert op32.low_precision() is op32


def test_the_low_precision_products_round_the_vector_to_float32_too():
    """Float32 products: the vector is rounded to float32 as the data are, so a vector
    of ``1 + 2^-30`` (1 in float32) is 1 to them. Small integers keep every float32
    product and sum exact, so the results are the float64 Hessian's at ones, exactly;
    the float64 operator sees the difference."""
    X = np.arange(24.0).reshape(8, 3) % 4
    coding = np.where(np.arange(24).reshape(8, 3) % 3 == 0, 1.0, -1.0)
    K = ~np.eye(3, dtype=bool)
    H = linear_hessian(X, coding, K)
    ones, v = np.ones(8), np.full(8, 1.0 + 2.0**-30)
    op = LinearKernel().balance_operator(X, coding, K)
    low = op.low_precision()
    assert low.quad(v) == ones @ H @ ones != op.quad(v)
    assert np.array_equal(low.matvec(v), H @ ones)
    assert not np.array_equal(op.matvec(v), H @ ones)


@pytest.mark.parametrize("kept", [[True, False, False, False, False],
                                  [True, True, True, True, False],
                                  [False, True, False, True, True]])
def test_the_exact_gaussian_balance_is_its_definition(kept):
    """Each treatment's distances on its own confounders: computed on the kept columns,
    or as all columns' less the dropped ones (whichever is fewer)."""
    rng = np.random.default_rng(1)
    X = rng.random((9, 5))
    coding = rng.standard_normal((9, 3))
    K = np.array([kept, kept[::-1], [True] * 5]).T
    s2 = np.array([0.3, 1.7, 0.9])
    op = ExactRBFBalance(X, coding, K, s2)
    np.testing.assert_allclose(op.dense(), gaussian_hessian(X, coding, K, s2), rtol=1e-10,
                               atol=1e-12)


def test_random_features_are_the_documented_cosines():
    """Psi stacks a_r sqrt(2/D) cos(Omega z^r / s_r + b) over the treatments, Omega's
    columns those of z^r's features, with Omega (D, d) and b drawn in that order."""
    rng = np.random.default_rng(2)
    X = rng.random((11, 4))
    coding = rng.standard_normal((11, 2))
    K = np.array([[True, False, True, True], [False, True, False, False]]).T
    s2, D = np.array([0.5, 2.0]), 6
    op = RandomFeatureRBFBalance(X, coding, K, s2, D, np.random.default_rng(7))
    draws = np.random.default_rng(7)
    Omega = draws.standard_normal((D, 4))
    b = draws.uniform(0.0, 2.0 * np.pi, size=D)
    Psi = np.hstack([coding[:, [r]] * np.sqrt(2.0 / D)
                     * np.cos(X[:, K[:, r]] @ Omega[:, K[:, r]].T / np.sqrt(s2[r]) + b)
                     for r in range(2)])
    np.testing.assert_allclose(op.dense(), Psi @ Psi.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.diagonal(), np.diag(Psi @ Psi.T), rtol=1e-12)


def test_the_bandwidth_is_the_median_squared_distance_with_fallbacks():
    """Over pairs of distinct samples: with two samples every pair is the same one."""
    rng = np.random.default_rng(0)
    X = np.array([[0.0, 1.0, 5.0], [3.0, 1.0, 1.0]])
    mask = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(median_bandwidths(X, mask, rng, n_pairs=7), [9.0, 16.0])
    # three points: the squared distances 0.01, 0.81 and 1.0 are equally likely over
    # distinct pairs, so their median is 0.81 (the mean, 0.61, is not the estimate)
    line = np.array([[0.0], [0.1], [1.0]])
    s2 = median_bandwidths(line, np.ones((1, 1)), np.random.default_rng(1), n_pairs=3000)
    np.testing.assert_allclose(s2, [0.81])
    # most pairs equal (median 0): the mean; every pair equal: 1
    X = np.zeros((10, 2))
    X[0, 0] = 1.0
    s2 = median_bandwidths(X, np.eye(2), np.random.default_rng(0), n_pairs=500)
    assert 0.0 < s2[0] < 1.0 and s2[1] == 1.0


@pytest.mark.parametrize("seed", range(8))
def test_the_bandwidth_is_estimated_on_pairs_drawn_from_all_distinct_pairs(seed):
    """The pairs are drawn among all pairs of distinct samples, each its own draw. Five
    points 0..4 on a line: of the 10 pairs, 4 have squared distance 1, 3 have 4, 2 have 9
    and 1 has 16, so the median over distinct pairs is 4 (at most 40 % below it, 30 %
    above): 2000 pairs miss it with a probability below 1e-15. The pairs a fixed offset
    apart (i, i + k mod 5) are not such a sample: k = 1 or 4 gives the distances
    1, 1, 1, 1, 16 (median 1)."""
    line = np.arange(5.0)[:, None]
    assert median_bandwidths(line, np.ones((1, 1)), np.random.default_rng(seed)) == [4.0]


def test_auto_is_exact_up_to_its_budget_of_multiply_adds():
    kernel = RBFKernel(exact_budget=10**2 * 3**2 / 2)
    assert kernel.resolved_approximation(10, 3) == "exact"  # n^2 d^2 / 2 = the budget
    assert kernel.resolved_approximation(11, 3) == "rff"
    assert RBFKernel("exact", exact_budget=0).resolved_approximation(10**6, 10) == "exact"
    assert RBFKernel("rff").resolved_approximation(2, 1) == "rff"
    assert RBFKernel().resolved_approximation(1000, 100) == "exact"  # 5e9 <= 2e10
    assert RBFKernel().resolved_approximation(3000, 100) == "rff"  # 4.5e10


def test_the_rbf_kernel_is_built_from_the_median_bandwidths():
    """The operator the kernel builds is the definition at the median heuristic's s_r^2
    (drawn from the seed), on the treatments that have confounders."""
    X, coding, K, v = case(n=12, d=4, density=0.7, seed=3)
    K[:, 1] = False  # a treatment without confounders adds nothing
    op = RBFKernel("exact", n_pairs=50).balance_operator(X, coding, K, seed=5)
    T = np.flatnonzero(K.any(axis=0))
    V = np.flatnonzero(K[:, T].any(axis=1))
    s2 = median_bandwidths(X[:, V], K[np.ix_(V, T)].astype(float),
                           np.random.default_rng(5), 50)
    expected = gaussian_hessian(X[:, V], coding[:, T], K[np.ix_(V, T)], s2)
    np.testing.assert_allclose(op.dense(), expected, rtol=1e-10, atol=1e-12)
    rff = RBFKernel("rff", n_components=30).balance_operator(X, coding, K, seed=5)
    assert isinstance(rff, RandomFeatureRBFBalance)
    # the random features are drawn from the seed, 0 by default (the docstring's)
    drawn = {seed: RBFKernel("rff", n_components=30).balance_operator(X, coding, K, seed=seed)
             for seed in (0, 1)}
    default = RBFKernel("rff", n_components=30).balance_operator(X, coding, K)
    assert np.array_equal(default.dense(), drawn[0].dense())
    assert not np.array_equal(default.dense(), drawn[1].dense())
    assert RBFKernel().balance_operator(X, coding, np.zeros_like(K)).quad(v) == 0.0


def size_of(n, d, form="auto"):
    return FitSize(n, d, Settings(balance_form=form), balance=True)


def build_peak(kernel, X, coding, K, form):
    """Bytes allocated at the peak while the operator is built, held as ``form`` says, and
    used for one product (after a first round: caches and imports warm)."""
    from causefs.kernels import with_balance_form

    v = np.ones(X.shape[0])

    def run():
        op = with_balance_form(kernel.balance_operator(X, coding, K), form, X.shape[0])
        op.matvec(v)
        return op

    run()
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kernel, n, d, form", [
    (LinearKernel(), 2000, 12, "products"), (LinearKernel(), 600, 12, "gram"),
    (LinearKernel(), 3000, 6, "products"),
    (RBFKernel("exact"), 500, 8, "auto"), (RBFKernel(), 400, 8, "auto"),
    (RBFKernel("rff", n_components=20), 2000, 10, "auto")])
def test_a_kernels_declared_memory_bounds_the_measured_peak(kernel, n, d, form):
    """Every feature a confounder of every treatment (the case the cost declares): the
    declared phase is at least the peak and at most three times it."""
    rng = np.random.default_rng(0)
    X = rng.random((n, d))
    K = ~np.eye(d, dtype=bool)
    declared = kernel.cost(size_of(n, d, form)).memory["balance_operator"]
    peak = build_peak(kernel, X, treatment_coding(X), K, form)
    assert peak <= declared <= 3 * peak, (peak, declared)


def test_the_gram_is_declared_where_it_may_be_formed():
    n = 1000
    assert gram_bytes(size_of(n, 5, "products")) == 0.0
    assert gram_bytes(size_of(n, 5, "gram")) == gram_bytes(size_of(n, 5, "auto")) > 8 * n * n
    assert gram_fits(int((GRAM_MAX_BYTES / 8) ** 0.5))
    assert not gram_fits(int((GRAM_MAX_BYTES / 8) ** 0.5) + 1)
    big = int((GRAM_MAX_BYTES / 8) ** 0.5) + 1
    assert gram_bytes(size_of(big, 5, "auto")) == 0.0 < gram_bytes(size_of(big, 5, "gram"))
    assert dict(LinearKernel().cost(size_of(n, 5, "gram")).advice) == {
        "balance_operator": "hold the balance term as products: balance_form='products'"}
    assert LinearKernel().cost(size_of(n, 5, "products")).advice == {}
    assert dict(RBFKernel("exact").cost(size_of(n, 5)).advice) == {
        "balance_operator": "use kernel='linear' or random features (kernel={'name': 'rbf', "
                            "'approximation': 'rff'})"}
    assert dict(RBFKernel("rff").cost(size_of(n, 5)).advice) == {
        "balance_operator": "use fewer random features (kernel={'name': 'rbf', "
                            "'n_components': ...}) or kernel='linear'"}


def test_a_product_is_counted_in_the_flops_of_its_matrix_products():
    """2 m k flops a (m, k) by (k,) product: the linear operator's two products of
    (n, |V|) by (|V|, |T|) with every feature a confounder; the dense Gram's (n, n) one;
    random features' two of (n, |T| D)."""
    n, d = 300, 7
    T = size_of(n, d).n_treatments
    assert LinearKernel().cost(size_of(n, d)).flops == 2 * (2 * n * d * T)
    assert RBFKernel("exact").cost(size_of(n, d)).flops == 2 * n * n
    assert RBFKernel("rff", n_components=9).cost(size_of(n, d)).flops == 2 * (2 * n * T * 9)


@pytest.mark.parametrize("kernel", [LinearKernel(), RBFKernel("rff", n_components=7)])
def test_a_kernels_declared_work_grows_as_its_products(kernel):
    """One product: linear in n and in the pairs (d x treatments) for the linear kernel,
    in n, the treatments and the random features for rff; the exact Gaussian's, n^2."""
    base = kernel.cost(size_of(100, 10)).flops
    assert kernel.cost(size_of(200, 10)).flops == pytest.approx(2 * base)
    T = size_of(100, 10).n_treatments
    grows = kernel.cost(size_of(100, 20)).flops / base
    expected = (20 * size_of(100, 20).n_treatments) / (10 * T) if isinstance(
        kernel, LinearKernel) else size_of(100, 20).n_treatments / T
    assert grows == pytest.approx(expected)
    exact = RBFKernel("exact")
    assert exact.cost(size_of(200, 3)).flops == pytest.approx(4 * exact.cost(size_of(100, 3)).flops)


@pytest.mark.parametrize("options, message", [
    ({"approximation": "fast"}, "approximation='fast': must be one of 'auto', 'exact', 'rff'"),
    ({"n_components": 0}, "n_components=0: must be an integer >= 1"),
    ({"exact_budget": -1}, "exact_budget=-1: must be a real number >= 0"),
    ({"n_pairs": 0}, "n_pairs=0: must be an integer >= 1"),
])
def test_the_rbf_kernels_options_are_checked(options, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        RBFKernel(**options)


def test_the_rbf_kernels_smallest_options_are_taken():
    kernel = RBFKernel(n_components=1, exact_budget=0, n_pairs=1)
    assert (kernel.n_components, kernel.exact_budget, kernel.n_pairs) == (1, 0.0, 1)
    assert type(kernel.exact_budget) is float


def test_confounder_sets_of_integers_are_read_as_truth_values():
    X, coding, K, v = case(density=0.9)
    as_ints = LinearKernel().balance_operator(X, coding, K.astype(int))
    np.testing.assert_allclose(as_ints.dense(), linear_hessian(X, coding, K), rtol=1e-12,
                               atol=1e-12)


def test_the_linear_balance_counts_the_flops_of_its_products_and_of_its_gram():
    """A product: two (n, |V|) x (|V|, |T|) products over the treatments that have a
    non-zero coding; the Gram: an (n, n) block product per pair inside K, or from all
    pairs less those outside K (plus one each for X_V X_V' and A_T A_T'), the fewer."""
    X, coding, K, v = case(n=20, d=8, density=0.5, seed=4)
    coding[:, 2] = 0.0  # not a treatment
    op = LinearKernel().balance_operator(X, coding, K)
    T = [r for r in range(8) if coding[:, r].any() and K[:, r].any()]
    V = [f for f in range(8) if K[f, T].any()]
    inside = int(K[np.ix_(V, T)].sum())
    assert op.product_flops() == 4 * 20 * len(V) * len(T)
    assert op.gram_flops() == 2 * 20 * 20 * min(
        inside, len(V) * len(T) - inside + len(V) + len(T))
    everything = ~np.eye(8, dtype=bool)
    full = LinearKernel().balance_operator(X, coding, everything)
    T = [r for r in range(8) if coding[:, r].any()]
    V = [f for f in range(8) if everything[f, T].any()]
    outside = len(V) * len(T) - int(everything[np.ix_(V, T)].sum())
    assert full.gram_flops() == 2 * 20 * 20 * (outside + len(V) + len(T))  # from all pairs


def test_the_latest_balance_value_is_reused_and_not_after_the_vector_changes():
    X, coding, K, v = case()
    op = LinearKernel().balance_operator(X, coding, K)
    calls = []
    moments = op._moments
    op._moments = lambda u: calls.append(1) or moments(u)
    first = op.quad(v)
    assert op.quad(v.copy()) == first and len(calls) == 1  # the same vector: kept
    v[0] += 1.0  # changed in place: computed again
    assert op.quad(v) == pytest.approx(v @ linear_hessian(X, coding, K) @ v)
    assert len(calls) == 2


class PluginBalance:
    """A plugin's operator: float32 dense form, a product of unknown cost."""

    def __init__(self, n):
        self.H = np.eye(n, dtype=np.float32)

    def dense(self):
        return self.H

    def product_flops(self):
        return None

    def gram_flops(self):
        return 1.0


def test_a_gram_of_a_plugins_operator_is_formed_only_when_both_costs_are_known():
    from causefs.kernels import GramBalance, with_balance_form

    operator = PluginBalance(4)
    assert with_balance_form(operator, "auto", 4) is operator  # product cost unknown
    gram = with_balance_form(operator, "gram", 4)
    assert isinstance(gram, GramBalance) and gram.dense().dtype == np.float64


class PricedBalance(PluginBalance):
    """A plugin's operator whose Gram costs ``ratio`` products."""

    def __init__(self, n, ratio):
        super().__init__(n)
        self.ratio = ratio

    def product_flops(self):
        return 1.0

    def gram_flops(self):
        return self.ratio


def test_auto_forms_the_gram_only_when_it_costs_less_than_the_break_even_products():
    """``GRAM_BREAK_EVEN_PRODUCTS``: the Gram when it costs *less* than that many
    products; at exactly that many the products stay."""
    from causefs.kernels import GramBalance, with_balance_form
    from causefs.kernels.base import GRAM_BREAK_EVEN_PRODUCTS

    at = PricedBalance(4, float(GRAM_BREAK_EVEN_PRODUCTS))
    assert with_balance_form(at, "auto", 4) is at
    below = PricedBalance(4, GRAM_BREAK_EVEN_PRODUCTS - 0.5)
    assert isinstance(with_balance_form(below, "auto", 4), GramBalance)
