"""The work of the matrix-free QP backends, counted in products with ``P`` (never timed),
and their behaviour at exact ties and degenerate inputs.

The problems are built here, seeded, with their minimizer known by construction
(``q = -P m + multipliers``: the KKT conditions hold at ``m``), so every result is checked
against a computation independent of the backend. Products are counted through the
balance operator (:class:`~causefs.testing.CountedBalance`); every count below includes
the safeguard's two values (one product).
"""

import numpy as np
import pytest

from causefs.kernels import GramBalance
from causefs.qp import QPBackend, SimplexQP
from causefs.qp.cvxpy_backend import CvxpyBackend
from causefs.qp.gradient_projection_cg import GradientProjectionCGBackend, _Solve
from causefs.qp.base import STEP_SPAN
from causefs.qp.projected_gradient import ProjectedGradientBackend, lipschitz_estimate
from causefs.testing import CountedBalance
from test_qp import fista, value

BACKENDS = {"projected_gradient": ProjectedGradientBackend,
            "gradient_projection_cg": GradientProjectionCGBackend, "cvxpy": CvxpyBackend}


def counted_qp(P, q, total=1.0, **options):
    """``P`` given as the (counted) balance operator, nothing else in the problem."""
    counted = CountedBalance(GramBalance(P))
    qp = SimplexQP(diag=np.zeros(len(q)), linear=q, total=total, balance=counted,
                   balance_weight=1.0, **options)
    return qp, counted



def near_diagonal(n, rng, spread=2.0):
    """``diag(d) + E``, ``d`` in [1, spread], ``||E|| = 0.3 min(d)``: positive definite,
    and ``lambda_max(P) <= max(d) + 0.3 min(d) < 2 (1 - 1e-4) (max(d) - 0.3 min(d))
    <= 2 (1 - 1e-4) max(diag P)``, so the first projected-gradient trial step
    ``1 / max(diag P)`` meets the sufficient decrease at once when no weight reaches 0
    on it (a step shorter than ``2 (1 - 1e-4) / lambda_max``)."""
    d = rng.uniform(1.0, spread, n)
    A = rng.standard_normal((n, n))
    E = A + A.T
    E *= 0.3 * d.min() / np.abs(np.linalg.eigvalsh(E)).max()
    return np.diag(d) + E


# -- GPCG is a projected Newton method: CG's finite termination, counted -------------------


@pytest.mark.parametrize("n", [2, 3, 5, 8, 20, 40])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("total, scale", [(1.0, 1.0), (1e4, 1.0), (1.0, 1e-3)])
def test_gpcg_solves_a_definite_problem_with_an_interior_minimizer_in_n_plus_2_products(
        n, seed, total, scale):
    """``P`` positive definite, the minimizer ``m`` inside the simplex with the gradient
    0 there (``q = -P m``), exact CG (``cg_rtol=0``). From the uniform point: the product
    at x (1), one projected-gradient step that meets the sufficient decrease at once and
    zeroes no weight, so the zeros have settled (1), CG on the face of all n weights,
    whose dimension with the sum kept is n - 1, so at most n - 1 products (CG's finite
    termination), the CG step inside the simplex with its product known (0), the product
    at the new x that certifies it (1): at most n + 2, and the safeguard's one. A solver
    that spends more is a regression (more CG iterations than the face's dimension, no CG
    on a face of two weights, a first trial step that fails). The count does not depend
    on the total (``sample_weights='mean_one'`` solves on the simplex of total n): the
    CG step's sum, kept in exact arithmetic, is off by rounding only, relative to the
    step (about 1e-16 of it), at every total; nor on P's scale (the first trial step is
    ``1 / max(diag P)``, 1000 for diagonals of about 1e-3)."""
    rng = np.random.default_rng(seed)
    P = scale * near_diagonal(n, rng)
    m = rng.dirichlet(np.full(n, 20.0)) * total
    qp, counted = counted_qp(P, -P @ m, total=total)
    result = GradientProjectionCGBackend(cg_rtol=0.0).solve(qp, np.full(n, total / n))
    assert result.converged
    assert counted.products <= n + 2 + 1
    assert np.allclose(result.x, m, rtol=0, atol=1e-9 * total)


@pytest.mark.parametrize("n", [5, 20, 40, 100])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("total, scale", [(1.0, 1.0), (1e4, 1.0), (1.0, 1e-3)])
@pytest.mark.parametrize("multiplier", [0.1, 10.0, -3.0])
def test_gpcg_with_a_multiplier_reaches_an_interior_minimizer_in_one_cg_phase(
        n, seed, total, scale, multiplier):
    """As above with the sum constraint's multiplier ``c`` non-zero (the gradient at the
    minimizer ``c 1``, ``q = -P m + c 1``, as the balance terms' gradients are): exact
    CG still ends on the face's minimizer within its dimension, so the products stay
    at n + 2 and the safeguard's one, and at most one more where the CG step's sum is
    off by more than 1e-12 of it (rounding of the multiplier's size) and the projected
    search computes its product. Without Gould, Hribar and Nocedal's residual update
    (the multiplier removed from the residual) the multiplier's rounding swamped r'z
    once the face's residual was small: CG went on along noise, up to n + 826 products
    on these problems, and stopped up to 2e-5 from the minimizer."""
    rng = np.random.default_rng(seed)
    P = scale * near_diagonal(n, rng)
    m = rng.dirichlet(np.full(n, 20.0)) * total
    qp, counted = counted_qp(P, -P @ m + multiplier * scale, total=total)
    result = GradientProjectionCGBackend(cg_rtol=0.0).solve(qp, np.full(n, total / n))
    assert result.converged
    assert counted.products <= n + 3 + 1
    assert np.allclose(result.x, m, rtol=0, atol=1e-9 * total)


def face_problem(n, k, seed, spread=2.0):
    """``P`` as above, the minimizer ``m`` on the face of the first k weights with the
    gradient 0 there and multipliers in [0.5, 1] on the other weights (``q = -P m + mu``),
    and a warm start on that face whose weights are multiples of 1/64 summing to exactly
    1 (its projection changes nothing: its zeros stay exactly 0)."""
    rng = np.random.default_rng(seed)
    P = near_diagonal(n, rng, spread)
    m = np.zeros(n)
    m[:k] = rng.dirichlet(np.full(k, 20.0))
    multipliers = np.zeros(n)
    multipliers[k:] = rng.uniform(0.5, 1.0, n - k)
    weights = rng.integers(1, 9, k).astype(float)
    weights[-1] += -weights.sum() % 64
    x0 = np.zeros(n)
    x0[:k] = weights / 64
    assert x0.sum() == 1.0
    return P, -P @ m + multipliers, m, x0


@pytest.mark.parametrize("n, k", [(4, 2), (8, 4), (12, 5), (40, 8), (80, 10)])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("spread", [2.0, 10.0])
def test_gpcg_warm_started_on_the_minimizers_face_spends_the_faces_dimension(n, k, seed,
                                                                           spread):
    """The warm start on the minimizer's face (k weights): the zeros are right from the
    start, so one projected-gradient step settles them (the other weights' multipliers
    keep them at 0), CG on the face takes at most k - 1 products, and the CG step, inside
    the simplex, needs no product: at most k + 2 and the safeguard's one, however many
    weights are at 0 (n). Spending more is a regression: the zeros not recognized as
    settled, a product made for a step whose product CG already has (the weights at 0
    off the face stay at 0 on the step, and, with diagonals spread over [1, 10], the
    short first step leaves weights that the CG step more than doubles)."""
    P, q, m, x0 = face_problem(n, k, seed, spread)
    qp, counted = counted_qp(P, q)
    result = GradientProjectionCGBackend(cg_rtol=0.0).solve(qp, x0)
    assert result.converged
    assert counted.products <= k + 2 + 1
    assert np.allclose(result.x, m, rtol=0, atol=1e-9)


@pytest.mark.parametrize("n, k", [(4, 2), (8, 4), (12, 5), (40, 8), (80, 10)])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("scale", [1.0, 1e-3])
def test_gpcg_from_the_uniform_point_finds_the_face_in_two_projected_steps(n, k, seed,
                                                                         scale):
    """From the uniform point, diagonals in [1, 2], multipliers of at least 0.5: the
    first projected step (``1 / max(diag P)``) zeroes the weights off the minimizer's
    face, the second finds the same zeros, which have then settled: the products at x
    (1), of the two steps (2), of CG on the face (at most k - 1), at the minimizer (1):
    at most k + 3 and the safeguard's one. Zeros compared with anything but the last
    step's keep the projected steps going. The same with P and q scaled by 1e-3 (the
    first step scales with ``1 / max(diag P)``: a unit step would zero nothing)."""
    P, q, m, _ = face_problem(n, k, seed)
    qp, counted = counted_qp(scale * P, scale * q)
    result = GradientProjectionCGBackend(cg_rtol=0.0).solve(qp, np.full(n, 1.0 / n))
    assert result.converged
    assert counted.products <= k + 3 + 1
    assert np.allclose(result.x, m, rtol=0, atol=1e-9)


# -- rtol = 0: run until nothing more can be gained, and stop there -------------------------


def reference_problems(sizes=(5, 20)):
    """Seeded problems of ``sizes`` weights, eigenvalues from 1/cond to 1 in a random
    basis, the minimizer inside the simplex, on a face of half the weights, or at a
    vertex (gradient 0.1 on the support, 0.15 to 0.6 off it)."""
    for kind in ("interior", "face", "vertex"):
        for cond in (1e1, 1e4):
            for n in sizes:
                rng = np.random.default_rng(n)
                Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
                P = Q @ np.diag(np.geomspace(1.0 / cond, 1.0, n)) @ Q.T
                m = np.zeros(n)
                gradient = np.full(n, 0.1)
                support = {"interior": n, "face": n // 2, "vertex": 1}[kind]
                m[:support] = rng.dirichlet(np.full(support, 5.0))
                gradient[support:] += rng.uniform(0.05, 0.5, n - support)
                yield f"{kind}-{cond:g}-{n}", P, -P @ m + gradient, m


@pytest.mark.parametrize("name, P, q, m", list(reference_problems()),
                         ids=[p[0] for p in reference_problems()])
def test_gpcg_at_rtol_zero_stops_when_an_outer_iteration_no_longer_lowers_f(name, P, q, m):
    """``rtol=0``: the Frank-Wolfe gap of a rounded iterate is rarely exactly 0, but an
    outer iteration that lowers f by nothing (``previous_f - f <= 0``) is a KKT point to
    the precision of the arithmetic; the solve stops there, converged, long before its
    5000 products."""
    qp, counted = counted_qp(P, q)
    result = GradientProjectionCGBackend(rtol=0.0).solve(qp, np.full(len(q), 1.0 / len(q)))
    assert result.converged
    assert counted.products <= 1000
    assert value(P, q, result.x) - value(P, q, m) <= 1e-12


def constant_on_the_simplex(n=4, c=2.5e11, seed=23):
    """``P = c 11'``: ``x'Px = c total^2`` on the simplex, so steps of ``1/L``,
    ``L = c n``, move x by about ``(max q - min q) / (c n)`` and change f by less than
    the rounding of its value (about ``c / 2``)."""
    q = np.random.default_rng(seed).standard_normal(n)
    return np.full((n, n), c), q


@pytest.mark.parametrize("stall_iter", [1, 2, 3, 4])
def test_the_projected_gradient_at_rtol_zero_counts_an_unchanged_f_as_no_progress(stall_iter):
    """With ``rtol=0`` an improvement is any decrease of f, and an f that did not
    change is none; on ``P = c 11'`` the rounded f does not fall over the first four
    steps (it stays exactly the same, or rises by a rounding unit; the fifth lowers it),
    so after ``stall_iter`` iterations the solve stops, converged (stagnated), its gap
    still large."""
    P, q = constant_on_the_simplex()
    qp, _ = counted_qp(P, q)
    result = ProjectedGradientBackend(rtol=0.0, stall_iter=stall_iter).solve(
        qp, np.full(4, 0.25))
    assert (result.n_iter, result.converged) == (stall_iter, True)
    assert result.info["gap"] > 0.1


# -- the projected gradient's quadratic bound: rounding of a large constant in q ------------


@pytest.mark.parametrize("constant", [1e3, 1e4])
def test_a_large_constant_in_q_does_not_make_the_projected_gradient_double_l(constant):
    """``q + c 1`` adds ``c total`` to f on the simplex: the same minimizer. The values f
    then carry rounding of ``c`` (``1e-16 c`` each), more than the step's quadratic bound
    can absorb near the minimizer; the bound's rounding allowance counts ``|q|'|x|`` for
    it, so no step fails and L stays the power iteration's estimate (eigenvalues 0.1 to
    1: L = 1.01). Doubling L on rounding shortens every later step: the solve (200
    products) ends far from the minimizer."""
    n = 8
    rng = np.random.default_rng(3)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    P = Q @ np.diag(np.geomspace(0.1, 1.0, n)) @ Q.T
    m = rng.dirichlet(np.full(n, 5.0))
    qp, _ = counted_qp(P, -P @ m + constant, max_products=200)
    result = ProjectedGradientBackend(rtol=0.0).solve(qp, np.full(n, 1.0 / n))
    assert result.info["lipschitz"] <= 1.01 * (1 + 1e-9)
    assert np.allclose(result.x, m, rtol=0, atol=1e-6)


# -- the power iteration's start ----------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 7, 50])
def test_the_power_iteration_finds_curvature_in_any_single_weight(n):
    """``P = lambda e_i e_i'`` (curvature in one weight, a diagonal ``P``'s extreme case):
    a start with no zero entry is not orthogonal to any ``e_i``, so the second product
    already gives ``lambda`` exactly. A start orthogonal to ``e_i`` sees ``P v = 0`` and
    estimates 0, leaving the backtracking to find ``lambda`` from the step ceiling."""
    for i in range(n):
        P = np.zeros((n, n))
        P[i, i] = 3.0
        qp = SimplexQP(diag=np.zeros(n), linear=np.zeros(n), total=1.0,
                       balance=GramBalance(P), balance_weight=1.0)
        assert lipschitz_estimate(qp) == pytest.approx(3.0, rel=1e-12)
        diagonal = SimplexQP(diag=P.diagonal().copy(), linear=np.zeros(n), total=1.0)
        assert lipschitz_estimate(diagonal) == pytest.approx(3.0, rel=1e-12)


@pytest.mark.parametrize("n", [3, 10, 40])
def test_the_power_iteration_starts_from_the_documented_vector(n):
    """``lipschitz_estimate``: 12 products of the power iteration from
    ``v_i = cos(0.7071 i) + 1`` (normalized), the estimate the last Rayleigh quotient
    ``v'Pv``; written out here. Eigenvalues 1 and 0.97 (and lower) in a random basis:
    12 products leave the estimate depending on the start (another start gives another
    number by more than 1e-6)."""
    rng = np.random.default_rng(n)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    P = Q @ np.diag(np.linspace(0.2, 1.0, n - 1).tolist() + [0.97]) @ Q.T
    qp = SimplexQP(diag=np.zeros(n), linear=np.zeros(n), total=1.0,
                   balance=GramBalance(P), balance_weight=1.0)
    v = np.cos(0.7071 * np.arange(n)) + 1.0
    v /= np.linalg.norm(v)
    for _ in range(12):
        w = P @ v
        estimate, v = v @ w, w / np.linalg.norm(w)
    assert lipschitz_estimate(qp) == pytest.approx(estimate, rel=1e-12, abs=0)


def test_the_step_of_a_nearly_linear_objective_is_the_step_ceiling():
    """L starts at the larger of 1.01 times the power iteration's estimate and
    ``1 / step_ceiling`` of the gradient at the warm start (``STEP_SPAN total /
    max|P x0 + q|``, the longest useful step), and a quadratic bound that holds keeps
    it: with ``P = 1e-7 I`` (the estimate 1e-7) and ``q = (1, 2, 3)`` the floor,
    ``max|1e-7 / 3 + q| / 1e6``, is L."""
    P, q = 1e-7 * np.eye(3), np.array([1.0, 2.0, 3.0])
    qp, _ = counted_qp(P, q, total=1.0)
    result = ProjectedGradientBackend().solve(qp, np.full(3, 1.0 / 3.0))
    assert result.info["lipschitz"] == pytest.approx(
        np.abs(P @ np.full(3, 1.0 / 3.0) + q).max() / STEP_SPAN, rel=1e-12, abs=0)
    assert np.array_equal(result.x, [1.0, 0.0, 0.0])


class TurningBalance:
    """An operator that is 0 for its first two products and ``1e200 I`` after (not one
    fixed P: products that change under the solver, as rounding can make them)."""

    def __init__(self):
        self.products = 0

    def matvec(self, x):
        self.products += 1
        return np.zeros_like(x) if self.products <= 2 else 1e200 * x

    def quad(self, x):
        return 1e200 * (x @ x)


def test_the_projected_gradient_gives_up_a_step_after_64_doublings_of_l():
    """L is doubled at most 64 times in an iteration; a step whose quadratic bound still
    fails then ends the solve, not converged, at the last iterate (here the warm start).
    The operator is 0 at the start and for the power iteration (one product, norm 0) and
    1e200 I at every trial step after, so every bound fails: 2 + 64 products."""
    balance = TurningBalance()
    qp = SimplexQP(diag=np.zeros(3), linear=np.array([1.0, 2.0, 3.0]), total=1.0,
                   balance=balance, balance_weight=1.0)
    x0 = np.full(3, 1.0 / 3.0)
    result = ProjectedGradientBackend().solve(qp, x0)
    assert balance.products == 2 + 64
    assert not result.converged and np.allclose(result.x, x0, rtol=0, atol=1e-16)


# -- the safeguard's result is on the simplex ------------------------------------------------


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_a_warm_start_off_the_simplex_by_rounding_gives_an_exactly_feasible_result(name):
    """P = 0, q = 0: every feasible point is a minimizer and has the warm start's value
    exactly (0). A warm start off the simplex by rounding (its sum 2 + 1e-9, a weight of
    -1e-13) is not returned as it is: the result is the safeguard's projection, exactly
    feasible."""
    qp = SimplexQP(diag=np.zeros(4), linear=np.zeros(4), total=2.0)
    x0 = np.array([0.5 + 1e-9, 1.5, -1e-13, 0.0])
    with np.errstate(divide="raise", invalid="raise"):  # no curvature anywhere: no 1 / 0
        result = BACKENDS[name]().solve(qp, x0)
    assert result.value == 0.0
    assert np.all(result.x >= 0)
    assert result.x.sum() == pytest.approx(2.0, rel=0, abs=1e-12)


def test_the_safeguard_keeps_a_point_as_good_as_the_warm_start():
    """A tie of values keeps the solver's point (made exactly feasible), not the warm
    start: ``x`` and ``x0`` on the face of a linear objective's equal least entries."""
    q = np.array([1.0, -2.0, -2.0, 3.0])
    qp = SimplexQP(diag=np.zeros(4), linear=q, total=1.0)
    x0 = np.array([0.0, 0.25, 0.75, 0.0])
    x = np.array([0.0, 0.5, 0.5, 0.0])
    result = QPBackend.safeguard(qp, x, x0, 1, True)
    assert result.value == qp.value(x0) == -2.0
    assert np.array_equal(result.x, x)


# -- a face along which f is linear --------------------------------------------------------


@pytest.mark.parametrize("delta", [0.3, 0.1, 1e-2, 1e-3, 1e-5])
def test_gpcg_on_a_face_without_curvature_reaches_the_vertex(delta):
    """``P = diag(0, 0, 1)``, ``q = (0, delta, 0.5)``: after the first step the face
    ``{x_1, x_2}`` has no curvature, so CG there meets a direction of zero curvature at
    once and makes no step (a step ``rz / 0`` would be infinite); the projected steps
    reach the minimizer, the vertex ``e_1`` (q_1 least, no curvature). A step along which
    f is linear sets the next trial step to the arc's ceiling, not to its own length:
    before, every projected step kept the first one's length and the solve crawled (21
    products at delta = 0.1, 2001 at 1e-3; at 1e-5 the 5000 products ended at
    (0.51, 0.49, 0)). The ceiling (``STEP_SPAN`` total / max |g|, 2e6 here) still
    bounds a step: a delta far below 1e-6 needs several."""
    P = np.diag([0.0, 0.0, 1.0])
    qp, counted = counted_qp(P, np.array([0.0, delta, 0.5]))
    with np.errstate(divide="raise", invalid="raise"):  # no division by 0 curvature
        result = GradientProjectionCGBackend().solve(qp, np.full(3, 1.0 / 3))
    assert result.converged
    assert np.allclose(result.x, [1.0, 0.0, 0.0], rtol=0, atol=1e-9)
    assert counted.products <= 12


@pytest.mark.parametrize("d, q, m", [
    # gradients (x_1, 2 x_2, 0.1, 0.3): 0.1 on the support, x_4 = 0
    ([1.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.1, 0.3], [0.1, 0.05, 0.85, 0.0]),
    # gradients (0.5, 4 x_2 - 1, 0.6): 0.5 on the support, x_3 = 0
    ([0.0, 4.0, 0.0], [0.5, -1.0, 0.6], [0.625, 0.375, 0.0]),
])
def test_gpcg_with_weights_without_curvature_stays_finite(d, q, m):
    """Zero diagonal entries (weights along which f is linear): CG's Jacobi weights stay
    finite (1 / 0 made directions of 1e300 and inf - inf), no floating-point error is
    raised, and the minimizer is found (the KKT conditions: equal gradients on the
    support, larger off it), where the infinite weights had left it 7e-6 off. Slowly:
    60 and 128 products today (67 and 133 before), as CG on a face that holds a weight
    without curvature stops at its first direction; a weakness noted, not pinned."""
    qp, _ = counted_qp(np.diag(d), np.array(q))
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        result = GradientProjectionCGBackend().solve(qp, np.full(len(q), 1.0 / len(q)))
    assert result.converged
    assert np.allclose(result.x, m, rtol=0, atol=1e-9)


# -- exact arithmetic: ties the comparisons must resolve as documented ----------------------


@pytest.mark.parametrize("m", [[0.5, 0.25, 0.125, 0.125], [0.125, 0.25, 0.5, 0.125]])
def test_exact_cg_stops_at_an_exactly_zero_residual(m):
    """``P = diag(1, 2, 4, 4)``, a minimizer of multiples of 1/8 inside the simplex with
    gradient 0 (``q = -P m``), from the uniform point: every number is a short binary
    fraction, so Jacobi-preconditioned CG, exact in one step for a diagonal P, leaves a
    residual of exactly 0, and ``cg_rtol=0`` stops it there (``rz <= 0 * first``): the
    products at x, of the projected step, of the one CG step and at the minimizer, 4,
    and the safeguard's one. Another product, of the zero direction, would be wasted."""
    d = np.array([1.0, 2.0, 4.0, 4.0])
    m = np.array(m)
    qp, counted = counted_qp(np.diag(d), -d * m)
    result = GradientProjectionCGBackend(cg_rtol=0.0).solve(qp, np.full(4, 0.25))
    assert (result.n_iter, result.converged) == (4, True)
    assert counted.products == 4 + 1
    assert np.array_equal(result.x, m)




@pytest.mark.parametrize("budget", [4, 6, 8])
def test_an_unchanged_f_keeps_the_projected_gradients_momentum(budget):
    """On ``P = c 11'`` the rounded f is exactly the same after the first two steps
    (and rises by a rounding unit at the third, a restart): the momentum is kept through
    the unchanged f, so the iterates after ``budget`` products are FISTA's with restarts
    only where f rose (they differ by about 1e-12 from iterates that also restart at an
    unchanged f; every step moves x by about 2e-12)."""
    P, q = constant_on_the_simplex()
    x0 = np.full(4, 0.25)
    qp, _ = counted_qp(P, q, max_products=budget)
    result = ProjectedGradientBackend(rtol=0.0).solve(qp, x0)
    assert result.n_iter == budget
    expected = fista(P, q, 1.0, x0, result.info["lipschitz"], budget)
    assert value(P, q, expected) <= value(P, q, x0)  # the safeguard keeps it
    assert np.abs(expected - x0).max() > 5e-12
    assert np.allclose(result.x, expected, rtol=0, atol=1e-13)


# -- work budgets: the products a converged solve spends ------------------------------------

#: ceilings of the products (the safeguard's included) a default solve from the uniform
#: point spends on each reference problem, (GPCG, projected gradient): 1.25 times the
#: largest count seen, plus 4. The comments give the counts of today's code under 15
#: OpenBLAS kernels (`OPENBLAS_CORETYPE`, Haswell to Excavator, one machine) and, in
#: brackets, those of commit 6a7cc3a on an AVX-512 machine. Counts vary with rounding
#: where a stop is borderline: a stop one outer iteration later costs 10 to 20 products
#: (GPCG 39 to 58 on interior-10-20 between kernels), and before GPCG's residual update
#: a kernel's rounding let CG iterate on noise (150 products on interior-10-200 where
#: the AVX-512 machine spent 26). The margin covers another BLAS, not a solver that
#: became slower by half.
CEILINGS = {
    "interior-10-5": (14, 84),  # 8-8 (8), 57-63 (64)
    "interior-10-20": (77, 94),  # 39-58 (28), 64-72 (72)
    "interior-10-60": (123, 104),  # 43-61 (95), 71-78 (80)
    "interior-10-200": (44, 92),  # 32-32 (26), 62-70 (63)
    "interior-10000-5": (18, 509),  # 8-8 (11), 404-404 (404)
    "interior-10000-20": (173, 869),  # 87-89 (135), 692-692 (692)
    "interior-10000-60": (318, 872),  # 178-179 (251), 694-694 (694)
    "interior-10000-200": (631, 769),  # 498-501 (323), 612-612 (612)
    "face-10-5": (18, 44),  # 11-11 (11), 32-32 (32)
    "face-10-20": (33, 79),  # 20-20 (23), 58-60 (59)
    "face-10-60": (33, 74),  # 23-23 (22), 54-56 (54)
    "face-10-200": (37, 77),  # 26-26 (22), 56-58 (56)
    "face-10000-5": (24, 81),  # 16-16 (16), 58-61 (61)
    "face-10000-20": (56, 329),  # 25-25 (41), 260-260 (260)
    "face-10000-60": (182, 493),  # 89-142 (81), 391-391 (391)
    "face-10000-200": (152, 493),  # 114-117 (118), 391-391 (391)
    "vertex-10-5": (12, 27),  # 6-6 (6), 18-18 (18)
    "vertex-10-20": (12, 27),  # 6-6 (6), 18-18 (18)
    "vertex-10-60": (12, 27),  # 6-6 (6), 18-18 (18)
    "vertex-10-200": (12, 27),  # 6-6 (6), 18-18 (18)
    "vertex-10000-5": (12, 29),  # 6-6 (6), 20-20 (20)
    "vertex-10000-20": (12, 31),  # 6-6 (6), 21-21 (21)
    "vertex-10000-60": (12, 31),  # 6-6 (6), 21-21 (21)
    "vertex-10000-200": (12, 31),  # 6-6 (6), 21-21 (21)
}


@pytest.mark.parametrize("name, P, q, m", list(reference_problems((5, 20, 60, 200))),
                         ids=[p[0] for p in reference_problems((5, 20, 60, 200))])
@pytest.mark.parametrize("backend", [GradientProjectionCGBackend, ProjectedGradientBackend],
                         ids=["gradient_projection_cg", "projected_gradient"])
def test_a_converged_solve_spends_no_more_products_than_its_ceiling(name, P, q, m, backend):
    """Each backend, default options, on the reference problems (5 to 200 weights,
    condition 10 and 1e4, minimizer inside, on a face, at a vertex): converged, at the
    minimum to the tolerance, within the ceiling of :data:`CEILINGS`. Counts, not times:
    the same on every machine up to rounding."""
    qp, counted = counted_qp(P, q)
    result = backend().solve(qp, np.full(len(q), 1.0 / len(q)))
    optimum = value(P, q, m)
    assert result.converged
    assert value(P, q, result.x) - optimum <= 1e-8 * (abs(0.5 * m @ P @ m) + abs(q @ m))
    ceiling = CEILINGS[name][backend is ProjectedGradientBackend]
    assert counted.products <= ceiling


def overshooting(n, seed, weight=40.0):
    """``diag(d) + w u u'``, ``u`` alternating +-1 (in the simplex's directions), d in
    [1, 2], w = 40: the largest eigenvalue, about ``n w``, is n times the largest
    diagonal, so steps ``1 / max(diag P)`` overshoot and the arc search shrinks them.
    The minimizer inside the simplex, gradient 0 there."""
    rng = np.random.default_rng(seed)
    u = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    P = np.diag(rng.uniform(1.0, 2.0, n)) + weight * np.outer(u, u)
    m = rng.dirichlet(np.full(n, 20.0))
    return P, -P @ m, m


@pytest.mark.parametrize("name, P, q, m",
                         list(reference_problems())
                         + [(f"overshooting-{n}-{seed}", *overshooting(n, seed))
                            for n in (4, 8, 20) for seed in (0, 1)],
                         ids=[p[0] for p in reference_problems()]
                         + [f"overshooting-{n}-{seed}" for n in (4, 8, 20) for seed in (0, 1)])
def test_every_gpcg_step_lowers_the_objective(name, P, q, m):
    """"Every step lowers the objective" (the class docstring): a solve cut after b
    products returns its last iterate, so the values after b = 1, 2, ..., 30 products
    never rise (beyond the rounding of f, 1e-12 of the scale). The safeguard would hide
    a step above the warm start's value, not one between two iterates'."""
    n = len(q)
    values = []
    for budget in range(1, 31):
        qp, _ = counted_qp(P, q, max_products=budget)
        result = GradientProjectionCGBackend().solve(qp, np.full(n, 1.0 / n))
        values.append(value(P, q, result.x))
    scale = abs(0.5 * m @ P @ m) + abs(q @ m)
    assert np.max(np.diff(values)) <= 1e-12 * scale


@pytest.mark.parametrize("factor, accepted", [(1.01, True), (1 / 1.01, False)])
def test_gpcg_compares_its_certificate_with_rtol_times_the_objectives_scale(factor,
                                                                          accepted):
    """The solve stops when the Frank-Wolfe gap is at most ``rtol`` times the scale
    ``|x'Px / 2| + |q'x|``. With ``q'x0 = 0`` at the uniform warm start, ``rtol`` 1 %
    above ``gap / scale`` there accepts the warm start at the first product (converged,
    nothing moved); 1 % below, the solve goes on and lowers f. (A scale three times as
    large, ``|1.5 x'Px| + |q'x|``, would accept both.)"""
    n = 6
    rng = np.random.default_rng(31)
    P = near_diagonal(n, rng)
    q = rng.standard_normal(n)
    q -= q.mean()
    x0 = np.full(n, 1.0 / n)
    g = P @ x0 + q
    gap = g @ x0 - g.min()
    scale = abs(0.5 * x0 @ P @ x0) + abs(q @ x0)
    qp, _ = counted_qp(P, q)
    result = GradientProjectionCGBackend(rtol=factor * gap / scale).solve(qp, x0)
    assert result.converged
    if accepted:
        assert result.n_iter == 1 and np.allclose(result.x, x0, rtol=0, atol=1e-15)
    else:
        assert result.n_iter > 1 and value(P, q, result.x) < value(P, q, x0) - 0.1 * gap


def near_a_vertex(seed):
    """A minimizer on the edge from ``e_1`` to ``e_2``, within 1e-3 of ``e_1`` (seeds 179
    and 234 of a family of random problems of 2 to 5 weights), a random warm start."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    A = rng.standard_normal((n, n))
    P = A @ A.T + 0.1 * np.eye(n)
    m = np.zeros(n)
    m[0] = 0.9 + 0.1 * rng.random()
    m[1] = 1 - m[0]
    multipliers = np.zeros(n)
    multipliers[2:] = rng.uniform(0.1, 1, n - 2)
    return P, -P @ m + multipliers, rng.dirichlet(np.ones(n))


@pytest.mark.parametrize("seed, budgets", [(179, range(8, 13)), (234, range(5, 10))])
def test_a_step_that_lands_where_x_is_keeps_the_momentum(seed, budgets):
    """The iterates overshoot onto the vertex ``e_1`` (the projection lands on a vertex
    exactly) and the next step, from beyond it, lands on ``e_1`` again: ``x_new = x``,
    so ``(y - x_new)'(x_new - x)`` is exactly 0, not uphill, and the momentum is kept.
    The iterates after each budget are FISTA's with restarts only where that product is
    positive or f rose (a restart at 0 moves them by up to 2e-4)."""
    P, q, x0 = near_a_vertex(seed)
    for budget in budgets:
        qp, _ = counted_qp(P, q, max_products=budget)
        result = ProjectedGradientBackend(rtol=0.0).solve(qp, x0)
        expected = fista(P, q, 1.0, x0, result.info["lipschitz"], budget)
        if value(P, q, expected) > value(P, q, x0):
            expected = x0  # the safeguard
        assert np.allclose(result.x, expected, rtol=0, atol=1e-12)


# -- GPCG's searches: their documented rules, at their boundaries ---------------------------
# Each search is called on a `_Solve` of a problem built for it, with numbers for which
# every comparison is exact (integers, short binary fractions), so a rule's boundary is
# reached on any BLAS.


def solve_at(P, g, x, step=None):
    """A GPCG solve at ``x`` of the problem with Hessian ``P`` whose gradient at ``x`` is
    ``g`` (``q = g - P x``), its products counted from 0; ``step`` replaces the first
    trial step (as a Barzilai-Borwein step does)."""
    P, g, x = (np.asarray(a, dtype=float) for a in (P, g, x))
    qp, _ = counted_qp(P, g - P @ x, total=float(x.sum()))
    run = _Solve(GradientProjectionCGBackend(), qp, x, budget=5000)
    assert np.allclose(run.x, x, rtol=0, atol=1e-16)  # on the simplex (to rounding)
    if step is not None:
        run.step = step
    return run


def test_the_arc_search_gives_up_after_30_trial_steps():
    """The arc search makes at most 30 trial steps, then returns None with x unchanged.
    ``P = 1e200 I``, a weight at 0 that the gradient pulls up: every trial overshoots
    (curvature ``1e200 |d|^2`` against a slope ``|d|``), each is 10 times shorter, and
    the weight at 0 moves by ``2 t / 3`` however small t gets (no rounding of the other
    weights ends it early): 30 products, one per trial."""
    run = solve_at(1e200 * np.eye(3), [-1.0, 0.0, 0.0], [0.0, 0.5, 0.5], step=1.0)
    assert run._arc_search(np.array([-1.0, 0.0, 0.0])) is None
    assert run.products == 30


def test_the_projected_search_gives_up_after_20_trial_steps():
    """The projected search makes at most 20 trials, each a quarter of the last, then
    leaves x: ``P = 1e200 I`` rejects every one (``t`` down to ``4^-19``). The first
    trial, inside the simplex with its product known, makes none: 19 products."""
    x, g, d = [0.25, 0.25, 0.5], np.array([1.0, 0.0, -1.0]), np.array([-0.25, 0.0, 0.25])
    P = 1e200 * np.eye(3)
    run = solve_at(P, g, x)
    run.projected_search(g, d, P @ d, np.ones(3))
    assert np.array_equal(run.x, x)
    assert run.products == 19


@pytest.mark.parametrize("search", ["arc", "projected"])
def test_both_searches_accept_a_step_at_exactly_the_sufficient_decrease(search):
    """The sufficient decrease is ``slope + curvature / 2 <= 1e-4 slope``, equality
    included. slope -10000 and curvature 19998 meet it exactly in floating point
    (``-10000 + 9999 = -1 = fl(1e-4 * -10000)``): the step ``d = (1, -1)`` from
    ``(1, 1)`` to the vertex ``(2, 0)`` is taken at the first trial, with one product
    for the arc search (the arc step ``fl(1 / 5000)`` along the gradient
    ``(-5000, 5000)`` gives d exactly) and none for the projected search (the CG step's
    product is known)."""
    assert -10000.0 + 0.5 * 19998.0 == 1e-4 * -10000.0
    P = np.diag([9999.0, 9999.0])
    d = np.array([1.0, -1.0])
    if search == "arc":
        g = np.array([-5000.0, 5000.0])
        run = solve_at(P, g, [1.0, 1.0], step=1.0 / 5000.0)
        found = run._arc_search(g)
        assert found is not None and np.array_equal(found[0], d) and found[2] == 19998.0
        assert run.products == 1
    else:
        g = np.array([0.0, 10000.0])
        run = solve_at(P, g, [1.0, 1.0])
        run.projected_search(g, d, P @ d, np.ones(2))
        assert np.array_equal(run.x, [2.0, 0.0])
        assert run.products == 0


def test_the_projected_search_takes_no_step_along_which_f_is_constant():
    """A step is taken only where f falls: along ``d = (1/4, -1/4, 0)`` with ``P = 0``
    and the gradient ``1`` (the multiplier alone) the slope ``g'd`` and the curvature
    are exactly 0, so no trial meets ``slope < 0``; x stays after the 20 trials."""
    x, g = [0.25, 0.25, 0.5], np.ones(3)
    run = solve_at(np.zeros((3, 3)), g, x)
    run.projected_search(g, np.array([0.25, -0.25, 0.0]), np.zeros(3), np.ones(3))
    assert np.array_equal(run.x, x)


def test_the_cg_steps_product_is_reused_while_its_sums_drift_is_at_most_1e_12_of_it():
    """The CG step's sum, 0 in exact arithmetic, is corrected by the weights; its known
    product still serves when the drift is at most ``1e-12 |d|_1`` (equality included).
    ``d = (1/2, -1/2, D)`` with ``D`` the fixed point of ``D = fl(1e-12 fl(1 + D))``
    drifts by exactly ``1e-12 |d|_1``: the step is taken at t = 1 with no product."""
    D = 1e-12
    while (D_next := 1e-12 * np.abs([0.5, -0.5, D]).sum()) != D:
        D = D_next
    d = np.array([0.5, -0.5, D])
    assert d.sum() == D == 1e-12 * np.abs(d).sum()
    x, g = np.array([0.25, 0.75, 0.0]), np.array([-1.0, 1.0, 0.0])
    run = solve_at(np.eye(3), g, x)
    run.projected_search(g, d, d.copy(), np.ones(3))
    assert run.products == 0
    assert np.allclose(run.x, x + d - D / 3, rtol=0, atol=1e-16)


def test_a_drifted_cg_step_is_corrected_by_the_weights_and_its_product_recomputed():
    """A step whose sum drifts by more than ``1e-12 |d|_1`` (here by 1/4, of 3/4) is
    moved back onto the sum constraint along the preconditioner's weights w,
    ``d - (sum(d) / sum(w)) w``, and its product is made anew (the known one is that of
    the uncorrected step): one product, and x + the corrected step, inside the simplex."""
    x, g = np.array([0.25, 0.5, 0.25]), np.array([-1.0, 1.0, 0.0])
    d, w = np.array([0.5, -0.25, 0.0]), np.array([1.0, 2.0, 1.0])
    run = solve_at(np.eye(3), g, x)
    run.projected_search(g, d, d.copy(), w)
    assert run.products == 1
    assert np.allclose(run.x, x + d - 0.25 * w / w.sum(), rtol=0, atol=1e-15)


def test_cg_keeps_its_step_when_a_later_direction_has_no_curvature():
    """Jacobi-preconditioned CG on ``P = diag(1, 0, 0)`` (the zero diagonal entries get
    the largest's Jacobi weight, 1) from the gradient ``(1, 1, -2)``: the first direction
    ``(-1, -1, 2)``, curvature 1, step 6; the second, ``(0, -6, 6)``, lies in P's null
    space (curvature 0), where CG stops and returns the step made so far,
    ``(-6, -6, 12)``, with its product ``(-6, 0, 0)`` (all in integers, exact)."""
    run = solve_at(np.diag([1.0, 0.0, 0.0]), [1.0, 1.0, -2.0], [0.25, 0.25, 0.5])
    direction, P_direction, _ = run.face_phase(np.array([1.0, 1.0, -2.0]))
    assert np.array_equal(direction, [-6.0, -6.0, 12.0])
    assert np.array_equal(P_direction, [-6.0, 0.0, 0.0])
    assert run.products == 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_cg_step_is_returned_with_its_product(seed):
    """The face phase returns the CG step and ``P`` times it, accumulated from the
    directions' products (no product of its own): checked against ``P @ direction`` on
    a definite problem of 12 weights where CG makes several steps."""
    rng = np.random.default_rng(seed)
    P = near_diagonal(12, rng, spread=8.0)
    x = rng.dirichlet(np.ones(12))
    run = solve_at(P, rng.standard_normal(12), x)
    direction, P_direction, _ = run.face_phase(P @ run.x + run.qp.linear)
    assert run.products >= 3
    assert np.allclose(P_direction, P @ direction, rtol=0,
                       atol=1e-12 * np.abs(P @ direction).max())


def test_a_failed_arc_trial_is_followed_by_the_quadratics_minimizer_along_it():
    """After a trial that fails the sufficient decrease, the next is shortened to the
    minimizer of the quadratic along the failed step, ``t (-slope / curvature)`` (at
    least 10 times shorter). ``P = 2 I``, the gradient ``(1/8, -1/8, 0)`` from
    ``(1/4, 1/4, 1/2)``: the trial step 2 reaches ``(0, 1/2, 1/2)``, where f has risen
    (slope -1/16, curvature 1/8); the minimizer along it is a quarter of the way,
    t = 1/2, ``d = (-1/16, 1/16, 0)``, taken (all exact in binary)."""
    g = np.array([0.125, -0.125, 0.0])
    run = solve_at(2.0 * np.eye(3), g, [0.25, 0.25, 0.5], step=2.0)
    d, Pd, curvature = run._arc_search(g)
    assert np.array_equal(d, [-0.0625, 0.0625, 0.0])
    assert np.array_equal(Pd, 2.0 * d) and curvature == 2.0 * (d @ d)
    assert run.products == 2


def test_the_projected_gradient_stops_at_a_gap_of_rtol_times_the_objectives_size():
    """The Frank-Wolfe gap is compared with ``rtol`` times the objective's size at the
    iterate, ``|x'Px / 2| + |q'x|``. With rtol just below the first iterate's gap over
    that size (the iterate, FISTA's first step, computed here) the solve goes on past
    it; just above, it stops there."""
    rng = np.random.default_rng(4)
    n = 6
    P = near_diagonal(n, rng)
    q = rng.standard_normal(n)
    x0 = np.full(n, 1.0 / n)
    qp, _ = counted_qp(P, q)
    first = ProjectedGradientBackend(rtol=0.0, max_iter=1).solve(qp, x0)
    x1 = fista(P, q, 1.0, x0, first.info["lipschitz"], 1)
    gradient = P @ x1 + q
    gap = gradient @ x1 - gradient.min()
    size = abs(0.5 * x1 @ P @ x1) + abs(q @ x1)
    assert gap > 0
    for factor, iterations in [(1 - 1e-6, lambda k: k > 1), (1 + 1e-6, lambda k: k == 1)]:
        qp, _ = counted_qp(P, q)
        result = ProjectedGradientBackend(rtol=factor * gap / size).solve(qp, x0)
        assert iterations(result.n_iter), (factor, result.n_iter)
