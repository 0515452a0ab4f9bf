"""The Selector interface."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np


def ranking_from_scores(scores: np.ndarray) -> np.ndarray:
    """Feature indices, best first (higher score first, ties by smaller index)."""
    return np.argsort(-np.asarray(scores, dtype=float), kind="stable")


class Selector(ABC):
    """Scores features of unlabeled data; higher is better.

    Constructor keywords are the method's hyperparameters. ``select_all`` marks a
    method that keeps every feature whatever rho (the AllFea baseline).
    """

    name: ClassVar[str]
    select_all: ClassVar[bool] = False

    @abstractmethod
    def score(self, X: np.ndarray, *, n_clusters: int, n_features_to_select: int,
              random_state: int = 0) -> np.ndarray:
        """Scores of the d features of ``X`` (n, d), already min-max scaled.

        ``n_features_to_select`` is the largest rho the caller will use (methods such as
        MCFS depend on it); ``random_state`` seeds every random choice.
        """

    def ranking(self, X, **kwargs) -> np.ndarray:
        """Feature indices, best first."""
        return ranking_from_scores(self.score(X, **kwargs))

    def get_params(self) -> dict:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({options})"
