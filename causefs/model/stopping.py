"""A stopping rule on the model's output: the selected features stop changing."""

from __future__ import annotations

import numpy as np

from ..core.convergence import StoppingRule
from ..core.validation import NONE, Interval, check_value


class SelectionStable(StoppingRule):
    """The top-``n_selected`` features by ``||W_f||`` (the selection the estimator
    returns, ties by the smaller index) have stayed the same, up to
    ``floor(changed_share * n_selected)`` of them, over ``patience`` consecutive
    iterations.

    The share lets a large selection stop: with half of 676 features selected (the
    estimator's default number), one to five of the 338 features at the selection's
    boundary still swapped places every iteration after 25 on JAFFE, COIL20 and UMIST,
    so an exact rule ran every such fit to ``max_iter``. Below ``1 / changed_share``
    features (100 at the default) the rule is exact. The changes are counted against the
    first selection of the run of stable iterations, not the previous one, so the
    selection cannot drift further than the share over the run.

    Parameters
    ----------
    n_selected : int or None
        Features selected (the engine hands in the fit's number).
    patience : int or None
        Consecutive iterations that must end with the same top-k set. None (or no
        ``n_selected``) switches the rule off: it is never met.
    changed_share : float, default=0.01
        Share of the selection, rounded down, that may differ from the run's first
        selection, in [0, 1).
    """

    name = "selection_stable"
    requires = ("n_selected", "patience")

    def __init__(self, n_selected: int | None = None, patience: int | None = 3,
                 changed_share: float = 0.01):
        self.n_selected = check_value("n_selected", n_selected, NONE, Interval(int, 1))
        self.patience = check_value("patience", patience, NONE, Interval(int, 1))
        self.changed_share = check_value("changed_share", changed_share,
                                         Interval(float, 0, 1, closed="left"))
        self.allowed = int(self.changed_share * (self.n_selected or 0))
        self.reason = (f"top-{n_selected} features unchanged for {patience} iterations"
                       if self.allowed == 0 else
                       f"at most {self.allowed} of the top-{n_selected} features changed "
                       f"over {patience} iterations")
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
        # features of the run's first selection no longer selected
        if self._selection is not None and len(self._selection - selection) <= self.allowed:
            self._count += 1
        else:
            self._selection, self._count = selection, 1
        return self._count >= self.patience
