"""Checks of parameter values and of the options given to a constructor, in one place.

Every value a user gives, whatever route it takes (an estimator parameter, a command-line
key, a schedule entry's option, a kernel's or QP backend's option), is checked by the
constraints declared next to it (:class:`Interval`, :class:`Options`, ...) and refused
with an :class:`InvalidParameterError` whose message has one form::

    alpha=-1: must be a real number > 0

The form is ``name=value: requirement`` so that the command line can print it as one
line and prefix the key's group (``method.alpha=-1: ...``).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import re
import types
import typing
from collections.abc import Mapping

import numpy as np


class InvalidParameterError(ValueError, TypeError):
    """A parameter or option value that is not allowed; the message names it.

    A subclass of both ``ValueError`` and ``TypeError``, as scikit-learn's own
    ``InvalidParameterError``: a wrong value and a wrong type are one kind of mistake.
    """


class Constraint:
    """What a value must be; ``str(constraint)`` completes "must be ..."."""

    def is_satisfied_by(self, value) -> bool:
        raise NotImplementedError

    def normalize(self, value):
        """``value``, which satisfies the constraint, in its one canonical form."""
        return value


def _is_integer(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


class Interval(Constraint):
    """A finite number of a kind (``int`` or ``float`` for any real) within bounds.

    Parameters
    ----------
    kind : {int, float}
    low, high : number or None
        Bounds; None leaves that side open to infinity.
    closed : {"both", "left", "right", "neither"}
        Which bounds belong to the interval.
    """

    def __init__(self, kind, low=None, high=None, *, closed: str = "both"):
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    def is_satisfied_by(self, value) -> bool:
        if not (_is_integer(value) if self.kind is int else _is_real(value)):
            return False
        if not math.isfinite(value):
            return False
        if self.low is not None:
            if value < self.low or (value == self.low and self.closed in ("right", "neither")):
                return False
        if self.high is not None:
            if value > self.high or (value == self.high and self.closed in ("left", "neither")):
                return False
        return True

    def normalize(self, value):
        """A Python ``int`` or ``float``: ``alpha=1`` is ``alpha=1.0``, ``np.int64(3)``
        is ``3``."""
        return int(value) if self.kind is int else float(value)

    def __str__(self) -> str:
        what = "an integer" if self.kind is int else "a real number"
        low = "" if self.low is None else (
            f">= {self.low}" if self.closed in ("both", "left") else f"> {self.low}")
        high = "" if self.high is None else (
            f"<= {self.high}" if self.closed in ("both", "right") else f"< {self.high}")
        return " ".join(part for part in (what, low, "and" if low and high else "", high)
                        if part)


class Options(Constraint):
    """One of a fixed set of values (compared with ``==``; ``True`` is not ``1``)."""

    def __init__(self, values):
        self.values = tuple(values)

    def is_satisfied_by(self, value) -> bool:
        return any(value is option or (type(value) is type(option) and value == option)
                   for option in self.values)

    def __str__(self) -> str:
        shown = ", ".join("None" if v is None else repr(v) for v in self.values)
        return shown if len(self.values) == 1 else f"one of {shown}"


class InstanceOf(Constraint):
    """An instance of some types, described in words."""

    def __init__(self, types, description: str):
        self.types, self.description = types, description

    def is_satisfied_by(self, value) -> bool:
        return isinstance(value, self.types) and not (
            isinstance(value, bool) and bool not in _as_tuple(self.types))

    def __str__(self) -> str:
        return self.description


def _as_tuple(types) -> tuple:
    return types if isinstance(types, tuple) else (types,)


class PartSpec(Constraint):
    """How a part (schedule, kernel, QP backend) is named: a registered name, a mapping
    with a ``name`` key, or an instance (checked further when the engine resolves it)."""

    def is_satisfied_by(self, value) -> bool:
        if isinstance(value, str):
            return bool(value)
        if isinstance(value, Mapping):
            return isinstance(value.get("name"), str)
        return value is not None and not isinstance(value, (bool, numbers.Number))

    def __str__(self) -> str:
        return "a registered name, a mapping with a 'name' key, or an instance"


#: booleans only (a config's ``no`` or a Python ``"x"`` is not a boolean)
BOOLEAN = InstanceOf(bool, "true or false")
NONE = Options([None])
#: an int seed as NumPy's generators take it
SEED = Interval(int, 0, 2**32 - 1)

_UNITS = (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1))


def parse_bytes(value) -> int | None:
    """``"8GB"``, ``"512 MB"``, ``2e9`` -> bytes, a positive int; None for anything else."""
    if _is_real(value):
        number = float(value)
    elif isinstance(value, str):
        # a space may part the number from its unit ("512 MB"), not split either
        text = value.strip().upper()
        factor = next((f for unit, f in _UNITS if text.endswith(unit)), 1)
        digits = next((text[: -len(unit)] for unit, _ in _UNITS if text.endswith(unit)), text)
        try:
            number = float(digits) * factor
        except ValueError:
            return None
    else:
        return None
    return int(number) if math.isfinite(number) and number >= 1 else None


class ByteSize(Constraint):
    """A number of bytes >= 1, or a size such as ``"8GB"`` (units B, KB, MB, GB, TB)."""

    def is_satisfied_by(self, value) -> bool:
        return parse_bytes(value) is not None

    def __str__(self) -> str:
        return "a number of bytes >= 1 or a size such as '8GB' (units B, KB, MB, GB, TB)"


def describe(constraints) -> str:
    """The requirement that ``constraints`` (any of them) put on a value."""
    return " or ".join(str(c) for c in constraints)


def same_value(a, b) -> bool:
    """Whether two setting values are the same (floats up to rounding, 1 == 1.0)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool) and not isinstance(b, bool) and math.isclose(a, b)
    return a == b


def masked_positions(values) -> np.ndarray:
    """Where a NumPy masked array holds masked values, as ``np.argwhere`` lists them
    (first in row order); empty for anything else. ``np.asarray`` drops a mask and keeps
    the hidden values, so data and nuisance variables are checked for it first."""
    return np.argwhere(np.ma.getmask(values))  # the mask, or False: no position


def check_value(name: str, value, *constraints):
    """``value`` normalized by the first of ``constraints`` it satisfies (an int for a
    real number is a float), else an InvalidParameterError."""
    for constraint in constraints:
        if constraint.is_satisfied_by(value):
            return constraint.normalize(value)
    raise InvalidParameterError(f"{name}={value!r}: must be {describe(constraints)}")


def check_choice(name: str, value, allowed):
    """``value`` if it is one of ``allowed``, else an InvalidParameterError naming them."""
    return check_value(name, value, Options(allowed))


@functools.lru_cache(maxsize=None)
def signature(factory) -> inspect.Signature:
    """``inspect.signature(factory)``, computed once per class or function (the signature
    of a class without a constructor of its own is parsed from text, each time)."""
    return inspect.signature(factory)


def constructor_options(cls) -> list[str]:
    """Names of the keyword options ``cls``'s constructor takes."""
    return [name for name, p in signature(cls).parameters.items()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def constructor_defaults(cls, skip=()) -> dict:
    """Keyword options of ``cls`` with their defaults (options without one are left out,
    as are ``*args``/``**kwargs`` and the names in ``skip``)."""
    parameters = signature(cls).parameters
    return {name: parameters[name].default for name in constructor_options(cls)
            if parameters[name].default is not parameters[name].empty and name not in skip}


_CONFIG_SCALARS = (str, int, float, bool, type(None))


def config_value(value):
    """``value`` as a configuration (YAML, Hydra) holds it: tuples become lists; a
    TypeError for a value no configuration can hold (anything but a str, number, bool,
    None, list or mapping of them)."""
    if isinstance(value, _CONFIG_SCALARS):
        return value
    if isinstance(value, (list, tuple)):
        return [config_value(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): config_value(v) for k, v in value.items()}
    raise TypeError(f"{value!r} cannot be written in a configuration")


def check_options(key: str, factory, options: Mapping, name: str | None = None) -> None:
    """Every option is a keyword of ``factory`` (a class or a function), or an
    InvalidParameterError ``key.option: unknown option; the options of 'name' are ...``."""
    parameters = signature(factory).parameters.values()
    if any(p.kind == p.VAR_KEYWORD for p in parameters):
        return
    accepted = constructor_options(factory)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise InvalidParameterError(
            f"{key}.{unknown[0]}: unknown option; the options of "
            f"{name or factory.__name__!r} are {', '.join(sorted(accepted)) or 'none'}")


#: what an annotation of a simple type asks of a value (see :func:`annotated_constraints`)
_ANNOTATION_CONSTRAINTS = {
    int: Interval(int),
    float: InstanceOf(numbers.Real, "a real number"),
    str: InstanceOf(str, "a string"),
    bool: BOOLEAN,
    type(None): NONE,
    dict: InstanceOf(Mapping, "a mapping"),
    Mapping: InstanceOf(Mapping, "a mapping"),
    list: InstanceOf((list, tuple), "a list"),
    tuple: InstanceOf((list, tuple), "a list"),
}


@functools.lru_cache(maxsize=None)  # evaluating annotations is slow; a class keeps them
def annotated_constraints(factory) -> dict:
    """``{option: constraints}`` from the type annotations of ``factory``'s keywords.

    Only annotations made of simple types (int, float, str, bool, None, dict, list,
    tuple and unions of them) say what a value must be; the others are left to the
    factory. A float option takes an int (normalized to a float, :func:`check_value`).
    """
    target = factory.__init__ if inspect.isclass(factory) else factory
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # annotations that do not evaluate here say nothing checkable
        return {}
    found = {}
    for name in constructor_options(factory):
        kinds = typing.get_args(hints[name]) if name in hints and (
            typing.get_origin(hints[name]) in (typing.Union, types.UnionType)) \
            else (hints.get(name),)
        kinds = [typing.get_origin(k) or k for k in kinds]
        if all(k in _ANNOTATION_CONSTRAINTS for k in kinds):
            # a float option normalizes an int; an int-or-float option keeps both kinds
            found[name] = tuple(Interval(float) if k is float and int not in kinds else
                                _ANNOTATION_CONSTRAINTS[k] for k in kinds)
    return found


def check_annotated(key: str, factory, options: Mapping) -> dict:
    """``options`` checked against ``factory``'s annotations (:func:`annotated_constraints`)
    and normalized, or an InvalidParameterError ``key.option=value: must be ...``."""
    constraints = annotated_constraints(factory)  # read-only: shared by every call
    checked = dict(options)
    for name, value in options.items():
        if name in constraints:
            checked[name] = check_value(f"{key}.{name}", value, *constraints[name])
    return checked


#: a message that opens with an option's key (``alpha=-1: ...``, ``kernel.bandwidth=...``)
_NAMES_AN_OPTION = re.compile(r"^[A-Za-z_]\w*(\[\d+\])?[.=:\[]")


def construct(key: str, cls, options: Mapping | None = None):
    """``cls(**options)``, naming the option when one is unknown or refused.

    Parameters
    ----------
    key : str
        Where the options were given (``"kernel"``, ``"method"``, ``"schedule.embedding"``);
        the messages name an option as ``key.option``.
    cls : type
        A part class (a ``name`` attribute names it in the messages).
    options : mapping
        Keyword options; each must be a constructor parameter of ``cls``.

    Raises
    ------
    InvalidParameterError
        ``key.option: unknown option; ...`` listing the accepted ones,
        ``key.option=value: must be ...`` for a value its annotation
        (:func:`check_annotated`) or the constructor refused with an
        :class:`InvalidParameterError`, and ``key=name: ...`` for its other errors.
    """
    options = dict(options or {})
    name = getattr(cls, "name", cls.__name__)
    check_options(key, cls, options, name)
    check_annotated(key, cls, options)
    try:
        return cls(**options)
    except InvalidParameterError as error:
        # "alpha=-1: ..." becomes "method.alpha=-1: ..."; a message that names no option
        # ("a schedule needs ...") is told under the key itself
        joint = "." if _NAMES_AN_OPTION.match(str(error)) else ": "
        raise type(error)(f"{key}{joint}{error}") from None
    except (ValueError, TypeError) as error:
        raise InvalidParameterError(f"{key}={name}: {error}") from error
