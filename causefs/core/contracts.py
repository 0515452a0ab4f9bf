"""The block contract, checked at run time by the scheduler and by :mod:`causefs.testing`.

A block returns a new :class:`~causefs.core.state.State` of the same problem, sets every
variable it declares in ``writes`` to finite values, changes no other, never mutates the
state it is given, and, for a descent block, does not raise the objective (with its
re-estimated adaptive parameters substituted into both sides; docs/MODEL.md, "Descent and
monotonicity").

What each checking level checks (:func:`causefs.core.loop.run_schedule`):

* every level: a State of the same problem, the declared writes set in their shapes (not
  the values: :func:`check_writes`), no NaN or infinity written (:func:`check_finite`, one
  pass over what the block wrote), and, on the iterations of :func:`checks_descent`, the
  descent of every descent block, a rise above :data:`DESCENT_WARN_RTOL` of the
  objective's scale reported as a :class:`DescentWarning` naming the block;
* ``strict``: also the input untouched, nothing changed but the declared writes, and the
  descent of every descent block on every iteration (a rise above ``rtol`` is an error).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from .state import State, variable_names

#: run-time checking levels of the scheduler
CHECKS = ("cheap", "strict")
#: a descent block's rise of the objective, relative to its scale, that the default
#: level reports (rounding stays far below it; the strict level's own rtol is 1e-9)
DESCENT_WARN_RTOL = 1e-6


class BlockContractError(RuntimeError):
    """A block broke its contract; the message names the block and what it did."""


class NonFiniteError(BlockContractError, FloatingPointError):
    """A block wrote a NaN or an infinity; the message names the block and the variable.
    A :class:`FloatingPointError` too, as a non-finite objective is."""


class DescentWarning(UserWarning):
    """A descent block raised the objective (found by the default checking level)."""


def checks_descent(check: str, iteration: int) -> bool:
    """Whether the descent of every descent block is checked at ``iteration``: always at
    ``strict``; at the default level on iterations 1, 2, 4, 8, ... (a checked iteration
    costs an objective evaluation per block, so their share falls as a fit runs on,
    while a block that breaks descent from the start is found at once)."""
    return check == "strict" or (iteration >= 1 and iteration & (iteration - 1) == 0)


def fingerprint(value):
    """Bytes that change when an array, sparse matrix or tuple of them changes in place."""
    if value is None:
        return None
    if isinstance(value, tuple):
        return tuple(fingerprint(v) for v in value)
    if sp.issparse(value):
        value = sp.csc_array(value)
        return (value.shape, value.indices.tobytes(), value.indptr.tobytes(),
                value.data.tobytes())
    return np.asarray(value).tobytes()


def fingerprints(state: State) -> dict:
    """The fingerprint of every variable of the state's fields."""
    return {name: fingerprint(getattr(state, name)) for name in variable_names(state.fields)}


def where(block, iteration=None) -> str:
    at = "" if iteration is None else f" (iteration {iteration})"
    return f"block {block.name!r}{at}"


def check_returned_state(block, before: State, after, iteration=None) -> None:
    """The cheap checks: ``after`` is a State of the same problem."""
    if not isinstance(after, State):
        raise BlockContractError(f"{where(block, iteration)} returned "
                                 f"{type(after).__name__}, not a State")
    if after.problem is not before.problem:
        raise BlockContractError(f"{where(block, iteration)} replaced the problem")


def check_writes(block, after: State, iteration=None) -> None:
    """Every variable ``block`` declares in ``writes`` is set in ``after``, in the shape
    its field declares (cheap: the names and shapes, not the values)."""
    unset = [name for name in block.writes if getattr(after, name) is None]
    if unset:
        raise BlockContractError(f"{where(block, iteration)} declares writes {block.writes} "
                                 f"but left {unset} unset")
    for name in block.writes:
        field = after.fields[name]
        expected = field.shape_in(after.problem)
        if expected is None:
            continue
        value = getattr(after, name)
        found = {np.shape(v) for v in (value if field.sequence else (value,))}
        if found != {expected}:
            raise BlockContractError(
                f"{where(block, iteration)} wrote {name!r} of shape "
                f"{', '.join(map(str, sorted(found)))}; it must be {expected} "
                f"({field.describe()})")


def _finite(value) -> bool:
    if value is None:
        return True
    if isinstance(value, tuple):
        return all(_finite(v) for v in value)
    data = value.data if sp.issparse(value) else np.asarray(value)
    if data.dtype.kind not in "fc":
        return True
    with np.errstate(all="ignore"):  # a NaN or an infinity makes the sum one (one pass)
        total = np.sum(data)
    return bool(np.isfinite(total)) or bool(np.isfinite(data).all())  # or it overflowed


def check_finite(block, before: State, after: State, iteration=None) -> None:
    """No NaN or infinity in what ``block`` wrote (the variables it replaced)."""
    for name in block.writes:
        value = getattr(after, name)
        if value is not getattr(before, name) and not _finite(value):
            raise NonFiniteError(f"{where(block, iteration)} wrote a NaN or an infinity "
                                 f"into {name!r}")


def check_purity(block, before: State, prints: dict, after: State, iteration=None) -> None:
    """``before`` still matches ``prints`` and ``after`` differs only in declared writes."""
    for name in variable_names(before.fields):
        if fingerprint(getattr(before, name)) != prints[name]:
            raise BlockContractError(f"{where(block, iteration)} mutated its input's {name!r} "
                                     "in place (return state.replace(...) instead)")
        if name not in block.writes and getattr(after, name) is not getattr(before, name):
            raise BlockContractError(f"{where(block, iteration)} changed {name!r}, which it "
                                     f"does not declare in writes {block.writes}")


def check_descent(block, objective, before: State, after: State, rtol: float = 1e-9,
                  iteration=None, *, cache: dict | None = None, warn: bool = False) -> bool:
    """Whether a descent block did not raise ``objective`` (beyond ``rtol`` of its scale).

    A rise raises :class:`BlockContractError`, or with ``warn`` issues a
    :class:`DescentWarning` (and False is returned); ``cache`` is the objective's (the
    scheduler's, whose terms of ``before`` it reuses).
    """
    if block.kind != "descent":
        return True
    reference = before.replace(**{f: getattr(after, f) for f in block.reestimates})
    start, end = objective(reference, cache), objective(after, cache)
    scale = sum(abs(v) for v in start.terms.values()) + 1e-300
    if not end.total <= start.total + rtol * scale:
        message = (f"descent {where(block, iteration)} raised the objective from "
                   f"{start.total!r} to {end.total!r} (by "
                   f"{(end.total - start.total) / scale:.3g} of its scale); terms before "
                   f"{start.terms}, after {end.terms}")
        if not warn:
            raise BlockContractError(message)
        warnings.warn(message, DescentWarning, stacklevel=2)
        return False
    return True


class Contract:
    """The checks of one run of a schedule at a checking level (see the module's text).

    Parameters
    ----------
    check : {"cheap", "strict"}
    objective : callable
        The scheduler's objective; ``needs`` the variables it needs (no descent check
        before they are set).
    rtol : float
        The strict level's allowed rise of the objective.
    """

    def __init__(self, check: str, objective, needs, rtol: float = 1e-9):
        self.strict = check == "strict"
        self.level, self.objective, self.needs, self.rtol = check, objective, set(needs), rtol
        self.warned: set = set()  # blocks already reported for a rise of the objective

    def prints(self, before: State):
        """What the strict level needs of the state before a step (its fingerprints)."""
        return fingerprints(before) if self.strict else None

    def check(self, block, before: State, prints, after, iteration: int,
              cache: dict | None = None) -> None:
        """Check one step of ``block``; ``cache`` is the run's objective cache."""
        check_returned_state(block, before, after, iteration)
        check_writes(block, after, iteration)
        check_finite(block, before, after, iteration)
        if self.strict:
            check_purity(block, before, prints, after, iteration)
        if (block.name not in self.warned and self.needs <= before.available()
                and checks_descent(self.level, iteration)):
            held = check_descent(block, self.objective, before, after,
                                 self.rtol if self.strict else DESCENT_WARN_RTOL, iteration,
                                 cache=None if self.strict else cache, warn=not self.strict)
            if not held:
                self.warned.add(block.name)
