"""Objective terms: every registered term passes check_term, the built-in ones against dense
formulas written from the paper; check_term catches terms that are wrong; the engine
refuses a schedule whose descent blocks do not account for a term."""

import numpy as np
import pytest
from hypothesis import given, settings
import scipy.sparse as sp

from causefs import CauseFS, ScheduleError
from causefs.blocks import Block
from causefs.core.state import Field
from causefs.engine import build_parts
from causefs.model.settings import DEFAULTS
from causefs.plugins import available, get_term, hookimpl, register_plugin, unregister_plugin
from causefs.terms import (
    BalanceTerm,
    FusedSmoothnessTerm,
    FusionTerm,
    GranularGraphsTerm,
    RegressionTerm,
    SparsityTerm,
    Term,
)
from causefs.testing import check_term, states

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)


def laplacian(A):
    A = A.toarray() if sp.issparse(A) else A
    sym = 0.5 * (A + A.T)
    return np.diag(sym.sum(axis=1)) - sym


def dense(A):
    return A.toarray() if sp.issparse(A) else np.asarray(A)


def adjusted(state):
    """X - Z Theta, written out (the data the model fits)."""
    p = state.problem
    return p.X if state.Theta is None else p.X - p.Z @ state.Theta


# paper eq. 3.5, term by term, dense and with loops (docs/MODEL.md, "Objective")
REFERENCES = {
    "regression": (RegressionTerm(alpha=0.7), lambda s: 0.7 * np.sum(
        (np.diag(s.mu) @ adjusted(s) @ s.W - s.F) ** 2)),
    "fused_smoothness": (FusedSmoothnessTerm(), lambda s: np.trace(
        s.F.T @ laplacian(s.G) @ s.F)),
    "sparsity": (SparsityTerm(lam=0.3, eps=1e-6), lambda s: 0.3 * sum(
        np.sqrt(s.W[f] @ s.W[f] + 1e-6) for f in range(s.W.shape[0]))),
    "granular_graphs": (GranularGraphsTerm(), lambda s: sum(
        np.trace(s.W.T @ np.diag(s.groups == m) @ (np.diag(s.mu) @ adjusted(s)).T
                 @ laplacian(S) @ np.diag(s.mu) @ adjusted(s) @ np.diag(s.groups == m) @ s.W)
        + sum(s.gamma[m][j] * np.sum(dense(S)[:, j] ** 2) for j in range(S.shape[1]))
        for m, S in enumerate(s.S or ()))),
    "fusion": (FusionTerm(), lambda s: sum(s.xi[j] * np.sum(dense(s.G)[:, j] ** 2)
                                           for j in range(s.G.shape[1]))
               - sum(s.nu[m] * np.sum(dense(s.G) * dense(S)) for m, S in enumerate(s.S or ()))),
    "balance": (BalanceTerm(beta=0.05), lambda s: 0.05 * sum(
        (s.mu * s.problem.coding[:, r]) @ s.problem.X[:, s.K[:, r]]
        @ s.problem.X[:, s.K[:, r]].T @ (s.mu * s.problem.coding[:, r])
        for r in range(s.problem.n_features))),
}


def test_every_builtin_term_has_a_reference():
    assert set(REFERENCES) == {cls.name for cls in (
        RegressionTerm, FusedSmoothnessTerm, SparsityTerm, GranularGraphsTerm, FusionTerm,
        BalanceTerm)}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_builtin_terms_equal_the_paper_and_their_parts_their_values(name):
    term, reference = REFERENCES[name]
    check_term(term, reference, strategy=states(granular=None), max_examples=25)


@pytest.mark.parametrize("name", available("term"))
def test_every_registered_term_adds_what_its_value_says(name):
    """A plugin's term is tested for free: its parts against differences of its value."""
    check_term(get_term(name)(), None, max_examples=10)


# ---- check_term can fail ---------------------------------------------------------------

class WrongGram(RegressionTerm):
    """The W system counts the regression twice."""

    def add_to_selection_system(self, state, system):
        system.add_data_gram(2 * self.alpha)
        system.add_data_rhs(self.alpha, state.F)


class WrongValue(SparsityTerm):
    def value(self, state):
        return 1.01 * super().value(state)


class WrongGradient(SparsityTerm):
    def add_to_gradient(self, state, gradient):
        gradient.add(self.lam * state.W)


class NotAMajorizer(SparsityTerm):
    """D at half its value: tangent in the wrong place and below the term."""

    def add_to_selection_system(self, state, system):
        super().add_to_selection_system(state, system)
        system.diagonals[-1] = 0.5 * system.diagonals[-1]


class WrongPrior(FusionTerm):
    """The prior of S[m] with the wrong sign."""

    def add_to_graph_cost(self, state, cost):
        if cost.target == "S":
            cost.add_prior(-state.nu[cost.index] * state.G)
        else:
            super().add_to_graph_cost(state, cost)


class WrongBalanceWeight(BalanceTerm):
    def add_to_sample_weight_qp(self, state, qp):
        qp.add_balance(state.problem.balance_operator(state.K), self.beta)


class LooseBound(FusedSmoothnessTerm):
    """A Laplacian with a bound below its largest eigenvalue (GPI then may rise)."""

    def add_to_embedding_system(self, state, system):
        super().add_to_embedding_system(state, system)
        if system.operators:
            operator, bound = system.operators[-1]
            system.operators[-1] = (operator, 0.1 * bound)


@pytest.mark.parametrize("term, reference, message", [
    (WrongGram(alpha=1.0), None, "its W system"),
    (WrongValue(), REFERENCES["sparsity"][1], "its value against the reference"),
    (WrongGradient(), None, "its gradient in W"),
    (NotAMajorizer(), None, "its W system"),
    (WrongPrior(), None, "against its graph cost"),
    (WrongBalanceWeight(beta=0.5), None, "its mu QP"),
    (LooseBound(), None, "above the bound"),
])
def test_check_term_catches_a_wrong_term(term, reference, message):
    with pytest.raises(AssertionError, match=message):
        check_term(term, reference, strategy=states(granular=True), max_examples=15)


# ---- the engine checks the blocks against the schedule's terms -------------------------

class Curvature(Term):
    """A term on W that adds nothing to the W subproblem (a plugin author's slip)."""

    name = "curvature_of_w"
    reads = ("W",)

    def value(self, state):
        return float(np.sum(state.W ** 4))


class CurvaturePlugin:
    @hookimpl
    def causefs_register_terms(self, registry):
        registry.add_term(Curvature)


@pytest.fixture
def curvature():
    plugin = CurvaturePlugin()
    register_plugin(plugin, name="curvature")
    yield plugin
    unregister_plugin(plugin)


def test_a_term_that_a_descent_block_cannot_descend_is_refused_before_the_fit(curvature):
    terms = ["regression", "fused_smoothness", "sparsity", "curvature_of_w"]
    schedule = {"name": "quartic", "init": ["uniform_weights", "initial_fused_graph",
                                            "spectral_embedding", "initial_selection"],
                "loop": ["selection_matrix", "embedding"], "terms": terms}
    with pytest.raises(ScheduleError, match=r"term 'curvature_of_w' depends on \['W'\], which "
                                            r"descent block 'selection_matrix' updates, but "
                                            r"adds nothing to its subproblem "
                                            r"\(SelectionSystem: a method add_to_selection_sys"):
        build_parts(DEFAULTS.replace(schedule=schedule))
    # a block derived for other terms is refused too; one that evaluates J itself is not
    for derived_for, refused in ((("regression",), True), ("*", False)):
        shrink = type("Shrink", (Block,), {
            "name": "shrink", "kind": "descent", "reads": ("W",), "writes": ("W",),
            "derived_for": derived_for, "step": lambda self, s: s})()
        spec = {**schedule, "loop": [shrink, "embedding"]}
        if refused:
            with pytest.raises(ScheduleError, match="derived for the terms"):
                build_parts(DEFAULTS.replace(schedule=spec))
        else:
            build_parts(DEFAULTS.replace(schedule=spec))


# ---- a variable of a plugin's own --------------------------------------------------------

SCALE = Field("scale", (), "a plugin's variable: a scalar the W block's output is "
              "measured by", check=lambda value, state: None)


class ScaleBlock(Block):
    """A structural block writing a variable no built-in part knows."""

    name = "scale_of_w"
    kind = "structural"
    reads = ("W",)
    writes = ("scale",)
    fields = (SCALE,)

    def step(self, state):
        return state.replace(scale=np.asarray(np.abs(state.W).max()))


class ScaledSparsity(Term):
    """``weight * scale * ||W||_F^2``: reads the plugin's variable."""

    name = "scaled_ridge"
    weighted_by = "weight"
    reads = ("W", "scale")

    def __init__(self, weight: float = 1e-3):
        self.weight = weight

    def value(self, state):
        scale = 1.0 if state.scale is None else float(state.scale)
        return self.weight * scale * float(np.sum(state.W ** 2))

    def add_to_selection_system(self, state, system):
        scale = 1.0 if state.scale is None else float(state.scale)
        system.add_diagonal(np.full(state.problem.n_features, self.weight * scale))


class ScalePlugin:
    @hookimpl
    def causefs_register_blocks(self, registry):
        registry.add_block(ScaleBlock)

    @hookimpl
    def causefs_register_terms(self, registry):
        registry.add_term(ScaledSparsity)


def test_a_plugin_declares_a_variable_of_its_own_and_a_term_reads_it(blobs):
    plugin = ScalePlugin()
    register_plugin(plugin, name="scale")
    try:
        schedule = {"name": "scaled", "init": ["uniform_weights", "initial_fused_graph",
                                               "spectral_embedding", "initial_selection"],
                    "loop": ["selection_matrix", "embedding", "scale_of_w"],
                    "terms": ["regression", "fused_smoothness", "sparsity",
                              {"name": "scaled_ridge", "weight": 0.01}]}
        est = CauseFS(n_clusters=3, schedule=schedule, max_iter=3, check="strict",
                      random_state=0).fit(blobs[0])
        values = [r["terms"]["scaled_ridge"] for r in est.trace_ if r["terms"]]
        assert values and all(np.isfinite(values))
        assert {"name": "scaled_ridge", "weight": 0.01} in est.terms_
    finally:
        unregister_plugin(plugin)


@settings(max_examples=10, deadline=None)
@given(states(granular=True))
def test_the_graph_terms_are_zero_and_add_nothing_without_their_graph(state):
    """Docstrings: ``Tr(F' L_G F)`` and the fusion term are 0 without G; the fusion term
    without xi is the granular graphs' agreement alone."""
    from causefs.model.subproblems import Gradient

    without_G = state.replace(G=None)
    assert FusedSmoothnessTerm().value(without_G) == 0.0
    assert FusionTerm().value(without_G) == 0.0
    gradient = Gradient(without_G, "F")
    FusedSmoothnessTerm().add_to_gradient(without_G, gradient)
    assert not np.any(gradient.value)
    no_xi = state.replace(xi=None)
    expected = -sum(state.nu[m] * np.sum(dense(state.G) * dense(S))
                    for m, S in enumerate(state.S or ()))
    assert FusionTerm().value(no_xi) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@settings(max_examples=10, deadline=None)
@given(states(granular=True))
def test_a_group_of_zero_weight_gives_its_graph_no_prior(state):
    """The prior of S[m] is nu_m G (eq. S.5): none at all for nu_m = 0, so that G's
    support does not join the candidates of a graph it does not weigh on."""
    from causefs.model.subproblems import GraphCost

    if not state.S:
        return
    nu = np.zeros(len(state.S))
    nu[-1] = 1.0
    weighted = state.replace(nu=nu)
    for m in range(len(state.S)):
        cost = GraphCost(weighted, "S", m)
        FusionTerm().add_to_graph_cost(weighted, cost)
        if nu[m] == 0:
            assert cost.prior is None
        else:
            np.testing.assert_allclose(dense(cost.prior), dense(state.G))


def test_a_term_declares_what_it_reads_and_what_weighs_it():
    """A concrete term is checked when its class is made: its needs among its reads, its
    weight among its constructor's keywords; an abstract one is not checked yet."""

    class Weighted(Term):
        name, weighted_by, reads, needs = "weighted_ok", "weight", ("W",), ("W",)

        def __init__(self, weight: float = 1.0):
            self.weight = weight

        def value(self, state):
            return 0.0

    assert Weighted(weight=0).active is False and Weighted().active

    with pytest.raises(TypeError, match=r"^Needy\.needs must be a subset of reads$"):
        type("Needy", (Term,), {"name": "needy", "reads": ("W",), "needs": ("F",),
                                "value": lambda self, state: 0.0})
    with pytest.raises(TypeError, match=r"^Unweighed\.weighted_by names 'weight', which its "
                                        r"constructor does not take$"):
        type("Unweighed", (Term,), {"name": "unweighed", "weighted_by": "weight",
                                    "value": lambda self, state: 0.0})

    class Abstract(Term):  # value still abstract: its needs are a subclass's business
        needs = ("F",)

    assert Abstract.needs == ("F",)


def test_a_term_adds_to_the_subproblems_whose_hook_it_defines():
    from causefs.model.subproblems import (
        EmbeddingSystem,
        Gradient,
        GraphCost,
        SampleWeightQP,
        SelectionSystem,
    )

    assert RegressionTerm.subproblems() == [SelectionSystem, EmbeddingSystem, SampleWeightQP,
                                            Gradient]
    assert FusionTerm.subproblems() == [GraphCost]
    assert set(FusedSmoothnessTerm.subproblems()) == {EmbeddingSystem, GraphCost, Gradient}


@settings(max_examples=5, deadline=None)
@given(states())
def test_the_balance_term_needs_the_confounder_sets(state):
    with pytest.raises(ValueError, match=r"^the balance term \(beta != 0\) needs the "
                                         r"confounder sets K$"):
        BalanceTerm(beta=1.0).value(state.replace(K=None))


def test_a_term_of_weight_zero_reads_and_needs_nothing():
    off, on = BalanceTerm(beta=0.0), BalanceTerm(beta=0.5)
    assert off.inputs() == () and off.needed() == () and not off.active
    assert on.inputs() == BalanceTerm.reads and on.needed() == BalanceTerm.needs
    assert FusionTerm().inputs() == FusionTerm.reads  # unweighted: always active
