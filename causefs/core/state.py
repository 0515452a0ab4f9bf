"""The state of a block-coordinate fit: the variables the blocks update.

A :class:`State` holds the variables of the model (paper section 3; their shapes and
meanings in :data:`STATE_FIELDS`) and the fixed problem they belong to
(:class:`causefs.model.problem.Problem`). Blocks never mutate a state: they return a new
one with the variables they own replaced (:meth:`State.replace`).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

#: every variable a block may read or write, with its meaning (docs/MODEL.md, "Variables")
STATE_FIELDS = {
    "W": "feature selection matrix, (d, h)",
    "D": "IRLS weights 1 / (2 sqrt(||W_f||^2 + eps)), (d,)",
    "F": "spectral embedding with orthonormal columns, (n, h)",
    "mu": "sample weights on the (scaled) simplex, (n,)",
    "S": "granular similarity graphs S[m], tuple of sparse (n, n), k non-zeros a column",
    "gamma": "adaptive-neighbour parameters of the S[m], tuple of (n,)",
    "G": "fused similarity graph, sparse (n, n), k non-zeros a column",
    "xi": "adaptive-neighbour parameters of G, (n,)",
    "groups": "feature granularity of every feature, ints in 0..M-1, (d,)",
    "nu": "granularity weights, (M,)",
    "K": "confounder sets, K[f, r] = feature f confounds treatment r, bool (d, d)",
    "Theta": "effect of the nuisance variables Z on every feature, (q, d); the blocks "
             "then fit X - Z Theta",
}

#: fields a problem provides before any block runs (Z only when the fit was given one)
PROBLEM_FIELDS = frozenset({"X", "Z"})


@dataclass(frozen=True, eq=False)
class State:
    """The variables of CAUSE-FS (:data:`STATE_FIELDS`) bound to their problem.

    Unset variables are ``None``. ``S`` and ``gamma`` are tuples with one entry per
    feature granularity; an empty tuple means no granular graphs (ablation II).
    """

    problem: Any
    W: np.ndarray | None = None
    D: np.ndarray | None = None
    F: np.ndarray | None = None
    mu: np.ndarray | None = None
    S: tuple | None = None
    gamma: tuple | None = None
    G: Any = None
    xi: np.ndarray | None = None
    groups: np.ndarray | None = None
    nu: np.ndarray | None = None
    K: np.ndarray | None = None
    Theta: np.ndarray | None = None

    @functools.cached_property
    def X(self) -> np.ndarray:
        """The data the blocks fit: the problem's X, less ``Z Theta`` once a block has
        estimated the nuisance effect ``Theta`` (the problem's X itself before)."""
        if self.Theta is None:
            return self.problem.X
        return self.problem.X - self.problem.Z @ self.Theta

    def replace(self, **updates) -> "State":
        """A new state with ``updates`` applied; unknown names raise ``TypeError``."""
        unknown = set(updates) - set(STATE_FIELDS)
        if unknown:
            raise TypeError(
                f"State has no variable(s) {sorted(unknown)}; variables are {sorted(STATE_FIELDS)}"
            )
        return dataclasses.replace(self, **updates)

    def available(self) -> frozenset:
        """Names of the variables that are set, plus the problem's fields it has."""
        given = {"X"} | ({"Z"} if getattr(self.problem, "Z", None) is not None else set())
        return frozenset(given) | {name for name in STATE_FIELDS if getattr(self, name) is not None}

    @property
    def n_granularities(self) -> int:
        return 0 if self.S is None else len(self.S)
