"""A stopping rule on the model's output: the selected features stop changing."""

from __future__ import annotations

import numpy as np

from ..core.convergence import StoppingRule
from ..core.validation import NONE, Interval, check_value


class SelectionStable(StoppingRule):
    """The top-``n_selected`` features by ``||W_f||`` (the selection the estimator
    returns, ties by the smaller index) have been the same after ``patience``
    consecutive iterations.

    Parameters
    ----------
    n_selected : int or None
        Features selected (the engine hands in the fit's number).
    patience : int or None
        Consecutive iterations that must end with the same top-k set. None (or no
        ``n_selected``) switches the rule off: it is never met.
    """

    name = "selection_stable"
    requires = ("n_selected", "patience")

    def __init__(self, n_selected: int | None = None, patience: int | None = 3):
        self.n_selected = check_value("n_selected", n_selected, NONE, Interval(int, 1))
        self.patience = check_value("patience", patience, NONE, Interval(int, 1))
        self.reason = f"top-{n_selected} features unchanged for {patience} iterations"
        self.reset()

    @property
    def active(self) -> bool:
        return self.n_selected is not None and self.patience is not None

    def reset(self) -> None:
        self._selection, self._count = None, 0

    def met(self, history: list, state) -> bool:
        if not self.active:
            return False
        scores = np.einsum("ij,ij->i", state.W, state.W)
        selection = frozenset(np.argsort(-scores, kind="stable")[: self.n_selected].tolist())
        self._count = self._count + 1 if selection == self._selection else 1
        self._selection = selection
        return self._count >= self.patience
