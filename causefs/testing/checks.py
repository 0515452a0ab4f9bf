"""Property checks for blocks, kernels and QP backends (built-in or third-party).

Each ``check_*`` runs a hypothesis property over random valid inputs and raises
``AssertionError`` (hypothesis reports the shrunk counterexample) when the piece breaks
its contract. They run under the current hypothesis profile: load ``causefs-ci``
(derandomized, the same examples every run) or ``causefs-dev`` (fresh examples, more of
them) from :mod:`causefs.testing.profiles`; ``max_examples`` overrides the profile's.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ..core.contracts import (
    BlockContractError,
    check_descent,
    check_finite,
    check_purity,
    check_returned_state,
    check_writes,
    fingerprints,
)
from ..core.state import State
from ..qp import QPResult, SimplexQP
from ..qp.gradient_projection_cg import GradientProjectionCGBackend
from .strategies import problems, simplex_qps, states


def _settings(max_examples):
    """The current hypothesis profile (see :mod:`causefs.testing.profiles`), with
    ``max_examples`` when given."""
    return settings(max_examples=max_examples) if max_examples is not None else settings()


def _close(a, b, rtol=1e-10) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_close(x, y, rtol) for x, y in zip(a, b))
    if sp.issparse(a):
        a, b = a.toarray(), b.toarray()
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=rtol * (np.abs(a).max() + 1e-300))


def check_state(state: State) -> None:
    """Assert that every variable set in ``state`` has the shape its field declares and
    meets the field's constraint (its ``check``; docs/MODEL.md, "Variables")."""
    for name, field in state.fields.items():
        if field.role != "variable":
            continue
        value = getattr(state, name)
        if value is None:
            continue
        expected = field.shape_in(state.problem)
        if expected is not None:
            for v in (value if field.sequence else (value,)):
                assert np.shape(v) == expected, \
                    f"{name} has shape {np.shape(v)}, expected {expected} ({field.doc})"
        if field.check is not None:
            field.check(value, state)


def check_step(block, state: State, rtol: float = 1e-9) -> State:
    """Run one step of ``block`` on ``state`` and assert the block contract.

    The contract the scheduler checks with ``check="strict"``
    (:mod:`causefs.core.contracts`: a new State of the same problem, every declared write
    set and finite, only declared writes changed, the input untouched, no rise of the
    problem's objective for a descent block, with re-estimated adaptive parameters
    substituted into both sides), plus valid variables (:func:`check_state`) and
    determinism.
    """
    prints = fingerprints(state)
    new = block.step(state)
    try:
        check_returned_state(block, state, new)
        check_writes(block, new)
        check_finite(block, state, new)
        check_purity(block, state, prints, new)
        check_descent(block, state.problem.objective, state, new, rtol)
    except BlockContractError as exc:
        raise AssertionError(str(exc)) from exc
    check_state(new)
    again = block.step(state)
    for field in block.writes:
        assert _close(getattr(new, field), getattr(again, field)), \
            f"{block.name}.step is not deterministic in {field!r}"
    return new


def check_block(block, *, strategy=None, max_examples: int | None = None,
                rtol: float = 1e-9) -> None:
    """Property test of a block on random valid states (see :func:`check_step`).

    Init blocks get a state holding only the variables they read.

    Parameters
    ----------
    block : Block
    strategy : hypothesis strategy of State, optional
        Defaults to :func:`~causefs.testing.strategies.states` (CAUSE-FS's objective
        with random weights; a block is checked against the objective of its states'
        problem: ``states(problem_options)``/``problems(extra_terms=...)`` adds terms).
    max_examples : int, optional
        Defaults to the current hypothesis profile's.
    rtol : float
        Allowed relative rise of the objective (rounding).
    """
    strategy = strategy if strategy is not None else states()

    @_settings(max_examples)
    @given(strategy)
    def property_(state):
        if block.kind == "init":  # an init block runs before the variables it does not read
            keep = set(block.reads) | set(block.optional_reads)
            state = State(state.problem, **{name: value for name, value in
                                            state.values.items() if name in keep})
        check_step(block, state, rtol)

    property_()


@st.composite
def _kernel_cases(draw, kernel):
    problem = draw(problems(kernel=kernel))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    d = problem.n_features
    K = (rng.random((d, d)) < draw(st.sampled_from([0.0, 0.3, 1.0]))) & ~np.eye(d, dtype=bool)
    v = rng.standard_normal(problem.n_samples)
    return problem, K, v, seed


def check_kernel(kernel, *, max_examples: int | None = None, rtol: float = 1e-8) -> None:
    """Property test of an MMD kernel's balance operator.

    ``dense()`` is symmetric positive semidefinite; ``quad``, ``matvec`` and ``dense``
    agree; the operator is reproducible for a seed; empty confounder sets give 0.
    """

    @_settings(max_examples)
    @given(_kernel_cases(kernel))
    def property_(case):
        problem, K, v, seed = case
        op = kernel.balance_operator(problem.X, problem.coding, K, seed=seed)
        H = np.asarray(op.dense(), dtype=float)
        n = problem.n_samples
        assert H.shape == (n, n), f"dense() has shape {H.shape}, expected {(n, n)}"
        scale = np.abs(H).max() + 1e-300
        assert np.allclose(H, H.T, atol=rtol * scale), "balance Hessian is not symmetric"
        lowest = np.linalg.eigvalsh(0.5 * (H + H.T)).min()
        assert lowest >= -1e-8 * scale, f"balance Hessian is not PSD (eigenvalue {lowest:.3g})"
        quad = op.quad(v)
        reference = float(v @ H @ v)
        tolerance = rtol * scale * float(v @ v) + 1e-300
        assert abs(quad - reference) <= tolerance, f"quad(v) = {quad} but v'Hv = {reference}"
        assert np.allclose(op.matvec(v), H @ v, atol=rtol * scale * np.abs(v).sum()), \
            "matvec(v) differs from dense() @ v"
        diagonal = op.diagonal()
        if diagonal is not None:
            assert np.allclose(diagonal, np.diag(H), atol=rtol * scale), \
                "diagonal() differs from the diagonal of dense()"
        again = kernel.balance_operator(problem.X, problem.coding, K, seed=seed)
        assert abs(again.quad(v) - quad) <= tolerance, "operator not reproducible for a seed"
        if not K.any():
            assert abs(quad) <= tolerance, "empty confounder sets must give a zero balance term"

    property_()


def reference_optimum(qp: SimplexQP, max_rounds: int = 100) -> float:
    """The QP's optimal value, certified by the KKT conditions (small dense problems).

    Starts from an accurate iterative solution, then runs a primal-dual active-set
    iteration on the support: solve the KKT system of the support, drop weights that
    come out negative, add zeros whose multiplier is negative, until the KKT conditions
    hold. Falls back to the Frank-Wolfe lower bound ``f(x) - gap(x)`` if they never do.
    """
    P, q, total = qp.dense(), qp.linear, qp.total
    x0 = np.full(qp.n, total / qp.n)
    x = GradientProjectionCGBackend(rtol=1e-14, max_iter=100_000).solve(qp, x0).x
    support = x > 1e-9 * x.max()
    scale = np.abs(P).max() * total + np.abs(q).max() + 1e-300
    for _ in range(max_rounds):
        idx = np.flatnonzero(support)
        m = idx.size
        kkt = np.zeros((m + 1, m + 1))
        kkt[:m, :m] = P[np.ix_(idx, idx)]
        kkt[:m, m] = kkt[m, :m] = 1.0
        rhs = np.concatenate([-q[idx], [total]])
        solution = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
        candidate = np.zeros(qp.n)
        candidate[idx] = solution[:m]
        multipliers = P @ candidate + q + solution[m]  # g - theta; 0 on the support
        if candidate[idx].min() < -1e-12 * total:
            support[idx[np.argmin(candidate[idx])]] = False
        elif (~support).any() and multipliers[~support].min() < -1e-12 * scale:
            outside = np.flatnonzero(~support)
            support[outside[np.argmin(multipliers[outside])]] = True
        else:
            return qp.value(np.maximum(candidate, 0.0))
    Px = qp.matvec(x)
    return qp.value(x, Px) - qp.frank_wolfe_gap(x, Px + q)


def check_qp_backend(backend, *, max_examples: int | None = None, rtol: float = 1e-6) -> None:
    """Property test of a QP backend on random convex simplex QPs.

    The result is feasible, reports its own objective, never exceeds the warm start, and
    is within ``rtol`` (relative to the objective's scale) of the KKT-certified optimum.
    Given a budget (``SimplexQP.max_products``), a solve asks the balance operator for no
    more products than the backend declares (:meth:`QPBackend.products`; a quadratic
    form counts as half a product): the time estimate and the memory guard rely on it.
    """

    @st.composite
    def cases(draw):
        qp = draw(simplex_qps())
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        return qp, rng.dirichlet(np.ones(qp.n)) * qp.total

    @_settings(max_examples)
    @given(cases())
    def property_(case):
        qp, x0 = case
        result = backend.solve(qp, x0)
        assert isinstance(result, QPResult), "solve must return a QPResult"
        x = result.x
        assert x.shape == (qp.n,) and np.all(x >= 0), "solution must be non-negative, shape (n,)"
        assert abs(x.sum() - qp.total) <= 1e-9 * qp.total, f"sum(x) = {x.sum()}, expected {qp.total}"
        value = qp.value(x)
        scale = abs(0.5 * x @ qp.matvec(x)) + abs(qp.linear @ x) + 1e-300
        assert abs(result.value - value) <= 1e-9 * scale, "QPResult.value is not the objective at x"
        assert value <= qp.value(x0) + 1e-12 * scale, "the solution is worse than the warm start"
        optimum = reference_optimum(qp)
        assert value - optimum <= rtol * scale, (
            f"objective {value!r} is {(value - optimum) / scale:.3g} (relative) above the "
            f"certified optimum {optimum!r}"
        )

    @_settings(max_examples)
    @given(cases(), st.integers(1, 15))
    def budget_property(case, budget):
        qp, x0 = case
        counted = CountedBalance(qp.balance)
        qp = dataclasses.replace(qp, balance=counted, max_products=budget)
        backend.solve(qp, x0)
        declared = backend.products(budget)
        assert counted.products <= declared, (
            f"a solve given max_products={budget} made {counted.products:g} products with "
            f"the balance operator; products({budget}) declares {declared:g} (a backend "
            "that makes products with P overrides QPBackend.products to say how many)")

    property_()
    budget_property()


class CountedBalance:
    """A balance operator that counts what is asked of it: a product as one, a quadratic
    form as half of one (the unit of :meth:`~causefs.qp.QPBackend.products`).

    Parameters
    ----------
    operator : balance operator
        The operator counted (every other attribute is its own).
    counted : list, optional
        Where the counts are appended; its low-precision copy appends to the same list.
    """

    def __init__(self, operator, counted: list | None = None):
        self.operator, self.counted = operator, [] if counted is None else counted

    @property
    def products(self) -> float:
        return float(sum(self.counted))

    def matvec(self, v):
        self.counted.append(1.0)
        return self.operator.matvec(v)

    def quad(self, v):
        self.counted.append(0.5)
        return self.operator.quad(v)

    def low_precision(self):
        return CountedBalance(self.operator.low_precision(), self.counted)

    def __getattr__(self, name):
        return getattr(self.operator, name)
