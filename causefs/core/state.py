"""The state of a block-coordinate fit: the values of the fields its parts declare.

The core knows no model's variables. Every field a fit has is declared once, as a
:class:`Field` (its name, the shape of its value, one line of doc), by the part that owns
it, and the declarations of a fit travel with its problem (``problem.fields``). A
:class:`State` binds values of those fields to the problem:

* *variables* are what the blocks write (unset: ``None``);
* *given* fields are read from the problem (the data);
* *derived* fields are computed from other fields when first read (and carried over to
  the next state while their inputs are the same objects).

Blocks never mutate a state: they return a new one with the variables they own replaced
(:meth:`State.replace`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: what a field is to a state
ROLES = {
    "variable": "written by blocks; None until one does",
    "given": "held by the problem (the data a fit is given)",
    "derived": "computed from other fields when first read",
}


@dataclass(frozen=True)
class Field:
    """One field of a state, declared once by the part that owns it.

    Parameters
    ----------
    name : str
        An identifier, the attribute of :class:`State` that holds the value.
    shape : tuple of str or int, optional
        The shape of the value: ints, or names of attributes of the problem
        (``"n_samples"``); None (not declared), or a name the problem has no attribute
        for, is not checked.
    doc : str
        One line: what the value is.
    role : {"variable", "given", "derived"}
        See :data:`ROLES`.
    sequence : bool
        The value is a tuple of values of ``shape`` (one per feature group, say).
    derive : callable, optional
        ``derive(state)`` computes a derived field.
    inputs : tuple of str
        The fields a derived value is computed from; ``needs`` those it cannot do without.
    needs : tuple of str
    check : callable, optional
        ``check(value, problem)`` asserts what a valid value is (beyond its shape), for
        the property tests (:func:`causefs.testing.check_state`).
    """

    name: str
    shape: tuple | None = None
    doc: str = ""
    role: str = "variable"
    sequence: bool = False
    derive: Callable | None = None
    inputs: tuple = ()
    needs: tuple = ()
    check: Callable | None = None

    def __post_init__(self):
        if not (isinstance(self.name, str) and self.name.isidentifier()) or \
                self.name.startswith("_") or self.name in _RESERVED:
            raise ValueError(f"a field's name is an identifier not starting with '_' and "
                             f"not one of {sorted(_RESERVED)}; got {self.name!r}")
        if self.role not in ROLES:
            raise ValueError(f"field {self.name!r}: role must be one of {sorted(ROLES)}, "
                             f"got {self.role!r}")
        if (self.role == "derived") != (self.derive is not None):
            raise ValueError(f"field {self.name!r}: a derived field, and only one, has a "
                             "derive function")

    def shape_in(self, problem) -> tuple | None:
        """The shape the problem gives the value (each entry's, for a sequence), or None
        when it is not declared or a dimension is not one the problem knows."""
        if self.shape is None:
            return None
        shape = []
        for dim in self.shape:
            size = dim if isinstance(dim, int) else getattr(problem, dim, None)
            if not isinstance(size, int):
                return None
            shape.append(size)
        return tuple(shape)

    def describe(self) -> str:
        """``name (shape): doc`` (``name tuple of (shape): doc``) for messages; the shape
        written as a tuple, ``?`` when not declared."""
        shape = "?" if self.shape is None else \
            f"({', '.join(map(str, self.shape))}{',' if len(self.shape) == 1 else ''})"
        return f"{self.name} {'tuple of ' if self.sequence else ''}{shape}: {self.doc}"


#: attribute names of State itself, which no field may take
_RESERVED = frozenset({"problem", "fields", "replace", "available", "variables", "values"})


def variable_names(fields: Mapping) -> list[str]:
    """The names of the variables among ``fields`` (a mapping name -> :class:`Field`)."""
    return [name for name, field in fields.items() if field.role == "variable"]


class State:
    """Values of the fields of ``problem.fields`` bound to their problem.

    Read a field as an attribute (``state.W``): a variable that no block has set yet is
    ``None``. Build a state with ``State(problem, W=..., ...)`` (variables only) and a new
    one with :meth:`replace`.
    """

    __slots__ = ("problem", "_values", "_derived")

    def __init__(self, problem: Any, **values):
        fields = problem.fields
        unknown = sorted(name for name in values
                         if name not in fields or fields[name].role != "variable")
        if unknown:
            raise TypeError(f"State has no variable(s) {unknown}; variables are "
                            f"{sorted(variable_names(fields))}")
        object.__setattr__(self, "problem", problem)
        object.__setattr__(self, "_values",
                           {name: value for name, value in values.items() if value is not None})
        object.__setattr__(self, "_derived", {})

    @property
    def fields(self) -> Mapping:
        """The declarations of every field (``problem.fields``)."""
        return self.problem.fields

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        field = self.problem.fields.get(name)
        if field is None:
            raise AttributeError(f"State has no field {name!r}; fields are "
                                 f"{sorted(self.problem.fields)}")
        if field.role == "variable":
            return self._values.get(name)
        if field.role == "given":
            return getattr(self.problem, name, None)
        hit = self._derived.get(name)
        if hit is None:
            hit = self._derived[name] = (self._inputs(field), field.derive(self))
        return hit[1]

    def _inputs(self, field: Field) -> tuple:
        return tuple(self._values.get(name) if self.problem.fields[name].role == "variable"
                     else None for name in field.inputs)

    def __setattr__(self, name, value):
        raise AttributeError("a State is immutable: return state.replace(...) instead")

    def replace(self, **updates) -> "State":
        """A new state with ``updates`` applied; unknown names raise ``TypeError``."""
        new = State(self.problem, **{**self._values, **updates})
        for name, (inputs, value) in self._derived.items():
            if all(a is b for a, b in zip(new._inputs(self.problem.fields[name]), inputs)):
                new._derived[name] = (inputs, value)  # the same inputs: the same value
        return new

    @property
    def values(self) -> dict:
        """The variables that are set, by name (a copy of the mapping, not the arrays)."""
        return dict(self._values)

    def available(self) -> frozenset:
        """Names of the fields that can be read: the variables that are set, the given
        fields the problem holds, and the derived fields whose needs are available."""
        fields = self.problem.fields
        found = set(self._values)
        found |= {name for name, field in fields.items()
                  if field.role == "given" and getattr(self.problem, name, None) is not None}
        found |= {name for name, field in fields.items()
                  if field.role == "derived" and set(field.needs) <= found}
        return frozenset(found)

    def __reduce__(self):
        return (_restore, (self.problem, self._values))

    def __repr__(self) -> str:
        try:
            return f"State(set: {sorted(self._values)})"
        except AttributeError:  # a State whose construction failed
            return "State(unbuilt)"


def _restore(problem, values):
    return State(problem, **values)
