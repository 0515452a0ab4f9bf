"""A stopping rule on the model's output: the selected features stop changing."""

from __future__ import annotations

import numpy as np

from ..core.validation import Interval, check_value


class SelectionStable:
    """The top-``k`` features by ``||W_f||`` (the selection the estimator returns, ties
    by the smaller index) have been the same after ``patience`` consecutive iterations.

    Parameters
    ----------
    k : int
        Features selected.
    patience : int
        Consecutive iterations that must end with the same top-k set.
    """

    def __init__(self, k: int, patience: int):
        self.k = check_value("k", k, Interval(int, 1))
        self.patience = check_value("patience", patience, Interval(int, 1))
        self.reason = f"top-{k} features unchanged for {patience} iterations"
        self.reset()

    def reset(self) -> None:
        self._selection, self._count = None, 0

    def met(self, history: list, state) -> bool:
        scores = np.einsum("ij,ij->i", state.W, state.W)
        selection = frozenset(np.argsort(-scores, kind="stable")[: self.k].tolist())
        self._count = self._count + 1 if selection == self._selection else 1
        self._selection = selection
        return self._count >= self.patience
