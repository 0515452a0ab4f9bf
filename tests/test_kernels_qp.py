"""Kernels and QP backends (parametrized over the registry) and their agreement."""

import numpy as np
import pytest
from hypothesis import given, settings

from causefs.blocks.descent.sample_weights import sample_weight_qp
from causefs import CauseFS
from causefs.datasets import make_causal
from causefs.kernels import GramBalance, LinearKernel, RBFKernel, with_balance_form
from causefs.plugins import available, make_kernel, make_qp_backend
from causefs.model.treatments import treatment_coding
from causefs.qp import project_simplex
from causefs.testing import check_kernel, check_qp_backend, states

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)

KERNEL_VARIANTS = [(name, {}) for name in available("kernel")] + [
    ("rbf", {"approximation": "exact"}), ("rbf", {"approximation": "rff", "n_components": 20})]


@pytest.mark.parametrize("name, options", KERNEL_VARIANTS)
def test_kernel_contract(name, options):
    check_kernel(make_kernel(name, **options))


def test_linear_kernel_matches_the_mmd_definition():
    """v'Hv = sum_r || sum_i v_i a_ri x_i[K_r] ||^2, K_r = K[:, r] (eq. 3.2, linear)."""
    rng = np.random.default_rng(1)
    X = rng.random((15, 6))
    coding = treatment_coding(X)
    K = rng.random((6, 6)) < 0.6
    np.fill_diagonal(K, False)
    v = rng.random(15)
    expected = sum(np.sum((X[:, K[:, r]].T @ (v * coding[:, r])) ** 2) for r in range(6))
    assert LinearKernel().balance_operator(X, coding, K).quad(v) == pytest.approx(expected)


def test_rbf_random_features_approximate_the_exact_kernel():
    rng = np.random.default_rng(2)
    X = rng.random((40, 5))
    coding = treatment_coding(X)
    K = ~np.eye(5, dtype=bool)
    v = rng.dirichlet(np.ones(40))
    exact = RBFKernel("exact").balance_operator(X, coding, K).quad(v)
    approx = RBFKernel("rff", n_components=4000).balance_operator(X, coding, K, seed=0).quad(v)
    assert approx == pytest.approx(exact, rel=0.1)


@pytest.mark.parametrize("name", available("qp"))
def test_qp_backend_contract(name):
    check_qp_backend(make_qp_backend(name), max_examples=20)


def test_simplex_projection_matches_cvxpy():
    import cvxpy as cp

    rng = np.random.default_rng(3)
    for total in (1.0, 7.0):
        v = 3 * rng.standard_normal(9)
        x = cp.Variable(9)
        cp.Problem(cp.Minimize(cp.sum_squares(x - v)), [x >= 0, cp.sum(x) == total]).solve()
        assert np.allclose(project_simplex(v, total), x.value, atol=1e-7)


@settings(max_examples=15)
@given(states(beta=1.0))
def test_backends_agree_on_the_mu_problem(state):
    """cvxpy (reference) and the matrix-free backends reach the same objective (1e-6)."""
    qp = sample_weight_qp(state)
    values = {name: make_qp_backend(name).solve(qp, state.mu).value for name in available("qp")}
    x = make_qp_backend("cvxpy").solve(qp, state.mu).x
    # the warm start's magnitude too: at degenerate states the optimum's can vanish
    scale = sum(abs(0.5 * y @ qp.matvec(y)) + abs(qp.linear @ y) for y in (x, state.mu))
    reference = values.pop("cvxpy")
    for name, value in values.items():
        assert abs(value - reference) <= 1e-6 * scale, (name, value, reference)


@pytest.mark.parametrize("density", [0.0, 0.3, 0.95, 1.0])
def test_gram_form_equals_the_products(density):
    """The (n, n) Gram of the linear balance equals its products, dense or sparse masks,
    whether ``dense`` adds the pairs or subtracts the missing ones from all pairs."""
    rng = np.random.default_rng(3)
    X = rng.random((700, 9))  # more rows than one row block of the Gram
    coding = treatment_coding(X)
    K = rng.random((9, 9)) < density
    op = LinearKernel().balance_operator(X, coding, K)
    gram = with_balance_form(op, "gram", 700)
    assert isinstance(gram, GramBalance)
    v = rng.random(700)
    scale = abs(op.quad(v)) + 1e-12
    assert gram.quad(v) == pytest.approx(op.quad(v), rel=1e-10, abs=1e-12 * scale)
    assert np.allclose(gram.matvec(v), op.matvec(v), rtol=1e-10, atol=1e-12 * scale)
    assert np.allclose(gram.diagonal(), op.diagonal(), rtol=1e-10, atol=1e-14)
    assert with_balance_form(op, "products", 700) is op


def test_auto_balance_form_weighs_costs_and_memory():
    rng = np.random.default_rng(0)
    X = rng.random((400, 120))
    coding = treatment_coding(X)
    full = np.ones((120, 120), dtype=bool)  # Gram from all pairs: a few products' cost
    assert isinstance(with_balance_form(LinearKernel().balance_operator(X, coding, full),
                                        "auto", 400), GramBalance)
    half = rng.random((120, 120)) < 0.5  # ~7200 pairs one by one: costlier than 10 products
    op = LinearKernel().balance_operator(X, coding, half)
    assert op.gram_flops() > 10 * op.product_flops()
    assert with_balance_form(op, "auto", 400) is op
    cheap = LinearKernel().balance_operator(X, coding, full)
    assert with_balance_form(cheap, "auto", 20_000) is cheap  # 3.2 GB: over the cap
    with pytest.raises(ValueError, match="balance_form='dense': must be one of 'auto', 'products', 'gram'"):
        with_balance_form(cheap, "dense", 50)


def test_fits_agree_in_both_balance_forms():
    X = make_causal(150, 12, n_clusters=3, n_causal=3, n_spurious=3, seed=0).X
    fits = [CauseFS(n_clusters=3, max_iter=5, random_state=0, balance_form=form).fit(X)
            for form in ("gram", "products")]
    assert np.allclose(fits[0].objective_history_, fits[1].objective_history_, rtol=1e-7)
    assert np.array_equal(fits[0].ranking_, fits[1].ranking_)



@pytest.mark.parametrize("name", ["projected_gradient", "gradient_projection_cg"])
@pytest.mark.parametrize("budget", [3, 5, 12, 30])
def test_a_budget_holds_when_the_step_backtracks(name, budget):
    """P = diag(1, ..., 1.1, ..., 1): the power iteration from the projected gradient's
    fixed start barely sees the eigenvalue 1.1 (its start is nearly orthogonal to
    e_13), so the first steps fail their quadratic bound and are retried. The retries
    count against the budget: the projected gradient once made one product more than it
    declares (18 for 17 at a budget of 3)."""
    from causefs.qp import SimplexQP
    from causefs.testing import CountedBalance

    n = 20
    eigenvalues = np.ones(n)
    eigenvalues[13] = 1.1
    counted = CountedBalance(GramBalance(np.diag(eigenvalues)))
    qp = SimplexQP(diag=np.zeros(n), linear=np.zeros(n), total=1.0, balance=counted,
                   balance_weight=1.0, max_products=budget)
    backend = make_qp_backend(name)
    result = backend.solve(qp, np.full(n, 1.0 / n))
    assert counted.products <= backend.products(budget)
    # the minimizer, x_i proportional to 1 / eigenvalue_i, is approached all the same
    optimum = (1.0 / eigenvalues) / (1.0 / eigenvalues).sum()
    assert qp.value(result.x) <= qp.value(np.full(n, 1.0 / n))
    if budget == 30:
        assert np.abs(result.x - optimum).max() < 1e-3
