"""The peak memory of a fit, and the check that refuses one that would not fit.

A fit holds its data and state for its whole run (``resident``) and, at any time, the
temporaries of one phase (a d x d system, a candidate table, the balance operator...);
the peak is the resident memory plus the largest phase. Each part declares the bytes of
the phases it runs (:class:`causefs.core.parts.Cost`), an upper bound in float64.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.validation import parse_bytes
from ..model.settings import check_setting
from .system_memory import address_space_headroom, cgroup_headroom, machine_available

_GIB = 1 << 30


class MemoryLimitError(MemoryError):
    """A fit whose estimated peak memory exceeds the budget."""


@dataclass(frozen=True)
class MemoryEstimate:
    """Estimated bytes: ``resident`` for the whole fit, ``phases`` for the temporaries of
    each phase, and what to change when a phase is too large (``advice``)."""

    resident: int
    phases: dict
    advice: dict = field(default_factory=dict)

    @property
    def peak(self) -> int:
        return self.resident + max(self.phases.values(), default=0)

    @property
    def worst_phase(self) -> str:
        return max(self.phases, key=self.phases.get)


#: floats a feature every fit holds whatever its schedule: a row of W (h floats, counted
#: apart), and the feature's range, scale, score, rank, support and column pointer
PER_FEATURE_FLOATS = 8


def per_feature_floor(n_features: int, n_clusters: int) -> MemoryEstimate:
    """The least memory of any fit of ``n_features`` features: ``(h + 8)`` floats a
    feature (:data:`PER_FEATURE_FLOATS`). Checked before the data are scanned, so that
    data of billions of (mostly empty) columns are refused before the scan allocates
    per-column arrays; the fit's own estimate, later, is above it."""
    return MemoryEstimate(resident=0, phases={
        "per-feature arrays": (n_clusters + PER_FEATURE_FLOATS) * 8 * n_features},
        advice={"per-feature arrays": "drop the features that hold no value (empty "
                                      "columns) first"})


def memory_headroom() -> dict:
    """Bytes the process may allocate now, by what bounds them
    (:mod:`causefs.budget.system_memory`): the machine's available memory, the headroom of
    its memory cgroup (a container, a batch job) and its address-space limit; the ones
    not known or not set are left out."""
    bounds = {"memory available on the machine": machine_available(),
              "headroom of the process's memory cgroup": cgroup_headroom(),
              "room left under the process's address-space limit (ulimit -v)":
                  address_space_headroom()}
    return {bound: size for bound, size in bounds.items() if size is not None}


def available_memory() -> int | None:
    """Bytes the process may allocate now: the least of :func:`memory_headroom`, or None
    if none is known."""
    return min(memory_headroom().values(), default=None)


def parse_memory_limit(limit) -> int | str | None:
    """``limit`` checked (the ``memory_limit`` setting): ``"auto"``, None, or bytes."""
    check_setting("memory_limit", limit)
    return limit if limit is None or limit == "auto" else parse_bytes(limit)


def check_memory(estimate: MemoryEstimate, limit) -> None:
    """Raise :class:`MemoryLimitError` when the estimated peak exceeds ``limit``.

    ``limit``: bytes, a string such as ``"8GB"``, ``"auto"`` (80% of the memory the
    process may allocate now, :func:`available_memory`), or None (no check).
    """
    budget = parse_memory_limit(limit)
    if budget is None:
        return
    source = ""
    if budget == "auto":
        headroom = memory_headroom()
        if not headroom:
            return
        bound = min(headroom, key=headroom.get)
        budget = int(0.8 * headroom[bound])
        source = f": 80% of {headroom[bound] / _GIB:.2f} GiB, the {bound}"
    if estimate.peak > budget:
        phase = estimate.worst_phase
        advice = estimate.advice.get(phase, "reduce the number of samples")
        raise MemoryLimitError(
            f"this fit needs an estimated {estimate.peak / _GIB:.2f} GiB at its peak "
            f"({phase}: {estimate.phases[phase] / _GIB:.2f} GiB), more than the budget of "
            f"{budget / _GIB:.2f} GiB (memory_limit={limit!r}{source}); {advice}, or raise "
            "memory_limit")
