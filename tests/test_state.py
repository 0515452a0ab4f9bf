"""The open state: fields declared once, variables, given and derived fields."""

import pickle

import numpy as np
import pytest

from causefs.core.state import Field, State
from causefs.model.variables import FIELDS


class Problem:
    """A problem of three fields: the core knows no model's variables."""

    n = 4

    def __init__(self):
        self.data = np.arange(8.0).reshape(4, 2)
        self.calls = 0
        self.fields = {
            "data": Field("data", ("n", 2), "the data", role="given"),
            "shift": Field("shift", (2,), "a variable"),
            "shifted": Field("shifted", ("n", 2), "data less shift", role="derived",
                             derive=self.derive, inputs=("shift",), needs=("data",)),
        }

    def derive(self, state):
        self.calls += 1
        return state.data if state.shift is None else state.data - state.shift


def test_fields_are_read_as_attributes_and_unset_variables_are_none():
    problem = Problem()
    state = State(problem)
    assert state.shift is None and state.data is problem.data
    assert state.available() == {"data", "shifted"}
    with pytest.raises(AttributeError, match="State has no field 'other'"):
        state.other
    with pytest.raises(TypeError, match=r"State has no variable\(s\) \['data'\]"):
        State(problem, data=np.zeros((4, 2)))  # given, not a variable
    with pytest.raises(AttributeError, match="immutable"):
        state.shift = np.ones(2)


def test_a_derived_field_is_computed_once_per_inputs():
    problem = Problem()
    state = State(problem, shift=np.ones(2))
    first = state.shifted
    assert state.shifted is first and problem.calls == 1
    same_inputs = state.replace()  # carried over: the shift is the same object
    assert same_inputs.shifted is first and problem.calls == 1
    moved = state.replace(shift=np.full(2, 2.0))
    np.testing.assert_array_equal(moved.shifted, problem.data - 2.0)
    assert problem.calls == 2


def test_a_state_pickles_with_its_values():
    state = State(Problem(), shift=np.ones(2))
    again = pickle.loads(pickle.dumps(state))
    np.testing.assert_array_equal(again.shift, state.shift)


def test_a_field_is_declared_once_and_well():
    assert len({field.name for field in FIELDS}) == len(FIELDS)
    with pytest.raises(ValueError, match="a field's name is an identifier"):
        Field("problem")
    with pytest.raises(ValueError, match="a derived field, and only one, has a derive"):
        Field("x", role="derived")
    assert Field("x", ("n_samples", 3)).shape_in(type("P", (), {"n_samples": 5})) == (5, 3)
    assert Field("x", ("n_groups",)).shape_in(object()) is None  # not known: not checked


@pytest.mark.parametrize("name", ["_x", "__x", "1x", "a-b", "a b", "", 3, None, "problem",
                                  "fields", "replace", "available", "variables", "values"])
def test_a_field_name_is_a_public_identifier_not_taken_by_state(name):
    with pytest.raises(ValueError, match=f"a field's name is an identifier .*got {name!r}$"):
        Field(name)


def test_a_field_has_one_of_the_three_roles():
    with pytest.raises(ValueError, match=r"^field 'x': role must be one of \['derived', "
                                         r"'given', 'variable'\], got 'input'$"):
        Field("x", role="input")
    with pytest.raises(ValueError, match="a derived field, and only one, has a derive"):
        Field("x", role="given", derive=lambda state: 1)


def test_a_field_describes_itself_with_its_shape():
    assert Field("W", ("n_features", "n_clusters"), "the selection matrix").describe() \
        == "W (n_features, n_clusters): the selection matrix"
    assert Field("mu", (3,), "weights").describe() == "mu (3,): weights"
    assert Field("S", ("n", "n"), "graphs", sequence=True).describe() \
        == "S tuple of (n, n): graphs"
    assert Field("any", doc="undeclared").describe() == "any ?: undeclared"
    assert Field("scalar", (), "a number").describe() == "scalar (): a number"


def test_the_variables_are_named_when_a_state_is_given_another_field():
    problem = Problem()
    problem.fields["other"] = Field("other", (2,), "a second variable")
    with pytest.raises(TypeError, match=r"^State has no variable\(s\) \['data', 'shifted'\]; "
                                        r"variables are \['other', 'shift'\]$"):
        State(problem, data=1, shifted=2, other=None)


def test_a_given_field_the_problem_lacks_reads_as_none_and_is_not_available():
    problem = Problem()
    problem.fields["labels"] = Field("labels", ("n",), "held by some problems", role="given")
    problem.fields["empty"] = Field("empty", ("n",), "held as None", role="given")
    problem.empty = None
    state = State(problem)
    assert state.labels is None and state.empty is None
    assert state.available() == {"data", "shifted"}
    assert State(problem, shift=np.ones(2)).available() == {"data", "shift", "shifted"}


def test_private_names_are_not_fields_and_states_show_what_is_set():
    state = State(Problem(), shift=np.ones(2))
    assert not hasattr(state, "_anything")
    with pytest.raises(AttributeError, match="^_secret$"):
        state._secret
    assert repr(state) == "State(set: ['shift'])"
    assert repr(State(Problem())) == "State(set: [])"
    # a state whose construction failed (its slots unset) still has a repr, not a
    # recursion through __getattr__
    assert repr(State.__new__(State)) == "State(unbuilt)"
