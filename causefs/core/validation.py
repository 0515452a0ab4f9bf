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

import inspect
import math
import numbers
from collections.abc import Mapping


class InvalidParameterError(ValueError, TypeError):
    """A parameter or option value that is not allowed; the message names it.

    A subclass of both ``ValueError`` and ``TypeError``, as scikit-learn's own
    ``InvalidParameterError``: a wrong value and a wrong type are one kind of mistake.
    """


class Constraint:
    """What a value must be; ``str(constraint)`` completes "must be ..."."""

    def is_satisfied_by(self, value) -> bool:
        raise NotImplementedError


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

_UNITS = (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1))


def parse_bytes(value) -> int | None:
    """``"8GB"``, ``"512 MB"``, ``2e9`` -> bytes, a positive int; None for anything else."""
    if _is_real(value):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip().upper().replace(" ", "")
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


def check_value(name: str, value, *constraints):
    """``value`` if it satisfies one of ``constraints``, else an InvalidParameterError."""
    if any(c.is_satisfied_by(value) for c in constraints):
        return value
    raise InvalidParameterError(f"{name}={value!r}: must be {describe(constraints)}")


def check_choice(name: str, value, allowed):
    """``value`` if it is one of ``allowed``, else an InvalidParameterError naming them."""
    return check_value(name, value, Options(allowed))


def constructor_options(cls) -> list[str]:
    """Names of the keyword options ``cls``'s constructor takes."""
    return [name for name, p in inspect.signature(cls).parameters.items()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def constructor_defaults(cls, skip=()) -> dict:
    """Keyword options of ``cls`` with their defaults (options without one are left out,
    as are ``*args``/``**kwargs`` and the names in ``skip``)."""
    parameters = inspect.signature(cls).parameters
    return {name: parameters[name].default for name in constructor_options(cls)
            if parameters[name].default is not parameters[name].empty and name not in skip}


def check_options(key: str, factory, options: Mapping, name: str | None = None) -> None:
    """Every option is a keyword of ``factory`` (a class or a function), or an
    InvalidParameterError ``key.option: unknown option; the options of 'name' are ...``."""
    parameters = inspect.signature(factory).parameters.values()
    if any(p.kind == p.VAR_KEYWORD for p in parameters):
        return
    accepted = constructor_options(factory)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise InvalidParameterError(
            f"{key}.{unknown[0]}: unknown option; the options of "
            f"{name or factory.__name__!r} are {', '.join(sorted(accepted)) or 'none'}")


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
        ``key.option=value: must be ...`` for a value the constructor refused with an
        :class:`InvalidParameterError`, and ``key=name: ...`` for its other errors.
    """
    options = dict(options or {})
    name = getattr(cls, "name", cls.__name__)
    check_options(key, cls, options, name)
    try:
        return cls(**options)
    except InvalidParameterError as error:
        raise type(error)(f"{key}.{error}") from None
    except (ValueError, TypeError) as error:
        raise InvalidParameterError(f"{key}={name}: {error}") from error
