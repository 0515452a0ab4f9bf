"""The block contract, checked at run time by the scheduler and by :mod:`causefs.testing`.

A block returns a new :class:`~causefs.core.state.State` of the same problem, changes only
the variables it declares in ``writes``, never mutates the state it is given, and, for a
descent block, does not raise the objective (with its re-estimated adaptive parameters
substituted into both sides; docs/MODEL.md, "Descent and monotonicity").
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .state import STATE_FIELDS, State

#: run-time checking levels of the scheduler
CHECKS = ("cheap", "strict")


class BlockContractError(RuntimeError):
    """A block broke its contract; the message names the block and what it did."""


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
    return {name: fingerprint(getattr(state, name)) for name in STATE_FIELDS}


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


def check_purity(block, before: State, prints: dict, after: State, iteration=None) -> None:
    """``before`` still matches ``prints`` and ``after`` differs only in declared writes."""
    for name in STATE_FIELDS:
        if fingerprint(getattr(before, name)) != prints[name]:
            raise BlockContractError(f"{where(block, iteration)} mutated its input's {name!r} "
                                     "in place (return state.replace(...) instead)")
        if name not in block.writes and getattr(after, name) is not getattr(before, name):
            raise BlockContractError(f"{where(block, iteration)} changed {name!r}, which it "
                                     f"does not declare in writes {block.writes}")


def check_descent(block, objective, before: State, after: State, rtol: float = 1e-9,
                  iteration=None) -> None:
    """A descent block did not raise ``objective`` (beyond ``rtol`` of its scale)."""
    if block.kind != "descent":
        return
    reference = before.replace(**{f: getattr(after, f) for f in block.reestimates})
    start, end = objective(reference), objective(after)
    scale = sum(abs(v) for v in start.terms.values()) + 1e-300
    if not end.total <= start.total + rtol * scale:
        raise BlockContractError(
            f"descent {where(block, iteration)} raised the objective from {start.total!r} "
            f"to {end.total!r} (by {(end.total - start.total) / scale:.3g} of its scale); "
            f"terms before {start.terms}, after {end.terms}")
