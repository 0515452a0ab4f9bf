"""The QP backend interface."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..core.parts import Part
from ..numerics.simplex import project_simplex
from .problem import SimplexQP


#: a step that moves a weight by this many times the total lands far outside the simplex
#: already; a longer one only loses the point to overflow (a linear objective, P = 0,
#: has no curvature to bound the step)
STEP_SPAN = 1e6


def step_ceiling(gradient: np.ndarray, total: float) -> float:
    """The longest useful step along ``-gradient``: ``STEP_SPAN * total / max|gradient|``
    (inf for a zero gradient)."""
    largest = float(np.abs(gradient).max(initial=0.0))
    return STEP_SPAN * total / largest if largest > 0 else np.inf


@dataclass
class QPResult:
    """Solution of a :class:`SimplexQP`: the point, its objective, and how it was reached."""

    x: np.ndarray
    value: float
    n_iter: int
    converged: bool
    info: dict = field(default_factory=dict)


class QPBackend(Part, ABC):
    """Solves :class:`SimplexQP` problems, warm-started from a feasible point.

    Implementations return a feasible point whose objective is no larger than the
    warm start's (:meth:`safeguard` does this), so the mu block is a descent block
    whatever the backend's accuracy.
    """

    name: ClassVar[str]

    @abstractmethod
    def solve(self, qp: SimplexQP, x0: np.ndarray) -> QPResult:
        """Minimize ``qp`` starting from the feasible ``x0``."""

    def products(self, max_products: int | None) -> float:
        """Products with ``P`` one solve makes given ``max_products`` (None: the
        backend's own limit), a value ``x'Px`` counting as half a product.

        This default is a backend that forms ``P`` (no product) and ends in
        :meth:`safeguard` (two values: one product); a matrix-free backend counts its
        own.
        """
        return 1.0

    @staticmethod
    def safeguard(qp: SimplexQP, x: np.ndarray, x0: np.ndarray, n_iter: int,
                  converged: bool, **info) -> QPResult:
        """Make ``x`` exactly feasible and fall back to ``x0`` if it is not better."""
        x = project_simplex(x, qp.total)
        value, value0 = qp.value(x), qp.value(x0)
        if not value <= value0:
            x, value = x0, value0
        return QPResult(x=x, value=value, n_iter=n_iter, converged=converged, info=info)
