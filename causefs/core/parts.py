"""What every swappable part (block, kernel, QP backend, selector) has in common.

A part is a class whose constructor keywords are its options; it is shown by them, and it
may declare what it costs (:class:`Cost`), so that a fit's time and memory can be
estimated before it starts from the parts it is actually made of (:mod:`causefs.budget`),
plugin parts included.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

from .validation import signature


@dataclass(frozen=True)
class Cost:
    """The work and memory of one use of a part (one step of a block, one product of a
    kernel's balance operator, one solve of a QP backend).

    Attributes
    ----------
    flops : float
        Floating-point operations of dense linear algebra (BLAS).
    ops : float
        Other, memory-bound operations (gathers, sorting, selections).
    balance_products : float
        Products with the balance operator (the kernel says what one costs).
    resident : float
        Bytes the part keeps for the whole fit.
    memory : mapping of str to float
        Bytes of the temporaries of each phase the part runs (phase name -> bytes); the
        phases of a fit do not overlap, so the peak is the largest phase.
    advice : mapping of str to str
        What a user can change when a phase of this part is the one over the memory budget.
    """

    flops: float = 0.0
    ops: float = 0.0
    balance_products: float = 0.0
    resident: float = 0.0
    memory: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    advice: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self):
        object.__setattr__(self, "memory", MappingProxyType(dict(self.memory)))
        object.__setattr__(self, "advice", MappingProxyType(dict(self.advice)))


class Part:
    """Base of the parts: shown by its options, costing nothing unless it says so.

    Attributes
    ----------
    accepts_sparse : bool
        Whether the part works on data ``X`` held as ``scipy.sparse``; a fit keeps sparse
        data sparse only when every part that sees X says so (others get it dense).
    """

    accepts_sparse: ClassVar[bool] = False

    def options(self) -> dict:
        """The constructor keywords and their current values."""
        names = signature(type(self)).parameters
        return {name: value for name, value in vars(self).items()
                if name in names and not name.startswith("_")}

    def cost(self, size) -> Cost:
        """What one use of the part costs for a fit of ``size``
        (:class:`causefs.model.fit_size.FitSize`); unknown costs count as zero."""
        return Cost()

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in self.options().items())
        return f"{type(self).__name__}({options})"
