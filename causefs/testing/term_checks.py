"""The property check of an objective term (built-in or a plugin's): :func:`check_term`.

A term's value is compared with an independent computation the caller writes (from the
paper, a dense formula, a library routine); every part it adds to a subproblem is
compared with its own value, by differences along random directions:

* the W system (a majorizer): its gradient at the current W equals the term's
  (central differences), and it lies above the term at a distant point;
* the F system, the mu QP and a graph's cost (the term is exactly quadratic or linear in
  those variables): the change of the term along a direction equals the change of the
  subproblem's part, at two step lengths;
* a gradient: central differences of the value.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given

from ..model.subproblems import (
    EmbeddingSystem,
    GraphCost,
    Gradient,
    SampleWeightQP,
    SelectionSystem,
)
from .checks import _settings
from .strategies import states

#: the continuous variables a gradient is checked in
GRADIENT_VARIABLES = ("W", "F", "mu")


def _close(found: float, expected: float, scale: float, rtol: float, what: str) -> None:
    assert abs(found - expected) <= rtol * (scale + 1e-300), (
        f"{what}: {found!r} against {expected!r} (difference {abs(found - expected):.3g}, "
        f"allowed {rtol * scale:.3g})")


def _direction(rng, value: np.ndarray) -> np.ndarray:
    """A random direction of the value's size."""
    return rng.standard_normal(value.shape) * (np.abs(value).max() + 1.0)


def _slope(term, state, name, V, slope, rtol, what) -> None:
    """``slope`` (the derivative along V a subproblem claims) against central
    differences of the term's value."""
    x = np.asarray(getattr(state, name), dtype=float)
    h = 1e-6 * (np.abs(x).max() + 1.0) / (np.abs(V).max() + 1e-300)
    up, down = (term.value(state.replace(**{name: x + t * V})) for t in (h, -h))
    claimed, measured = slope * h, (up - down) / 2
    allowed = rtol * (abs(claimed) + abs(measured)) + 1e-9 * (abs(up) + abs(down))
    assert abs(claimed - measured) <= allowed + 1e-300, (
        f"term {term.name!r}: {what}: the change {claimed!r} it claims over a step along a "
        f"direction of {name}, against {measured!r} by central differences of its value")


def _check_gradient(term, state, rng, rtol) -> None:
    for name in GRADIENT_VARIABLES:
        if name not in term.inputs() or getattr(state, name) is None:
            continue
        gradient = Gradient(state, name)
        term.add_to_gradient(state, gradient)
        V = _direction(rng, np.asarray(getattr(state, name), dtype=float))
        _slope(term, state, name, V, float(np.sum(gradient.value * V)), rtol,
               f"its gradient in {name}")


def _check_selection_system(term, state, rng, rtol) -> None:
    system = SelectionSystem(state)
    term.add_to_selection_system(state, system)
    A = system.matrix()
    B = (system.rhs(system.weighted_data()) if system.data_rhs or system.matrix_rhs
         else np.zeros_like(state.W))

    def surrogate(W):
        return float(np.sum(W * (A @ W)) - 2.0 * np.sum(W * B))

    W0 = state.W
    V = _direction(rng, W0)
    _slope(term, state, "W", V, float(np.sum(2.0 * (A @ W0 - B) * V)), 1e-4,
           "its W system (a majorizer touches the term at the current W)")
    W1 = W0 + V
    rise = term.value(state.replace(W=W1)) - term.value(state)
    bound = surrogate(W1) - surrogate(W0)
    scale = abs(term.value(state)) + abs(surrogate(W1)) + abs(surrogate(W0))
    assert rise <= bound + 1e-9 * scale, (
        f"term {term.name!r}: its W system does not majorize it: the term rises by {rise!r}"
        f" but its W system by {bound!r} between the current W and another")


def _quadratic_changes(term, state, name, rng, change, rtol, what) -> None:
    """The term's change along a direction equals ``change(x, step)`` at two steps."""
    x = np.asarray(getattr(state, name), dtype=float)
    V = _direction(rng, x) * 0.1
    start = term.value(state)
    for t in (1.0, -0.5):
        moved = term.value(state.replace(**{name: x + t * V}))
        expected = change(x, t * V)
        _close(moved - start, expected, abs(moved) + abs(start) + abs(expected), rtol,
               f"term {term.name!r}: its change along a direction of {name} against {what}")


def _check_embedding_system(term, state, rng, rtol) -> None:
    system = EmbeddingSystem(state)
    term.add_to_embedding_system(state, system)
    B = system.rhs

    def q(F):
        return float(np.sum(F * system.apply(F)) + system.identity * np.sum(F * F)
                     - 2.0 * np.sum(F * B))

    _quadratic_changes(term, state, "F", rng, lambda F, V: q(F + V) - q(F), rtol,
                       "its F system Tr(F'AF) - 2 Tr(F'B)")
    n = state.problem.n_samples
    for operator, bound in system.operators:
        dense = (operator.toarray() if sp.issparse(operator) else np.asarray(operator)
                 if isinstance(operator, np.ndarray) else operator @ np.eye(n))
        largest = np.linalg.eigvalsh(0.5 * (dense + dense.T)).max()
        assert largest <= bound * (1 + 1e-9) + 1e-12, (
            f"term {term.name!r}: an operator of its F system has eigenvalue {largest!r} "
            f"above the bound {bound!r} it declares")


def _check_sample_weight_qp(term, state, rng, rtol) -> None:
    qp = SampleWeightQP(state)
    term.add_to_sample_weight_qp(state, qp)

    def q(mu):
        value = 0.5 * mu @ (qp.diagonal * mu) + qp.linear @ mu
        if qp.sparse is not None:
            value += 0.5 * mu @ (qp.sparse @ mu)
        if qp.balance is not None:
            value += 0.5 * qp.balance_weight * qp.balance.quad(mu)
        return float(value)

    _quadratic_changes(term, state, "mu", rng, lambda mu, V: q(mu + V) - q(mu), rtol,
                       "its mu QP 1/2 mu'P mu + q'mu")


def _graphs(state):
    """The graphs of the state: (target, index, graph)."""
    found = [("S", m, S) for m, S in enumerate(state.S or ())]
    return found + ([("G", None, state.G)] if state.G is not None else [])


def _with_graph(state, target, index, graph):
    if target == "G":
        return state.replace(G=graph)
    return state.replace(S=tuple(graph if m == index else S for m, S in enumerate(state.S)))


def _check_graph_costs(term, state, rng, rtol) -> None:
    n = state.problem.n_samples
    for target, index, A in _graphs(state):
        cost = GraphCost(state, target, index)
        term.add_to_graph_cost(state, cost)
        # a perturbation on the graph's support and on as many new off-diagonal entries
        E = sp.random(n, n, density=min(1.0, 3.0 / n), random_state=rng) + abs(A)
        E = sp.csc_array(E - sp.diags_array(E.diagonal()))
        E.data = rng.standard_normal(E.data.size)
        A = sp.csc_array(A)
        start = term.value(state)
        for t in (1.0, -0.5):
            moved = term.value(_with_graph(state, target, index, A + t * E))
            expected = _graph_change(cost, A, t * E)
            where = f"{target}[{index}]" if target == "S" else target
            _close(moved - start, expected, abs(moved) + abs(start) + abs(expected), rtol,
                   f"term {term.name!r}: its change along a direction of {where} against "
                   "its graph cost")


def _graph_change(cost: GraphCost, A, E) -> float:
    """``sum_ij E_ij cost_ij + sum_j r_j (||A_.j + E_.j||^2 - ||A_.j||^2)``."""
    coo = sp.coo_array(E)
    change = 0.0
    if cost._points:
        Y = cost.points
        diff = Y[coo.row] - Y[coo.col]
        change += float(coo.data @ (0.5 * np.einsum("ij,ij->i", diff, diff)))
    if cost.prior is not None:
        change -= float(sp.csc_array(cost.prior).multiply(E).sum())
    for weights in cost.regularizers:
        new, old = sp.csc_array(A + E), sp.csc_array(A)
        change += float(weights @ (np.asarray(new.multiply(new).sum(axis=0)).ravel()
                                   - np.asarray(old.multiply(old).sum(axis=0)).ravel()))
    return change


_SUBPROBLEM_CHECKS = {
    SelectionSystem: _check_selection_system,
    EmbeddingSystem: _check_embedding_system,
    SampleWeightQP: _check_sample_weight_qp,
    GraphCost: _check_graph_costs,
    Gradient: _check_gradient,
}


def check_term(term, reference, *, strategy=None, max_examples: int | None = None,
               rtol: float = 1e-6) -> None:
    """Property test of an objective term on random valid states.

    Asserts that ``term.value(state)`` equals ``reference(state)``, an independent
    computation of the term the caller writes (not the term's own code), and that every
    part the term adds to a subproblem (:mod:`causefs.model.subproblems`) agrees with its
    value (see the module's text).

    Parameters
    ----------
    term : Term
    reference : callable or None
        ``reference(state) -> float``: the term's value, computed another way. None
        checks only that the parts agree with the value (what a suite that knows no
        formula of the term, as one parametrized over every registered term, can do).
    strategy : hypothesis strategy of State, optional
        Defaults to :func:`~causefs.testing.strategies.states` with granular graphs or
        without; a term that reads variables of its own draws them with
        ``states(extra=...)``.
    max_examples : int, optional
        Defaults to the current hypothesis profile's.
    rtol : float
        Relative tolerance of the comparisons.
    """
    strategy = strategy if strategy is not None else states(granular=None)
    kinds = [kind for kind in _SUBPROBLEM_CHECKS if term.contributes_to(kind)]

    @_settings(max_examples)
    @given(strategy)
    def property_(state):
        if not term.active:  # a weight of 0: the objective counts it as 0, unevaluated
            return
        value = term.value(state)
        assert np.isfinite(value), f"term {term.name!r}: its value is {value!r}"
        if reference is not None:
            expected = float(reference(state))
            _close(value, expected, abs(value) + abs(expected), rtol,
                   f"term {term.name!r}: its value against the reference computation")
        rng = np.random.default_rng(0)
        for kind in kinds:
            _SUBPROBLEM_CHECKS[kind](term, state, rng, 1e-4 if kind is Gradient else rtol)

    property_()
