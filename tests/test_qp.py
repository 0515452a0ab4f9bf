"""The simplex QP (:mod:`causefs.qp`) and its backends, checked against computations
written here from the QP's definition ``min 1/2 x'Px + q'x, x >= 0, sum(x) = total``:
``P = diag(d) + S + w H`` formed densely, the exact minimum found by solving the KKT
system of every support (the problems are small and strictly convex), the Euclidean
projection onto the simplex by the sort rule (Held, Wolfe and Crowder 1974), and the
products a solve asks of ``H`` counted through the operator
(:class:`~causefs.testing.CountedBalance`) against :meth:`QPBackend.products`."""

import dataclasses
import itertools
import re

import numpy as np
import pytest
import scipy.sparse as sp

from causefs.kernels import GramBalance
from causefs.qp import QPBackend, QPResult, SimplexQP
from causefs.qp.cvxpy_backend import CvxpyBackend
from causefs.qp.gradient_projection_cg import GradientProjectionCGBackend
from causefs.qp.projected_gradient import ProjectedGradientBackend, lipschitz_estimate
from causefs.testing import CountedBalance

BACKENDS = {"projected_gradient": ProjectedGradientBackend,
            "gradient_projection_cg": GradientProjectionCGBackend, "cvxpy": CvxpyBackend}


class Balance(GramBalance):
    """A dense PSD ``H`` whose diagonal may be withheld, with a float32 copy on demand."""

    def __init__(self, H, diagonal=True):
        super().__init__(H)
        self.H, self.has_diagonal = H, diagonal

    def diagonal(self):
        return super().diagonal() if self.has_diagonal else None

    def low_precision(self):
        return Balance(self.H.astype(np.float32), self.has_diagonal)


class Untouchable:
    """A balance operator nothing may ask anything of."""

    def __getattr__(self, name):
        raise AssertionError(f"the balance operator was asked for {name}")


def random_qp(n, seed, total=1.0, weight=None, scale=1.0, rank=None):
    """A strictly convex simplex QP with every part, and its P written densely."""
    rng = np.random.default_rng(seed)
    d = rng.random(n) + 0.1
    A = sp.random(n, n, density=0.4, random_state=seed, format="csr")
    A = A + A.T
    S = sp.diags_array(np.asarray(A.sum(axis=1)).ravel()) - A  # a Laplacian: PSD
    F = rng.standard_normal((n, rank or n))
    H = F @ F.T
    w = rng.uniform(0.1, 2.0) if weight is None else weight
    q = rng.standard_normal(n) * 3
    P = np.diag(d) + S.toarray() + w * H
    qp = SimplexQP(diag=scale * d, linear=scale * q, total=total, sparse=scale * sp.csr_array(S),
                   balance=Balance(scale * H), balance_weight=w)
    return qp, scale * P, scale * q


def exact_minimum(P, q, total):
    """The minimizer over the simplex: the KKT system ``P_SS x_S + q_S = theta,
    sum(x_S) = total`` of each support S; the feasible solution of least value."""
    n = len(q)
    best, best_x = np.inf, None
    for size in range(1, n + 1):
        for support in itertools.combinations(range(n), size):
            idx = list(support)
            kkt = np.zeros((size + 1, size + 1))
            kkt[:size, :size] = P[np.ix_(idx, idx)]
            kkt[:size, size] = -1.0
            kkt[size, :size] = 1.0
            solution = np.linalg.solve(kkt, np.concatenate([-q[idx], [total]]))
            if solution[:size].min() < 0:
                continue
            x = np.zeros(n)
            x[idx] = solution[:size]
            value = 0.5 * x @ P @ x + q @ x
            if value < best:
                best, best_x = value, x
    return best, best_x


def simplex_projection(v, total):
    """The Euclidean projection onto ``{x >= 0, sum(x) = total}``: subtract the theta
    at which the clipped entries sum to ``total`` (found on the sorted entries)."""
    u = np.sort(v)[::-1]
    sums = np.cumsum(u) - total
    rho = np.flatnonzero(u - sums / np.arange(1, len(v) + 1) > 0)[-1]
    return np.maximum(v - sums[rho] / (rho + 1), 0.0)


def value(P, q, x):
    return 0.5 * x @ P @ x + q @ x


# -- the problem ------------------------------------------------------------------------


def test_the_products_and_values_are_those_of_the_matrix_the_parts_stand_for():
    qp, P, q = random_qp(7, seed=0)
    x = np.random.default_rng(1).random(7)
    assert qp.n == 7
    assert np.allclose(qp.matvec(x), P @ x, rtol=1e-12)
    assert qp.value(x) == pytest.approx(value(P, q, x), rel=1e-12)
    assert qp.value(x, P @ x) == pytest.approx(value(P, q, x), rel=1e-12)
    assert np.allclose(qp.diagonal(), np.diag(P), rtol=1e-12)
    assert np.allclose(qp.dense(), P, rtol=1e-12)
    # a known product is used as given (it is not made again)
    Px = np.random.default_rng(2).random(7)
    assert qp.value(x, Px) == pytest.approx(0.5 * x @ Px + q @ x, rel=1e-12)


def test_a_value_asks_for_half_a_product_and_a_known_product_for_none():
    qp, _, _ = random_qp(6, seed=3)
    qp.balance = counted = CountedBalance(qp.balance)
    x = np.full(6, 1 / 6)
    qp.value(x)
    assert counted.products == 0.5
    qp.value(x, qp.matvec(x))
    assert counted.products == 1.5  # the matvec's product only


@pytest.mark.parametrize("sparse", [True, False])
def test_a_balance_of_weight_zero_is_never_asked_for_anything(sparse):
    qp, P, q = random_qp(6, seed=4, weight=0.0)
    if not sparse:
        P = P - qp.sparse.toarray()
        qp.sparse = None
    qp.balance = Untouchable()
    x = np.random.default_rng(5).random(6)
    assert np.allclose(qp.matvec(x), P @ x, rtol=1e-12)
    assert qp.value(x) == pytest.approx(value(P, q, x), rel=1e-12)
    assert np.allclose(qp.diagonal(), np.diag(P), rtol=1e-12)
    assert np.allclose(qp.dense(), P, rtol=1e-12)


def test_the_diagonal_leaves_out_a_balance_that_does_not_give_its_own():
    qp, P, _ = random_qp(6, seed=6)
    qp.balance = Balance(qp.balance.H, diagonal=False)
    assert np.allclose(qp.diagonal(), qp.diag + qp.sparse.diagonal(), rtol=1e-12)
    assert not np.allclose(qp.diagonal(), np.diag(P))  # the balance's part is not 0
    assert np.array_equal(qp.diag, random_qp(6, seed=6)[0].diag)  # not changed in place


def test_the_dense_matrix_is_the_symmetric_matrix_of_the_quadratic_form():
    """A part given unsymmetric (a directed graph's sparse matrix) stands for its
    symmetric part in ``x'Px``; ``dense`` is that symmetric matrix."""
    rng = np.random.default_rng(7)
    A = rng.random((5, 5))
    H = rng.standard_normal((5, 5))
    qp = SimplexQP(diag=rng.random(5), linear=rng.random(5), total=1.0,
                   sparse=sp.csr_array(A), balance=Balance(H @ H.T), balance_weight=0.5)
    expected = np.diag(qp.diag) + 0.5 * (A + A.T) + 0.5 * H @ H.T
    assert np.allclose(qp.dense(), expected, rtol=1e-12)
    x = rng.random(5)
    assert qp.value(x) == pytest.approx(0.5 * x @ expected @ x + qp.linear @ x, rel=1e-12)


def test_the_approximate_problem_takes_the_balance_low_precision_copy():
    qp, _, _ = random_qp(5, seed=8)
    approximate = qp.approximate()
    assert approximate.balance.H.dtype == np.float32 and qp.balance.H.dtype == np.float64
    assert np.array_equal(approximate.balance.H, qp.balance.H.astype(np.float32))
    for name in ("diag", "linear", "total", "sparse", "balance_weight", "max_products"):
        assert getattr(approximate, name) is getattr(qp, name)
    plain = SimplexQP(diag=np.ones(3), linear=np.zeros(3), total=1.0)
    assert plain.approximate() is plain


@pytest.mark.parametrize("total", [1.0, 5.0])
def test_the_frank_wolfe_gap_is_the_largest_decrease_of_the_linearization(total):
    """``g'x - total min(g)`` is ``max over vertices v of g'(x - v)`` (the vertices
    ``total e_i``), and bounds ``f(x) - f*`` (convexity)."""
    qp, P, q = random_qp(6, seed=9, total=total)
    optimum, _ = exact_minimum(P, q, total)
    rng = np.random.default_rng(10)
    for _ in range(5):
        x = rng.dirichlet(np.ones(6)) * total
        g = P @ x + q
        gap = qp.frank_wolfe_gap(x, g)
        assert gap == pytest.approx(max(g @ (x - total * e) for e in np.eye(6)), rel=1e-12)
        assert gap >= value(P, q, x) - optimum


# -- the interface: the safeguard ----------------------------------------------------------


def test_the_safeguard_projects_onto_the_simplex_and_keeps_a_better_point():
    qp, P, q = random_qp(6, seed=11, total=2.0)
    _, minimizer = exact_minimum(P, q, 2.0)
    x0 = np.full(6, 2.0 / 6)
    near = minimizer + np.random.default_rng(12).normal(scale=1e-3, size=6)  # off the simplex
    result = QPBackend.safeguard(qp, near, x0, 7, True, gap=0.5, lipschitz=3.0)
    assert isinstance(result, QPResult)
    assert np.allclose(result.x, simplex_projection(near, 2.0), rtol=0, atol=1e-14)
    assert result.value == pytest.approx(value(P, q, result.x), rel=1e-12)
    assert (result.n_iter, result.converged, result.info) == (7, True, {"gap": 0.5,
                                                                        "lipschitz": 3.0})


def test_the_safeguard_falls_back_to_the_warm_start_when_not_better():
    qp, P, q = random_qp(6, seed=13)
    _, minimizer = exact_minimum(P, q, 1.0)
    worst = max(np.eye(6), key=lambda v: value(P, q, v))
    for bad in (worst, np.full(6, np.nan)):
        result = QPBackend.safeguard(qp, bad, minimizer, 3, False)
        assert np.array_equal(result.x, minimizer)
        assert result.value == pytest.approx(value(P, q, minimizer), rel=1e-12)
        assert (result.n_iter, result.converged, result.info) == (3, False, {})


def test_a_backend_that_forms_p_declares_the_safeguards_two_values():
    """The default declaration (one product: two quadratic forms) is what the cvxpy
    backend, which forms ``P``, asks of the operator."""
    qp, _, _ = random_qp(6, seed=14)
    qp.balance = counted = CountedBalance(qp.balance)
    backend = CvxpyBackend()
    backend.solve(qp, np.full(6, 1 / 6))
    assert counted.products == backend.products(None) == backend.products(3) == 1.0


# -- the backends reach the exact minimum --------------------------------------------------


@pytest.mark.parametrize("name", sorted(BACKENDS))
@pytest.mark.parametrize("seed, n, total", [(0, 2, 1.0), (1, 5, 1.0), (2, 7, 7.0),
                                            (3, 8, 0.01), (4, 6, 1.0)])
def test_each_backend_reaches_the_exact_minimum(name, seed, n, total):
    qp, P, q = random_qp(n, seed, total=total, rank=2 if seed == 4 else None)
    optimum, minimizer = exact_minimum(P, q, total)
    x0 = np.random.default_rng(seed).dirichlet(np.ones(n)) * total
    result = BACKENDS[name]().solve(qp, x0)
    scale = abs(0.5 * minimizer @ P @ minimizer) + abs(q @ minimizer)
    assert result.value - optimum <= 1e-8 * scale
    assert np.allclose(result.x, minimizer, rtol=0, atol=1e-4 * total)
    assert result.converged


def ill_conditioned_qp(n, seed=15, scale=1.0):
    """Eigenvalues from 1e-4 to 1 (a random basis), times ``scale``; a minimizer inside
    the simplex."""
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    H = scale * (Q @ np.diag(np.geomspace(1e-4, 1.0, n)) @ Q.T)
    minimizer = rng.dirichlet(np.full(n, 5.0))
    q = -H @ minimizer + 0.1 * scale  # the gradient at the minimizer: equal weights
    qp = SimplexQP(diag=np.zeros(n), linear=q, total=1.0, balance=Balance(H),
                   balance_weight=1.0)
    return qp, H, q, minimizer


@pytest.mark.parametrize("name", ["projected_gradient", "gradient_projection_cg"])
@pytest.mark.parametrize("scale", [1.0, 1e-8, 1e8])
def test_an_ill_conditioned_problem_is_solved_within_the_default_iterations(name, scale):
    """Eigenvalues from 1e-4 to 1 with an interior minimizer: FISTA's accelerated rate
    (about sqrt(1e4) iterations per digit) and GPCG's CG on the face (a few products per
    eigenvalue it resolves) reach the minimum where a plain gradient method (about 1e4
    iterations per digit) would not. Several outer iterations, at any scale: the
    stopping tests are relative to the objective's."""
    qp, H, q, minimizer = ill_conditioned_qp(8, scale=scale)
    result = BACKENDS[name]().solve(qp, np.full(8, 1.0 / 8))
    optimum = value(H, q, minimizer)
    assert result.converged
    assert result.value - optimum <= 1e-9 * (abs(0.5 * minimizer @ H @ minimizer)
                                             + abs(q @ minimizer))
    assert np.allclose(result.x, minimizer, rtol=0, atol=1e-3)


# -- what a solve declares ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["projected_gradient", "gradient_projection_cg"])
@pytest.mark.parametrize("max_iter, budget", [(None, 1), (None, 2), (None, 5), (None, 12),
                                              (7, None), (4, 10)])
def test_a_solve_that_spends_its_budget_makes_exactly_the_products_it_declares(
        name, max_iter, budget):
    """``products(budget)`` is what a solve asks of the operator when it runs to its
    budget, ``min(max_iter, max_products)``: the projected gradient's starting product
    and 12-product power iteration, then its iterations; GPCG's products; and the
    safeguard's two values (one product)."""
    qp = ill_conditioned_qp(12, seed=16)[0]
    qp.balance = counted = CountedBalance(qp.balance)
    qp.max_products = budget
    backend = BACKENDS[name](**({} if max_iter is None else {"max_iter": max_iter}))
    result = backend.solve(qp, np.full(12, 1 / 12))
    assert not result.converged
    spent = min(budget or np.inf, max_iter or np.inf)
    own = 1 + 12 if name == "projected_gradient" else 0
    assert counted.products == backend.products(budget) == own + spent + 1


@pytest.mark.parametrize("name", ["projected_gradient", "gradient_projection_cg"])
def test_a_converged_solve_reports_its_frank_wolfe_gap(name):
    qp, P, q = random_qp(7, seed=17, total=3.0)
    result = BACKENDS[name]().solve(qp, np.full(7, 3.0 / 7))
    x = result.x
    g = P @ x + q
    scale = abs(0.5 * x @ P @ x) + abs(q @ x)
    assert result.converged
    assert abs(result.info["gap"] - (g @ x - 3.0 * g.min())) <= 1e-12 * scale
    assert result.info["gap"] <= 1e-9 * scale * (1 + 1e-6)


def test_the_lipschitz_estimate_is_a_lower_bound_the_power_iteration_tightens():
    n = 9
    rng = np.random.default_rng(18)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    eigenvalues = np.concatenate([[10.0], np.linspace(0.1, 1.0, n - 1)])
    H = Q @ np.diag(eigenvalues) @ Q.T
    qp = SimplexQP(diag=np.zeros(n), linear=np.zeros(n), total=1.0, balance=Balance(H),
                   balance_weight=1.0)
    estimates = [lipschitz_estimate(qp, n_iter) for n_iter in range(1, 13)]
    # Rayleigh quotients of the power iterates: below lambda_max, never falling
    assert all(estimate <= 10.0 * (1 + 1e-12) for estimate in estimates)
    assert all(a <= b * (1 + 1e-12) for a, b in zip(estimates, estimates[1:]))
    assert estimates[0] < 5.0 and estimates[-1] >= 10.0 * (1 - 1e-12)  # error ~ 0.1 ** 22
    assert lipschitz_estimate(qp) == estimates[-1]  # 12 products by default
    zero = SimplexQP(diag=np.zeros(n), linear=np.zeros(n), total=1.0)
    assert 0 < lipschitz_estimate(zero) <= 1e-250  # a positive step size 1/L exists


# -- the cvxpy backend ----------------------------------------------------------------------


def test_the_listed_solvers_are_the_installed_ones_that_solve_the_qp():
    """``qp_solvers``: every installed cvxpy solver that solves a simplex QP (tried here
    on one), and no other (an LP solver such as SCIPY fails at every solve)."""
    import cvxpy as cp
    from causefs.qp.cvxpy_backend import qp_solvers
    from cvxpy.reductions.solvers.defines import INSTALLED_SOLVERS

    _, P, q = random_qp(5, seed=19)
    takes = []
    for solver in INSTALLED_SOLVERS:
        x = cp.Variable(5)
        problem = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(P)) + q @ x),
                             [x >= 0, cp.sum(x) == 1])
        try:
            problem.solve(solver=solver)
        except cp.error.SolverError:
            continue
        takes.append(solver)
    assert qp_solvers() == sorted(takes)
    assert "CLARABEL" in takes


@pytest.mark.parametrize("name", sorted(BACKENDS))
@pytest.mark.parametrize("scale, total", [(1e-8, 1.0), (1e8, 1.0), (1.0, 1e-6), (1.0, 1e6),
                                          (1e-3, 1e3)])
def test_each_backend_is_exact_at_every_scale(name, scale, total):
    """The tolerances are relative to the objective's scale (cvxpy: the variable is
    rescaled to mean one and the objective by its size at the uniform point)."""
    qp, P, q = random_qp(6, seed=20, total=total, scale=scale)
    optimum, minimizer = exact_minimum(P, q, total)
    result = BACKENDS[name]().solve(qp, np.full(6, total / 6))
    magnitude = abs(0.5 * minimizer @ P @ minimizer) + abs(q @ minimizer)
    assert result.converged
    assert result.value - optimum <= 1e-8 * magnitude
    assert np.allclose(result.x, minimizer, rtol=0, atol=1e-5 * total)
    if name == "cvxpy":
        assert result.info == {"status": "optimal", "solver": "CLARABEL"}
        assert result.n_iter >= 1


@pytest.mark.parametrize("name", ["projected_gradient", "gradient_projection_cg"])
def test_a_zero_problem_is_certified_at_the_first_gap_even_at_rtol_zero(name):
    """P = 0, q = 0: every point is a minimizer and the Frank-Wolfe gap is exactly 0,
    a certificate even for ``rtol=0`` (the objective's scale is 0 too, so the threshold
    ``rtol * scale`` is 0 or tiny, never negative)."""
    qp = SimplexQP(diag=np.zeros(4), linear=np.zeros(4), total=2.0)
    x0 = np.array([0.5, 1.5, 0.0, 0.0])
    for rtol in (0.0, 1e-9):
        result = BACKENDS[name](rtol=rtol).solve(qp, x0)
        assert (result.n_iter, result.converged, result.info["gap"]) == (1, True, 0.0)
        assert np.allclose(result.x, x0, rtol=0, atol=1e-15)


def test_a_problem_constant_on_the_simplex_is_solved():
    """P = 0, q = 0 (every point a minimizer): the objective is not divided by its zero
    size at the uniform point."""
    qp = SimplexQP(diag=np.zeros(4), linear=np.zeros(4), total=2.0)
    result = CvxpyBackend().solve(qp, np.array([2.0, 0, 0, 0]))
    assert result.converged and result.value == 0.0
    assert np.all(result.x >= 0) and result.x.sum() == pytest.approx(2.0)


class _Spy:
    """Records the keyword arguments of ``cvxpy.Problem.solve`` and, after it solved, the
    problem's status and statistics."""

    def __init__(self, monkeypatch):
        import cvxpy as cp

        self.calls, self.solved, solve = [], [], cp.Problem.solve

        def spy(problem, **options):
            self.calls.append(options)
            result = solve(problem, **options)
            stats = problem.solver_stats
            self.solved.append((problem.status, stats.solver_name, stats.num_iters))
            return result

        monkeypatch.setattr(cp.Problem, "solve", spy)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")  # one iteration's
def test_clarabel_gets_the_documented_tolerances_and_given_options_replace_them(monkeypatch):
    """The docstring: Clarabel's gap tolerances tightened (absolute 1e-12, relative
    1e-10) by default; options given are passed as given; another solver gets none."""
    qp, _, _ = random_qp(5, seed=21)
    x0 = np.full(5, 0.2)
    spy = _Spy(monkeypatch)
    CvxpyBackend().solve(qp, x0)
    assert spy.calls == [{"solver": "CLARABEL", "tol_gap_abs": 1e-12, "tol_gap_rel": 1e-10}]
    spy.calls.clear()
    limited = CvxpyBackend(solver_options={"max_iter": 1}).solve(qp, x0)
    assert spy.calls == [{"solver": "CLARABEL", "max_iter": 1}]
    assert not limited.converged and limited.info["status"] != "optimal"
    spy.calls.clear()
    CvxpyBackend(solver="SCS").solve(qp, x0)
    assert spy.calls == [{"solver": "SCS"}]


@pytest.mark.parametrize("solver, linear", [("CLARABEL", False), ("HIGHS", True)])
def test_the_result_reports_the_solvers_status_and_iterations(monkeypatch, solver, linear):
    """``n_iter`` is the solver's own count (HiGHS reports none for a linear objective)."""
    from causefs.qp.cvxpy_backend import qp_solvers

    if solver not in qp_solvers():
        pytest.skip(f"{solver} is not installed")
    qp = random_qp(5, seed=24)[0]
    if linear:
        qp = SimplexQP(diag=np.zeros(5), linear=qp.linear, total=1.0)
    spy = _Spy(monkeypatch)
    result = CvxpyBackend(solver=solver).solve(qp, np.full(5, 0.2))
    [(status, name, iterations)] = spy.solved
    assert (result.n_iter, result.info) == (iterations or 0, {"status": status, "solver": name})
    assert result.converged == (status == "optimal") and name == solver
    if linear:
        assert iterations == 0


def _handed_to_cvxpy(monkeypatch, qp):
    """The cvxpy problem the backend builds for ``qp`` (solved), and its variable."""
    import cvxpy as cp

    problems, solve = [], cp.Problem.solve

    def spy(problem, **options):
        problems.append(problem)
        return solve(problem, **options)

    monkeypatch.setattr(cp.Problem, "solve", spy)
    CvxpyBackend().solve(qp, np.full(qp.n, qp.total / qp.n))
    [problem] = problems
    [y] = problem.variables()
    return problem, y


@pytest.mark.parametrize("total", [1.0, 12.5])
def test_cvxpy_is_handed_the_objective_divided_by_its_size_at_the_uniform_point(
        monkeypatch, total):
    """The docstring: in the mean-one variable ``y = x n / total`` the objective is
    divided by its size at ``y = 1``, ``|1/2 1'P1| + |q'1|`` (P, q of y): with P PSD
    and q >= 0 the objective handed over is then exactly 1 at ``y = 1``, and at any y
    it is ``f(total y / n)`` divided by that size (computed here from P and q)."""
    qp, P, q = random_qp(5, seed=23, total=total)
    q = np.abs(q)
    qp = dataclasses.replace(qp, linear=q)
    problem, y = _handed_to_cvxpy(monkeypatch, qp)
    unit = total / 5
    size = 0.5 * unit**2 * P.sum() + unit * q.sum()
    y.value = np.ones(5)
    assert problem.objective.value == pytest.approx(1.0, rel=1e-12, abs=0)
    point = np.array([3.0, 0.5, 0.0, 1.0, 0.5])
    y.value = point
    assert problem.objective.value == pytest.approx(value(P, q, unit * point) / size,
                                                    rel=1e-12, abs=0)


def test_an_objective_of_size_zero_at_the_uniform_point_is_handed_over_undivided(
        monkeypatch):
    """``P = 0`` and ``q'1 = 0``: the size at the uniform point is 0, and the objective
    is divided by 1 instead: at ``y = (4, 0, 0, 0)`` (x = (2, 0, 0, 0)) it is f there,
    ``q'x = 2``."""
    qp = SimplexQP(diag=np.zeros(4), linear=np.array([1.0, -1.0, 0.0, 0.0]), total=2.0)
    problem, y = _handed_to_cvxpy(monkeypatch, qp)
    y.value = np.array([4.0, 0.0, 0.0, 0.0])
    assert problem.objective.value == pytest.approx(2.0, rel=1e-12, abs=0)


def test_a_failed_solve_returns_the_warm_start_and_says_why(monkeypatch):
    import cvxpy as cp

    qp, P, q = random_qp(5, seed=22)
    x0 = np.array([0.5, 0.5, 0, 0, 0])

    def fails(problem, **options):
        raise cp.error.SolverError("no luck")

    monkeypatch.setattr(cp.Problem, "solve", fails)
    result = CvxpyBackend().solve(qp, x0)
    assert np.array_equal(result.x, x0) and result.value == pytest.approx(value(P, q, x0))
    assert (result.n_iter, result.converged) == (0, False)
    assert result.info == {"status": "solver error: no luck"}
    def infeasible(problem, **options):  # a status and no value
        problem._status = cp.INFEASIBLE

    monkeypatch.setattr(cp.Problem, "solve", infeasible)
    result = CvxpyBackend().solve(qp, x0)
    assert np.array_equal(result.x, x0) and (result.n_iter, result.converged) == (0, False)
    assert result.info == {"status": "infeasible"}


def test_without_cvxpy_the_backend_names_the_extra(monkeypatch):
    """docs/ERRORS.md's line, when cvxpy cannot be imported at the solve or when the
    backend is made."""
    import sys

    from causefs.core.extras import MissingDependencyError

    backend = CvxpyBackend()
    monkeypatch.setitem(sys.modules, "cvxpy", None)  # import fails as when not installed
    message = "^" + re.escape("qp='cvxpy' needs 'cvxpy', which is not installed; the "
                              "'cvxpy' extra installs it: pip install \"causefs[cvxpy]\"") + "$"
    with pytest.raises(MissingDependencyError, match=message):
        backend.solve(random_qp(3, seed=0)[0], np.full(3, 1 / 3))
    with pytest.raises(MissingDependencyError, match=message):
        CvxpyBackend()  # the installed solvers are looked up when it is made


def test_the_projected_gradient_stops_after_stall_iter_iterations_without_progress():
    """``P = c 11'`` is constant on the simplex, so the steps ``1/L`` with ``L = c n``
    barely move: no iteration improves the objective by ``rtol`` times its scale (about
    ``c / 2``), while the Frank-Wolfe gap stays near ``max(q) - min(q)``. The solve stops,
    converged, after ``stall_iter`` iterations. Every step meets its quadratic bound up
    to the rounding of the terms of size c that cancel: L is never doubled."""
    n, c = 4, 2.5e11
    q = np.random.default_rng(23).standard_normal(n)
    qp = SimplexQP(diag=np.zeros(n), linear=q, total=1.0,
                   balance=Balance(np.full((n, n), c)), balance_weight=1.0)
    for stall_iter in (1, 2, 5, 50):
        result = ProjectedGradientBackend(rtol=1e-15, stall_iter=stall_iter).solve(
            qp, np.full(n, 1 / n))
        assert (result.n_iter, result.converged) == (stall_iter, True)
        assert result.info["gap"] > 0.1
        assert result.info["lipschitz"] <= 1.1 * c * n


@pytest.mark.parametrize("name", ["projected_gradient", "gradient_projection_cg"])
def test_the_iterative_options_are_checked_by_name(name):
    from causefs.core.validation import InvalidParameterError

    cases = [({"rtol": -1}, "rtol=-1: must be a real number >= 0"),
             ({"rtol": "x"}, "rtol='x': must be a real number >= 0"),
             ({"max_iter": 0}, "max_iter=0: must be an integer >= 1"),
             ({"max_iter": 2.5}, "max_iter=2.5: must be an integer >= 1")]
    if name == "projected_gradient":
        cases.append(({"stall_iter": 0}, "stall_iter=0: must be an integer >= 1"))
    else:
        cases += [({"projection_steps": 0}, "projection_steps=0: must be an integer >= 1"),
                  ({"cg_rtol": 1.0}, "cg_rtol=1.0: must be a real number >= 0 and < 1"),
                  ({"cg_rtol": -0.1}, "cg_rtol=-0.1: must be a real number >= 0 and < 1"),
                  ({"cg_rtol": "x"}, "cg_rtol='x': must be a real number >= 0 and < 1")]
        bounds = BACKENDS[name](projection_steps=1, cg_rtol=0)
        assert (bounds.projection_steps, bounds.cg_rtol) == (1, 0.0)
    for options, message in cases:
        with pytest.raises(InvalidParameterError, match="^" + re.escape(message) + "$"):
            BACKENDS[name](**options)
    backend = BACKENDS[name](rtol=0, max_iter=1)
    assert (backend.rtol, backend.max_iter) == (0.0, 1) and type(backend.rtol) is float


@pytest.mark.parametrize("scale", [1.0, 1e-10])
def test_a_budget_spent_before_a_step_is_accepted_leaves_the_warm_start(scale):
    """``P = diag(1, ..., 1.1, ..., 1)``: the power iteration underestimates the largest
    eigenvalue, so the first step fails its quadratic bound and L is doubled; with one
    product to spend the solve ends there, unconverged, with no certificate (``gap`` infinite)."""
    n = 20
    eigenvalues = np.ones(n)
    eigenvalues[13] = 1.1
    qp = SimplexQP(diag=np.zeros(n), linear=np.zeros(n), total=1.0,
                   balance=Balance(scale * np.diag(eigenvalues)), balance_weight=1.0,
                   max_products=1)
    x0 = np.full(n, 1 / n)
    result = ProjectedGradientBackend().solve(qp, x0)
    assert (result.n_iter, result.converged, result.info["gap"]) == (1, False, np.inf)
    assert np.allclose(result.x, x0, rtol=1e-15, atol=0)
    # L: the power iteration's estimate (with a margin of at most 10 %), doubled once
    assert 2 <= result.info["lipschitz"] / lipschitz_estimate(qp) <= 2 * 1.1


def test_the_cvxpy_options_are_checked_by_name():
    from causefs.core.validation import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="^" + re.escape(
            "solver_options=5: must be None or a mapping of solver options") + "$"):
        CvxpyBackend(solver_options=5)
    with pytest.raises(InvalidParameterError, match="^" + re.escape("solver='SCIPY': must be "
                                                                     "one of")):
        CvxpyBackend(solver="SCIPY")  # an LP solver
    assert CvxpyBackend(solver_options={"max_iter": 3}).solver_options == {"max_iter": 3}


def fista(P, q, total, x0, L, steps):
    """FISTA (Beck and Teboulle 2009) on the simplex, step ``1/L``, with the restarts of
    O'Donoghue and Candes (2015): the momentum is reset when it points uphill,
    ``(y - x_new)'(x_new - x) > 0``, or when the objective rose."""
    x = simplex_projection(x0, total)
    y, t, f = x, 1.0, value(P, q, x)
    for _ in range(steps):
        x_new = simplex_projection(y - (P @ y + q) / L, total)
        f_new = value(P, q, x_new)
        if (y - x_new) @ (x_new - x) > 0 or f_new > f:
            t = 1.0
        t_next = (1.0 + np.sqrt(1.0 + 4.0 * t * t)) / 2.0
        y = x_new + (t - 1.0) / t_next * (x_new - x)
        x, f, t = x_new, f_new, t_next
    return x


@pytest.mark.parametrize("budget", [1, 2, 3, 10, 16, 24, 40])
def test_the_projected_gradient_iterates_are_fista_with_restarts(budget):
    """Given ``budget`` products, the solve makes ``budget`` FISTA steps from the warm
    start (total 3, so that the warm start's projection matters) with the step size it
    reports; a problem whose largest eigenvalue the power iteration finds, so that no
    step fails its quadratic bound."""
    rng = np.random.default_rng(57)  # restarts, each for one reason alone: steps 15 and 22
    Q = np.linalg.qr(rng.standard_normal((8, 8)))[0]
    P = Q @ np.diag(np.concatenate([[10.0], np.geomspace(0.01, 2.0, 7)])) @ Q.T
    q = 3 * rng.standard_normal(8)
    qp = SimplexQP(diag=np.zeros(8), linear=q, total=3.0, balance=Balance(P),
                   balance_weight=1.0)
    x0 = rng.dirichlet(np.ones(8) * 0.3) * 3.0
    qp.max_products = budget
    result = ProjectedGradientBackend().solve(qp, x0)
    L = result.info["lipschitz"]
    assert 10.0 <= L <= 11.0  # the largest eigenvalue, with a margin: never doubled
    expected = fista(P, q, 3.0, x0, L, budget)
    if value(P, q, expected) > value(P, q, x0):
        expected = x0  # the safeguard
    assert np.allclose(result.x, expected, rtol=0, atol=1e-9)
    assert (result.n_iter, result.converged) == (budget, False)


@pytest.mark.parametrize("seed, total, scale", [(28, 1.0, 1.0), (29, 3.0, 0.1)])
def test_gpcg_takes_the_newton_step_of_a_diagonal_problem_in_four_products(seed, total,
                                                                           scale):
    """``P = diag(d)`` with its minimizer inside the simplex: from the uniform point one
    projected-gradient step (no weight reaches 0, so the zeros have settled; the step
    ``1 / max(d)`` meets the sufficient decrease at once), one CG product (Jacobi-
    preconditioned CG is exact in one step for a diagonal P: the step is the Newton
    step on the face), the step inside the simplex without a product, and the products
    at x before and after: 4, the last certifying the exact minimizer."""
    n = 6
    rng = np.random.default_rng(seed)
    d = rng.uniform(0.5, 2.0, n) * scale
    minimizer = rng.dirichlet(np.full(n, 5.0)) * total
    q = -d * minimizer + 0.3 * scale  # the gradient at the minimizer: equal weights
    counted = CountedBalance(Balance(np.diag(d)))
    qp = SimplexQP(diag=np.zeros(n), linear=q, total=total, balance=counted,
                   balance_weight=1.0)
    result = GradientProjectionCGBackend().solve(qp, np.full(n, total / n))
    assert (result.n_iter, result.converged) == (4, True)
    assert counted.products == 4 + 1  # and the safeguard's two values
    assert np.allclose(result.x, minimizer, rtol=0, atol=1e-12 * total)


@pytest.mark.parametrize("name", ["cvxpy", "gradient_projection_cg", "projected_gradient"])
def test_a_linear_objective_is_minimized_at_the_vertex_of_least_q(name):
    """P = 0: the minimum over the simplex is ``total * min(q)``, at ``total e_i`` for the
    least ``q_i``."""
    q = np.array([0.3, -0.2, 0.5, -0.7, 0.4])
    qp = SimplexQP(diag=np.zeros(5), linear=q, total=2.0)
    result = BACKENDS[name]().solve(qp, np.full(5, 0.4))
    assert result.converged and result.value == pytest.approx(-1.4, rel=1e-8)
    assert np.allclose(result.x, [0, 0, 0, 2.0, 0], rtol=0, atol=1e-8)


@pytest.mark.parametrize("name", ["gradient_projection_cg", "projected_gradient"])
@pytest.mark.parametrize("curvature", [0.0, 1e-200])
def test_a_nearly_linear_objective_is_minimized_at_the_vertex_of_least_q(name, curvature):
    """Curvature far below the linear part's scale: the minimizer is still (to the
    curvature's effect, 1e-200) the vertex of least q, on the sum-to-n scale of
    ``sample_weights='mean_one'``."""
    q = np.random.default_rng(5).standard_normal(50)
    qp = SimplexQP(diag=np.full(50, curvature), linear=q, total=50.0)
    result = BACKENDS[name]().solve(qp, np.ones(50))
    expected = np.zeros(50)
    expected[np.argmin(q)] = 50.0
    assert result.converged and np.allclose(result.x, expected, rtol=0, atol=1e-6)
    assert result.value == pytest.approx(50.0 * q.min(), rel=1e-10)


def test_the_step_ceiling_is_a_span_of_the_total_over_the_largest_gradient():
    from causefs.qp.base import STEP_SPAN, step_ceiling

    assert step_ceiling(np.array([0.5, -2.0, 1.0]), 3.0) == STEP_SPAN * 3.0 / 2.0
    assert step_ceiling(np.array([-0.25]), 1.0) == STEP_SPAN * 4.0
    assert step_ceiling(np.zeros(3), 5.0) == np.inf  # no gradient: no ceiling
