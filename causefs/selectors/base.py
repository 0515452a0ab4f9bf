"""The Selector interface: a method an experiment compares, CAUSE-FS included."""

from __future__ import annotations

import inspect
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import ClassVar

import numpy as np

from ..core.parts import Part
from ..core.validation import constructor_options


def ranking_from_scores(scores: np.ndarray) -> np.ndarray:
    """Feature indices, best first (higher score first, ties by smaller index)."""
    return np.argsort(-np.asarray(scores, dtype=float), kind="stable")


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and math.isclose(a, b)
    return a == b


class Selector(Part, ABC):
    """Scores features of unlabeled data; higher is better.

    Constructor keywords are the method's options. What an experiment supplies to every
    method (the number of clusters, how many features it will keep, the seed) are the
    arguments of :meth:`score`; the data arrive scaled.

    Attributes
    ----------
    name : str
        Registry name (``method=<name>`` on the command line).
    display_name : str
        The method's name in reports (defaults to ``name``).
    select_all : bool
        A method that keeps every feature whatever rho (the AllFea baseline).
    result_neutral : tuple of str
        Options that cannot change the result (left out of a results store's key).
    """

    name: ClassVar[str]
    display_name: ClassVar[str | None] = None
    select_all: ClassVar[bool] = False
    result_neutral: ClassVar[tuple] = ()

    @abstractmethod
    def score(self, X: np.ndarray, *, n_clusters: int, n_features_to_select: int,
              random_state: int = 0) -> np.ndarray:
        """Scores of the d features of ``X`` (n, d), already scaled.

        ``n_features_to_select`` is the largest rho the caller will use (methods such as
        MCFS depend on it); ``random_state`` seeds every random choice.
        """

    def ranking(self, X, **kwargs) -> np.ndarray:
        """Feature indices, best first."""
        return ranking_from_scores(self.score(X, **kwargs))

    @classmethod
    def defaults(cls) -> dict:
        """The options and their defaults (the method's config node)."""
        parameters = inspect.signature(cls).parameters
        return {name: parameters[name].default for name in constructor_options(cls)
                if parameters[name].default is not parameters[name].empty}

    def result_options(self) -> dict:
        """The options that can change the result, as the constructor normalized them
        (``1`` given for a real-valued option is ``1.0``): a results store's key."""
        return {k: v for k, v in self.options().items() if k not in self.result_neutral}

    def check_data(self, n_samples: int, n_features: int, n_clusters: int) -> None:
        """Raise ``ValueError`` for options the data's size cannot meet (before a fit)."""

    def details(self) -> dict:
        """What the last :meth:`score` learned besides the scores, for a result file."""
        return {}

    def describe(self, details: Mapping) -> list[str]:
        """Lines that report :meth:`details` to a reader."""
        return []

    @classmethod
    def label(cls, options: Mapping) -> str:
        """The row name of a result of this method with ``options`` in a report."""
        return cls.display_name or cls.name

    @classmethod
    def is_default(cls, options: Mapping) -> bool:
        """Whether ``options`` are the defaults (a report tells tuned rows apart)."""
        defaults = cls.defaults()
        return all(_same(options.get(k, v), v) for k, v in defaults.items()
                   if k not in cls.result_neutral)
