"""The Selector interface: a method an experiment compares, CAUSE-FS included."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import ClassVar

import numpy as np

from ..core.parts import Part
from ..core.validation import constructor_defaults, same_value


def ranking_from_scores(scores: np.ndarray) -> np.ndarray:
    """Feature indices, best first (higher score first, ties by smaller index)."""
    return np.argsort(-np.asarray(scores, dtype=float), kind="stable")


def takes_nuisance(function) -> bool:
    """Whether ``function`` takes the ``nuisance`` keyword (by name or ``**kwargs``)."""
    parameters = inspect.signature(function).parameters.values()
    return any(p.name == "nuisance" or p.kind is p.VAR_KEYWORD for p in parameters)


def accepts_nuisance(selector) -> bool:
    """Whether ``selector.score`` takes the ``nuisance`` keyword (a plugin's selector
    written before it existed does not: it is then run without Z, as the baselines)."""
    return takes_nuisance(selector.score)


class Selector(Part, ABC):
    """Scores features of unlabeled data; higher is better.

    Constructor keywords are the method's options. What an experiment supplies to every
    method (the number of clusters, how many features it will keep, the seed, the known
    nuisance variables if the dataset has them) are the arguments of :meth:`score`; the
    data arrive scaled.

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
    adjusts_for_nuisance : bool
        Whether :meth:`score` uses the nuisance variables it is given (the baselines
        ignore them; :meth:`uses_nuisance` decides per instance).
    depends_on_count : bool
        Whether the scores depend on ``n_features_to_select`` (MCFS's sparsity, CAUSE-FS's
        stopping rule, VCSDFS's k). A benchmark that scores several numbers of features
        then fits such a method once per number, as a user keeping that many would. True
        unless a method declares otherwise, so a plugin is never scored at a number it
        was not fitted for; a method that declares False is tested to give the same
        scores at any number.
    """

    name: ClassVar[str]
    display_name: ClassVar[str | None] = None
    select_all: ClassVar[bool] = False
    result_neutral: ClassVar[tuple] = ()
    adjusts_for_nuisance: ClassVar[bool] = False
    depends_on_count: ClassVar[bool] = True

    @abstractmethod
    def score(self, X: np.ndarray, *, n_clusters: int, n_features_to_select: int,
              random_state: int = 0, nuisance=None) -> np.ndarray:
        """Scores of the d features of ``X`` (n, d), already scaled.

        ``n_features_to_select`` is the largest rho the caller will use (methods such as
        MCFS depend on it); ``random_state`` seeds every random choice. ``nuisance``
        holds known nuisance variables Z (n,) or (n, p), as :meth:`causefs.CauseFS.fit`
        takes them, when the dataset has them: a method that has no use for them
        ignores them (the baselines do: their papers define no adjustment, and the
        experiments compare against them as they are).
        """

    def uses_nuisance(self) -> bool:
        """Whether this selector, with its options, adjusts for the nuisance variables
        :meth:`score` is given (a run that has them says so before fitting when not)."""
        return self.adjusts_for_nuisance

    def ranking(self, X, **kwargs) -> np.ndarray:
        """Feature indices, best first."""
        return ranking_from_scores(self.score(X, **kwargs))

    @classmethod
    def defaults(cls) -> dict:
        """The options and their defaults (the method's config node)."""
        return constructor_defaults(cls)

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
    def changed_options(cls, options: Mapping) -> dict:
        """The options in ``options`` that differ from the defaults and can change a
        result: a report names a result's row by them (``MCFS (n_neighbors=10)``)."""
        defaults = cls.defaults()
        return {k: v for k, v in options.items() if k not in cls.result_neutral
                and not (k in defaults and same_value(v, defaults[k]))}
