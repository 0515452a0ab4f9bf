"""The objective as a sum of terms (:class:`causefs.model.objective.Objective`) on a
problem of two numbers, with terms written here: its value term by term, what it needs,
the cache, a switched-off term, and the subproblems its terms assemble. The built-in
terms against the paper: tests/test_terms.py."""

import numpy as np
import pytest

from causefs.core.state import Field, State
from causefs.model.objective import Objective, objective
from causefs.model.subproblems import Gradient, SelectionSystem
from causefs.terms import Term


def _twice(state):
    return 2.0 * state.x


class _Toy:
    """x and y, and d = 2 x derived from x."""

    fields = {"x": Field("x", doc="a vector"), "y": Field("y", doc="another"),
              "d": Field("d", role="derived", derive=_twice, inputs=("x",), needs=("x",),
                         doc="2 x")}


class _Counted(Term):
    """A term that counts its evaluations."""

    def __init__(self):
        self.calls = 0

    def value(self, state) -> float:
        self.calls += 1
        return self.evaluate(state)


class _Squares(_Counted):
    """``weight * ||x||^2``; its gradient in x is ``2 weight x``."""

    name, weighted_by, reads, needs = "squares", "weight", ("x",), ("x",)

    def __init__(self, weight=1.0):
        super().__init__()
        self.weight = weight

    def evaluate(self, state):
        return self.weight * float(state.x @ state.x)

    def add_to_gradient(self, state, gradient):
        if gradient.variable == "x":
            gradient.add(2.0 * self.weight * state.x)


class _Sums(_Counted):
    """``sum(y) - sum(x)``, y optional; its gradient in x is ``-1``."""

    name, reads, needs = "sums", ("y", "x"), ("y", "x")

    def evaluate(self, state):
        return float(np.sum(state.y) - np.sum(state.x))

    def add_to_gradient(self, state, gradient):
        if gradient.variable == "x":
            gradient.add(-np.ones_like(state.x))


class _OfD(_Counted):
    """``sum(d)`` of the derived d = 2 x; adds to no subproblem."""

    name, reads, needs = "of_d", ("d",), ("d",)

    def evaluate(self, state):
        return float(np.sum(state.d))


X, Y = np.array([1.0, 2.0]), np.array([10.0])


def test_j_is_the_sum_of_its_terms_each_named():
    value = Objective([_Squares(3.0), _Sums(), _OfD()])(State(_Toy(), x=X, y=Y))
    assert value.terms == {"squares": 15.0, "sums": 7.0, "of_d": 6.0}
    assert value.total == 28.0 and isinstance(value.total, float)


def test_it_needs_what_its_active_terms_need_in_their_order_each_once():
    J = Objective([_Squares(), _Sums(), _OfD()])
    assert J.needs == ("x", "y", "d") and J.names == ("squares", "sums", "of_d")
    assert Objective([_Squares(0.0), _Sums()]).needs == ("y", "x")
    with pytest.raises(ValueError) as error:
        J(State(_Toy(), x=X))
    assert str(error.value) == "the objective needs ['y'], which are not set yet"


def test_a_term_of_weight_0_is_0_and_never_evaluated():
    off = _Squares(0.0)
    value = Objective([off, _Sums()])(State(_Toy(), x=X, y=Y))
    assert value.terms == {"squares": 0.0, "sums": 7.0} and off.calls == 0


def test_each_term_is_named_once():
    with pytest.raises(ValueError) as error:
        Objective([_Squares(), _Sums(), _Squares(2.0), _Sums(), _OfD()])
    assert str(error.value) == "an objective names each term once; ['squares', 'sums'] twice"


def test_a_term_is_found_by_its_name():
    squares = _Squares()
    J = Objective([_Sums(), squares])
    assert J.term("squares") is squares and J.term("other") is None


def test_the_cache_reuses_a_term_while_its_inputs_are_the_same_objects():
    squares, sums, of_d = _Squares(), _Sums(), _OfD()
    J, cache = Objective([squares, sums, of_d]), {}
    state = State(_Toy(), x=X, y=Y)
    first = J(state, cache)
    moved_y = state.replace(y=Y + 1)  # x the same object: squares and of_d reused
    assert J(moved_y, cache).terms == {"squares": 5.0, "sums": 8.0, "of_d": 6.0}
    assert (squares.calls, sums.calls, of_d.calls) == (1, 2, 1)
    equal_x = moved_y.replace(x=X.copy())  # equal values, another object: recomputed
    assert J(equal_x, cache).terms == {"squares": 5.0, "sums": 8.0, "of_d": 6.0}
    assert (squares.calls, sums.calls, of_d.calls) == (2, 3, 2)
    J(state)  # without a cache, every term is evaluated
    assert (squares.calls, sums.calls, of_d.calls) == (3, 4, 3)
    assert first.total == 18.0


def test_the_cache_is_not_shared_by_another_problem_or_term():
    squares = _Squares()
    J, cache = Objective([squares]), {}
    J(State(_Toy(), x=X), cache)
    J(State(_Toy(), x=X), cache)  # another problem, the same x
    assert squares.calls == 2
    other = _Squares(2.0)
    assert Objective([other])(State(_Toy(), x=X), cache).terms == {"squares": 10.0}


def test_the_module_function_evaluates_the_problems_objective():
    problem = _Toy()
    problem.objective = Objective([_Squares(), _Sums()])
    cache = {}
    value = objective(State(problem, x=X, y=Y), cache)
    assert value.terms == {"squares": 5.0, "sums": 7.0} and set(cache) == {"squares", "sums"}


def test_the_gradient_is_the_sum_of_what_the_terms_depending_on_it_add():
    state = State(_Toy(), x=X, y=Y)
    J = Objective([_Squares(3.0), _Sums()])
    np.testing.assert_array_equal(J.gradient(state, "x"), 6.0 * X - 1.0)
    np.testing.assert_array_equal(J.gradient(state, "y"), np.zeros(1))  # none adds
    assert [term.name for term in J.contributors(["y"])] == ["sums"]
    assert [term.name for term in J.contributors(["x", "y"])] == ["squares", "sums"]
    assert J.contributors(["z"]) == []


def test_a_term_that_adds_nothing_to_a_subproblem_in_its_variables_is_named():
    state = State(_Toy(), x=X, y=Y)
    J = Objective([_Squares(), _OfD()])
    assert J.missing_contributions(Gradient, ["x"]) == []  # of_d reads d, not x
    J = Objective([_Squares(), _Sums()])
    assert J.missing_contributions(SelectionSystem, ["x"]) == ["squares", "sums"]
    assert J.missing_contributions(SelectionSystem, ["y"]) == ["sums"]
    with pytest.raises(NotImplementedError) as error:
        J.subproblem(SelectionSystem, state, "y")
    assert str(error.value) == ("term 'sums' depends on ['y'] but adds nothing to the "
                                "SelectionSystem subproblem (add_to_selection_system)")


class _YAndD(_Counted):
    """``sum(y) * sum(d)``."""

    name, reads, needs = "y_and_d", ("y", "d"), ("y", "d")

    def evaluate(self, state):
        return float(np.sum(state.y) * np.sum(state.d))


def test_a_derived_input_is_compared_by_the_fields_it_is_derived_from():
    # d is computed afresh for every new State; the cache compares x, its input, so a
    # new state of the same problem and x reuses the value without deriving d again
    derived = []
    problem = _Toy()
    problem.fields = {**_Toy.fields, "d": Field(
        "d", role="derived", derive=lambda s: derived.append(1) or 2.0 * s.x,
        inputs=("x",), needs=("x",))}
    term = _YAndD()
    J, cache = Objective([term]), {}
    assert J(State(problem, x=X, y=Y), cache).total == 60.0
    assert J(State(problem, x=X, y=Y), cache).total == 60.0
    assert term.calls == 1 and len(derived) == 1
    assert J(State(problem, x=X, y=Y + 1), cache).total == 66.0  # y changed
    assert term.calls == 2


class _Optional(_Squares):
    """Reads a variable its problem may not declare (a plugin's, say)."""

    name, reads = "optional", ("x", "extra")


def test_a_term_may_read_a_field_its_problem_does_not_declare():
    J, cache = Objective([_Optional()]), {}
    state = State(_Toy(), x=X)
    assert J(state, cache).terms == {"optional": 5.0} == J(state, cache).terms


def test_what_a_term_adds_is_declared_by_its_class():
    # the engine checks a schedule by the terms' classes before the fit; a hook an
    # instance sets itself is not one its class declares: refused the same way
    class Late(_OfD):
        name, reads, needs = "late", ("x",), ("x",)

        def __init__(self):
            super().__init__()
            self.add_to_gradient = lambda state, gradient: gradient.add(state.x)

    J = Objective([Late()])
    assert J.missing_contributions(Gradient, ["x"]) == ["late"]
    with pytest.raises(NotImplementedError, match="term 'late' depends on \\['x'\\]"):
        J.gradient(State(_Toy(), x=X), "x")
