"""The descent blocks' steps on small problems, against computations written here from
the paper and the blocks' documented contracts: the embedding's generalized power
iteration (paper eq. F.2; Nie et al. 2017) on a dense quadratic given by a term written
here, the polar factor against its SVD definition, the sample weights' budget, precision
and float64 check, the fused graph's adaptive update. Block-level and fast: no dataset,
no fit (the mutation set ``descent_blocks`` of .ci/run_mutants.py runs them)."""

import re
import warnings

import numpy as np
import scipy.linalg
import pytest

from causefs.blocks.descent.embedding import EmbeddingBlock, polar_factor
from causefs.blocks.descent.fused_graph import FusedGraphBlock
from causefs.blocks.descent.sample_weights import SampleWeightsBlock, sample_weight_qp
from causefs.blocks.descent.selection_matrix import SelectionMatrixBlock
from causefs.core.state import State
from causefs.core.validation import InvalidParameterError, construct
from causefs.model.objective import Objective
from causefs.model.problem import Problem
from causefs.model.subproblems import GraphCost
from causefs.numerics.adaptive_graphs import adaptive_graph
from causefs.plugins.registry import parts as registered_parts
from causefs.qp import QPBackend
from causefs.qp.base import QPResult
from causefs.qp.projected_gradient import ProjectedGradientBackend
from causefs.terms import Term
from test_descent_block_costs import cause_fs_state


def svd_polar(M):
    """``argmax_{F'F=I} Tr(F'M) = U V'`` for the thin SVD ``M = U s V'``."""
    U, _, Vt = np.linalg.svd(M, full_matrices=False)
    return U @ Vt


class _Quadratic(Term):
    """``scale (Tr(F'AF) - 2 Tr(F'B))`` for a dense symmetric PSD A: the F subproblem
    of eq. F.2 with A and B given, its eigenvalue bound Gershgorin's (max row sum)."""

    name, reads, needs = "quadratic", ("F",), ("F",)

    def __init__(self, A, B, scale=1.0):
        self.A, self.B, self.scale = A, B, scale

    @property
    def bound(self):
        return float(np.abs(self.A).sum(axis=1).max())

    def value(self, state):
        F = state.F
        return self.scale * float(np.sum(F * (self.A @ F)) - 2.0 * np.sum(F * self.B))

    def add_to_embedding_system(self, state, system):
        system.add_operator(self.scale * self.A, self.scale * self.bound)
        system.add_rhs(self.scale * self.B)


def quadratic_state(n=12, h=3, seed=0, scale=1.0, zero=False, rhs=True):
    """F on the Stiefel manifold with the objective :class:`_Quadratic` only (B = 0
    without ``rhs``; A = 0 and B = 0 when ``zero``)."""
    rng = np.random.default_rng(seed)
    R = rng.standard_normal((n, n))
    A, B = (R @ R.T) / n, rng.standard_normal((n, h)) * rhs
    if zero:
        A, B = np.zeros((n, n)), np.zeros((n, h))
    term = _Quadratic(A, B, scale)
    problem = Problem(X=rng.random((n, 2)), coding=np.zeros((n, 2)), n_clusters=h,
                      objective=Objective([term]), fields=registered_parts().fields,
                      n_neighbors=1)
    F, _ = np.linalg.qr(rng.standard_normal((n, h)))
    return State(problem, F=F), term


def subproblem_value(term, F):
    return float(np.sum(F * (term.A @ F)) - 2.0 * np.sum(F * term.B))


def reference_gpi(term, F, iterations=20000):
    """GPI as Nie et al. (2017) write it, with eta = lambda_max(A) from a dense
    eigendecomposition: ``F <- polar(2 (eta I - A) F + 2 B)``, to its fixed point."""
    eta = np.linalg.eigvalsh(term.A)[-1]
    value = subproblem_value(term, F)
    for _ in range(iterations):
        F = svd_polar(2.0 * (eta * F - term.A @ F) + 2.0 * term.B)
        value, previous = subproblem_value(term, F), value
        if previous - value <= 1e-15 * abs(value):
            break
    return F


@pytest.mark.parametrize("seed", range(4))
def test_one_gpi_iteration_is_the_polar_factor_of_the_shifted_problem(seed):
    """One iteration from F: ``polar(eta F - A F + B)``, with eta the terms' bound on
    lambda_max(A) (any eta >= lambda_max makes the iteration monotone)."""
    state, term = quadratic_state(seed=seed)
    F = EmbeddingBlock(max_iter=1).step(state).F
    expected = svd_polar(term.bound * state.F - term.A @ state.F + term.B)
    assert np.allclose(F, expected, atol=1e-10)
    assert subproblem_value(term, F) < subproblem_value(term, state.F)


@pytest.mark.parametrize("solver", ["gpi", "subspace"])
@pytest.mark.parametrize("seed", range(4))
def test_the_embedding_converges_to_the_stationary_point_the_dense_iteration_reaches(
        seed, solver):
    """To convergence, either solver reaches the value of the reference iteration and
    the first-order optimality condition on F'F = I: F'(AF - B) symmetric."""
    state, term = quadratic_state(seed=seed)
    F = EmbeddingBlock(max_iter=20000, tol=1e-15, solver=solver).step(state).F
    reference = reference_gpi(term, state.F)
    assert subproblem_value(term, F) == pytest.approx(subproblem_value(term, reference),
                                                      rel=1e-9)
    M = F.T @ (term.A @ F - term.B)
    assert np.abs(M - M.T).max() <= 1e-6 * np.abs(M).max()
    assert np.allclose(F.T @ F, np.eye(F.shape[1]), atol=1e-12)


def test_the_default_tolerance_reaches_the_stationary_value():
    """The default block (tol 1e-10, docs/PERFORMANCE.md) stops at the converged value
    to about its tolerance."""
    state, term = quadratic_state(seed=5)
    F = EmbeddingBlock().step(state).F
    reference = subproblem_value(term, reference_gpi(term, state.F))
    assert subproblem_value(term, F) == pytest.approx(reference, rel=1e-7)


@pytest.mark.parametrize("solver", ["gpi", "subspace"])
def test_the_stopping_rule_is_relative_to_the_value(solver):
    """``decrease <= tol (|value| + 1e-300)``: a subproblem scaled by 2^-40 (exact in
    binary) stops at the same iterate as the unscaled one, for either solver."""
    state, _ = quadratic_state(seed=1)
    tiny, _ = quadratic_state(seed=1, scale=2.0**-40)
    block = EmbeddingBlock(max_iter=500, tol=1e-6, solver=solver)
    assert np.allclose(block.step(tiny).F, block.step(state).F, atol=1e-9)
    first = EmbeddingBlock(max_iter=1, solver=solver).step(state).F
    assert not np.allclose(block.step(state).F, first)


@pytest.mark.parametrize("solver", ["gpi", "subspace"])
def test_no_iteration_leaves_f_and_a_constant_subproblem_leaves_it_too(solver):
    """``max_iter=0`` returns F as given; so does a subproblem constant in F (A = 0,
    B = 0: every F is a minimizer), where an iterate that does not lower the value is
    not taken (the polar factor of 0 would replace F by an arbitrary basis)."""
    state, _ = quadratic_state(seed=2)
    assert np.array_equal(EmbeddingBlock(max_iter=0, solver=solver).step(state).F, state.F)
    flat, _ = quadratic_state(seed=2, zero=True)
    assert np.array_equal(EmbeddingBlock(solver=solver).step(flat).F, flat.F)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_the_polar_factor_takes_the_eigendecomposition_at_any_scale(scale, monkeypatch):
    """A well-conditioned M of any scale takes the (h, h) eigendecomposition (n h^2
    work), not the SVD, and gives the SVD definition's factor."""
    rng = np.random.default_rng(0)
    M = scale * rng.standard_normal((200, 5))
    expected = svd_polar(M)

    def no_svd(*args, **kwargs):
        raise AssertionError("the SVD fallback was taken")

    monkeypatch.setattr(np.linalg, "svd", no_svd)
    assert np.allclose(polar_factor(M), expected, atol=1e-10)


def test_the_polar_factor_of_a_column_and_of_a_rank_deficient_matrix():
    """h = 1: the unit vector ``m / ||m||``; a rank-deficient M (a zero eigenvalue of
    M'M) takes the SVD without dividing by zero."""
    m = np.arange(1.0, 7.0)[:, None]
    assert np.allclose(polar_factor(m), m / np.linalg.norm(m), atol=1e-14)
    rng = np.random.default_rng(1)
    M = rng.standard_normal((30, 4))
    M[:, 3] = M[:, 0] + M[:, 1]  # rank 3
    zero_column = M.copy()
    zero_column[:, 3] = 0.0  # an eigenvalue of M'M exactly 0
    for deficient in (M, zero_column):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            F = polar_factor(deficient)
        assert np.allclose(F.T @ F, np.eye(4), atol=1e-12)
        assert np.allclose(F @ (F.T @ deficient), deficient, atol=1e-10)  # spans M


def test_the_polar_factor_keeps_the_eigendecomposition_at_the_orthonormality_bound(
        monkeypatch):
    """The eigendecomposition's factor is kept when no entry of ``F'F - I`` exceeds 1e-12
    in magnitude: at exactly 1e-12 it is kept, one ulp above it the SVD decides.

    The decomposition is given (``M'M = I`` claimed), so the candidate is M itself:
    ``M = [[1, t], [0, 1]]`` has ``M'M - I = [[0, t], [t, t^2]]`` and ``1 + t^2`` rounds
    to 1 in any order of the sum, so its largest deviation is exactly t. The SVD's
    factor of M, the nearest orthonormal matrix, has ``-t/2`` where M has 0."""
    identity = (np.ones(2), np.eye(2))
    monkeypatch.setattr(np.linalg, "eigh", lambda matrix: identity)
    for t, kept in ((1e-12, True), (np.nextafter(1e-12, 1.0), False)):
        M = np.array([[1.0, t], [0.0, 1.0]])
        deviation = M.T @ M - np.eye(2)
        assert np.abs(deviation).max() == t  # exact: the bound is reached, not crossed
        F = polar_factor(M)
        if kept:
            assert np.array_equal(F, M)
        else:
            assert np.allclose(F, svd_polar(M), rtol=0, atol=1e-15) and F[1, 0] < 0


class _GivenBound(_Quadratic):
    """:class:`_Quadratic` with the eigenvalue bound eta given (any eta >= lambda_max(A)
    keeps GPI monotone)."""

    def __init__(self, A, B, eta):
        super().__init__(A, B)
        self.eta = eta

    @property
    def bound(self):
        return self.eta


def two_point_state(b):
    """F = [e1, e3] (n = 4, h = 2) with ``A = [[1, -1], [-1, 2]]`` on the first two
    coordinates (lambda_max 2.618...) and 0 on the others, eta = 4 and
    ``B = [(-3, b, 0, 0), 0]``: from F, GPI's next iterate is ``polar([(0, 1 + b, 0, 0),
    (0, 0, 4, 0)]) = [e2, e3]`` for ``1 + b`` a power of two. All values are short binary
    fractions, computed exactly; the polar factor takes the eigendecomposition of a
    diagonal ``M'M``."""
    A = np.zeros((4, 4))
    A[:2, :2] = [[1.0, -1.0], [-1.0, 2.0]]
    B = np.zeros((4, 2))
    B[:2, 0] = [-3.0, b]
    term = _GivenBound(A, B, 4.0)
    problem = Problem(X=np.arange(8.0).reshape(4, 2), coding=np.zeros((4, 2)),
                      n_clusters=2, objective=Objective([term]),
                      fields=registered_parts().fields, n_neighbors=1)
    return State(problem, F=np.eye(4)[:, [0, 2]]), term


def test_the_stopping_rule_stops_at_a_decrease_equal_to_its_bound():
    """``decrease <= tol (|value| + 1e-300)`` stops: with b = 0 the value goes from 7 at
    [e1, e3] to 2 at [e2, e3], a decrease of 5 = 2.5 * 2, so tol = 2.5 stops at [e2, e3]
    (no fixed point: the next iterate lowers the value), and a tol one ulp below 2.5
    goes on."""
    state, term = two_point_state(0.0)
    next_F = np.eye(4)[:, [1, 2]]
    assert (subproblem_value(term, state.F), subproblem_value(term, next_F)) == (7.0, 2.0)
    assert np.array_equal(EmbeddingBlock(tol=2.5).step(state).F, next_F)
    further = EmbeddingBlock(tol=np.nextafter(2.5, 0.0)).step(state).F
    assert subproblem_value(term, further) < 2.0


def test_a_zero_value_stops_on_the_absolute_floor():
    """At a value of exactly 0 the bound is ``tol * 1e-300`` (the floor that keeps the
    rule from asking for a decrease below 0): with b = 1 the value goes from 7 at
    [e1, e3] to 0 at [e2, e3], and tol = 1e301 (a bound of about 10) stops there; the
    iterate after it would lower the value further."""
    state, term = two_point_state(1.0)
    next_F = np.eye(4)[:, [1, 2]]
    assert (subproblem_value(term, state.F), subproblem_value(term, next_F)) == (7.0, 0.0)
    assert np.array_equal(EmbeddingBlock(tol=1e301).step(state).F, next_F)
    assert subproblem_value(term, EmbeddingBlock(max_iter=2, tol=0.0).step(state).F) < 0.0

# -- the sample weights ---------------------------------------------------------------


class _Counting:
    """A balance operator that counts its products and its low-precision copies."""

    def __init__(self, operator, log, precision="float64"):
        self.operator, self.log, self.precision = operator, log, precision

    def matvec(self, x):
        self.log.append(self.precision)
        return self.operator.matvec(x)

    def low_precision(self):
        return _Counting(self.operator.low_precision(), self.log, "float32")

    def __getattr__(self, name):
        return getattr(self.operator, name)


def counted_state(log, n=40, d=6):
    state = cause_fs_state(n, d, beta=1.0)
    make = state.problem.balance
    state.problem.balance = lambda *args: _Counting(make(*args), log)
    return state


def weights_block(**options):
    return SampleWeightsBlock(ProjectedGradientBackend(), **options)


def test_float32_precision_solves_with_the_low_precision_operator_only():
    """``precision="float32"`` makes the solve's products with the float32 operator (the
    float64 ones are the gradient shift at the warm start and the checks); ``float64``
    never uses it."""
    log = []
    weights_block(precision="float32", max_products=6).step(counted_state(log))
    assert log.count("float32") >= 6 and log.count("float64") <= 3
    log.clear()
    weights_block(precision="float64", max_products=6).step(counted_state(log))
    assert "float32" not in log and len(log) >= 6


def test_the_solve_gets_the_products_budget_and_reports_its_iterations():
    """``max_products`` reaches the solve (``info_``: its iterations, whether it
    converged, copied into the trace); None solves to the backend's tolerance."""
    budgeted = weights_block(max_products=3)
    budgeted.step(counted_state([]))
    assert budgeted.info_ == {"qp_iterations": 3, "qp_converged": False}
    exact = weights_block(max_products=None, precision="float64")
    exact.step(counted_state([]))
    assert exact.info_["qp_converged"] is True and exact.info_["qp_iterations"] > 3


class _Worse(QPBackend):
    """A broken backend: returns the feasible point of the largest objective (a vertex
    of the scaled simplex, where a convex quadratic is largest)."""

    name = "worse"

    def solve(self, qp, x0):
        vertices = qp.total * np.eye(qp.n)
        worst = max(vertices, key=qp.value)
        return QPResult(x=worst, value=qp.value(worst), n_iter=1, converged=True)


def test_a_float32_solve_that_is_worse_in_float64_is_not_taken():
    """The result of the float32 model is kept only if not worse than the warm start
    in float64: the block is a descent block whatever the backend returns."""
    state = cause_fs_state(30, 5, beta=1.0)
    exact = sample_weight_qp(state)
    worst = max(exact.total * np.eye(exact.n), key=exact.value)
    assert exact.value(worst) > exact.value(state.mu)  # the backend's answer is worse
    new = SampleWeightsBlock(_Worse(), precision="float32").step(state)
    assert np.array_equal(new.mu, state.mu)


class _Identity:
    """A balance operator H = I, exact in any precision; its float32 version is another
    object (so the block treats the solve as a float32 one and checks it in float64)."""

    def quad(self, v):
        return float(v @ v)

    def matvec(self, v):
        return np.array(v, dtype=float)

    def diagonal(self):
        return np.ones(self.n)

    def low_precision(self):
        return _Identity()


class _SumOfSquares(Term):
    """``1/2 mu'(I + H) mu`` with ``H = I`` given as a balance operator: a mu subproblem
    the same for every order of the samples."""

    name, reads, needs = "sum_of_squares", ("mu",), ("mu",)

    def value(self, state):
        return float(state.mu @ state.mu)

    def add_to_sample_weight_qp(self, state, system):
        system.add_diagonal(np.ones(state.problem.n_samples))
        system.add_balance(_Identity(), 1.0)


class _Reversed(QPBackend):
    """Returns the warm start in reverse order: another feasible point of the same value
    for a subproblem symmetric in the samples."""

    name = "reversed"

    def solve(self, qp, x0):
        return QPResult(x=x0[::-1].copy(), value=qp.value(x0[::-1]), n_iter=1,
                        converged=True)


def test_a_float32_solve_that_ties_the_warm_start_in_float64_is_taken():
    """"Kept only if it is not worse": a result of exactly the warm start's float64
    value is kept. The subproblem ``mu'mu`` is symmetric in the samples and
    mu = (0.5, 1.5, 1, 1) sums to n = 4 with short binary fractions: its reversal has
    the value 4.5 exactly, as the warm start."""
    n = 4
    problem = Problem(X=np.arange(2.0 * n).reshape(n, 2), coding=np.zeros((n, 2)),
                      n_clusters=2, objective=Objective([_SumOfSquares()]),
                      fields=registered_parts().fields, n_neighbors=1)
    state = State(problem, mu=np.array([0.5, 1.5, 1.0, 1.0]))
    exact = sample_weight_qp(state)
    assert exact.value(state.mu) == exact.value(state.mu[::-1]) == 4.5
    new = SampleWeightsBlock(_Reversed(), precision="float32").step(state)
    assert np.array_equal(new.mu, [1.0, 1.0, 1.5, 0.5])


def test_the_sample_weight_options_are_checked_by_name():
    with pytest.raises(InvalidParameterError, match=r"^part\.max_products=0: must be"):
        construct("part", SampleWeightsBlock, {"qp": ProjectedGradientBackend(),
                                               "max_products": 0})
    with pytest.raises(InvalidParameterError, match=r"^max_products=2\.5: must be"):
        SampleWeightsBlock(ProjectedGradientBackend(), max_products=2.5)  # not via construct
    with pytest.raises(InvalidParameterError, match=r"^part\.precision='half': must be one"):
        construct("part", SampleWeightsBlock, {"qp": ProjectedGradientBackend(),
                                               "precision": "half"})
    with pytest.raises(InvalidParameterError,
                       match=re.escape("part.qp=None: must be a QP backend (set by the "
                                       "engine from the qp setting)")):
        construct("part", SampleWeightsBlock, {"qp": None})
    with pytest.raises(InvalidParameterError, match=r"^part\.system='both': must be one"):
        construct("part", SelectionMatrixBlock, {"system": "both"})
    with pytest.raises(InvalidParameterError, match=r"^part\.tol=-1: must be a real"):
        construct("part", EmbeddingBlock, {"tol": -1})
    with pytest.raises(InvalidParameterError,
                       match=r"^part\.solver='lobpcg': must be one of 'auto', 'gpi', 'subspace'"):
        construct("part", EmbeddingBlock, {"solver": "lobpcg"})
    assert EmbeddingBlock(max_iter=0).max_iter == 0 and EmbeddingBlock(tol=0).tol == 0


def test_the_documented_defaults():
    """docs/MODEL.md: the mu solve is budgeted to 12 products in float32; the
    embedding's docstring: tol 1e-10, at most 200 GPI iterations up to 10,000 samples
    and 30 subspace steps above."""
    block = weights_block()
    assert (block.max_products, block.precision) == (12, "float32")
    documented = dict(re.findall(r"^    (\w+) : [^\n]*, default=(\S+)$", EmbeddingBlock.__doc__,
                                 flags=re.M))
    assert documented == {"max_iter": "None", "tol": "1e-10", "solver": '"auto"'}
    assert "None: 200 iterations or 30\n        steps" in EmbeddingBlock.__doc__
    default = EmbeddingBlock()
    assert (default.max_iter, default.tol, default.solver) == (None, 1e-10, "auto")
    assert default.resolved(10_000) == ("gpi", 200)
    assert default.resolved(10_001) == ("subspace", 30)
    assert EmbeddingBlock(max_iter=7, solver="gpi").resolved(50_000) == ("gpi", 7)


def test_the_block_gives_the_subspace_solver_the_operators_diagonal():
    """One subspace step of the block with B = 0 reaches the sum of the h lowest
    eigenvalues of V'AV, V spanning F and ``diag(A)^-1 (I - FF') AF`` (scipy's basis,
    written here): the block hands its system's diagonal to the preconditioner."""
    state, term = quadratic_state(n=30, seed=4, rhs=False)
    F, A = state.F, term.A
    direction = (A @ F - F @ (F.T @ (A @ F))) / np.diag(A)[:, None]
    V = scipy.linalg.orth(np.hstack([F, direction]))
    expected = np.linalg.eigvalsh(V.T @ A @ V)[:F.shape[1]].sum()
    step = EmbeddingBlock(max_iter=1, solver="subspace").step(state).F
    assert np.trace(step.T @ A @ step) == pytest.approx(expected, rel=1e-10)


def test_auto_takes_the_subspace_solver_above_subspace_n_samples(monkeypatch):
    """``solver="auto"`` resolves by the number of samples (F's rows), not by anything
    else: with SUBSPACE_N set to 11, a state of 12 samples and 3 columns runs the
    subspace solver, one of 11 GPI."""
    import causefs.blocks.descent.embedding as embedding

    monkeypatch.setattr(embedding, "SUBSPACE_N", 11)
    for n, solver in ((12, "subspace"), (11, "gpi")):
        state, _ = quadratic_state(n=n, seed=3)
        F = EmbeddingBlock(max_iter=3).step(state).F
        assert np.array_equal(F, EmbeddingBlock(max_iter=3, solver=solver).step(state).F)
        other = "gpi" if solver == "subspace" else "subspace"
        assert not np.allclose(F, EmbeddingBlock(max_iter=3, solver=other).step(state).F)


# -- the fused graph ------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 2])
def test_the_monotone_update_keeps_the_previous_graph_and_xi_in_play(seed):
    """``adaptive_update="monotone"`` gives the closed form the current G and xi (a
    column keeps its xi where the re-estimate would raise J); ``closed_form`` does not.
    The two differ on these states, so each wiring is seen."""
    state = cause_fs_state(40, 6, h=3, k=4, M=2, seed=seed)
    state = state.replace(xi=np.zeros(40))  # where a column's re-estimate may raise J
    cost = state.problem.objective.subproblem(GraphCost, state, "G", target="G")
    k = state.problem.n_neighbors
    kept = adaptive_graph(cost.points, k, cost.prior, "exact", (state.G, state.xi))
    fresh = adaptive_graph(cost.points, k, cost.prior, "exact")
    assert not np.allclose(kept[1], fresh[1])
    for update, (G, xi) in (("monotone", kept), ("closed_form", fresh)):
        new = FusedGraphBlock(update, neighbor_algorithm="exact").step(state)
        assert np.allclose(new.G.toarray(), G.toarray()) and np.allclose(new.xi, xi)


@pytest.mark.parametrize("update", ["monotone", "closed_form"])
def test_the_update_is_warm_started_from_the_graph_it_replaces(update, monkeypatch):
    """An approximate search starts from the current G (docs of
    :func:`causefs.budget.graphs.graph_cost`: an update is a local search warm-started
    from the graph it replaces); the monotone rule also gets (G, xi), the closed form
    nothing to keep; with no G yet, neither."""
    import causefs.blocks.descent.fused_graph as module

    calls = []

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return adaptive_graph(*args, **kwargs)

    monkeypatch.setattr(module, "adaptive_graph", spy)
    state = cause_fs_state(40, 6, h=3, k=4, M=2)
    FusedGraphBlock(update, neighbor_algorithm="approximate").step(state)
    args, kwargs = calls[-1]
    assert args[3] == "approximate" and kwargs["warm"][0] is state.G
    previous = args[4]
    if update == "monotone":
        assert previous[0] is state.G and previous[1] is state.xi
    else:
        assert previous is None
    FusedGraphBlock(update).step(state.replace(G=None, xi=None))
    args, kwargs = calls[-1]
    assert args[4] is None and kwargs["warm"] == [None]
