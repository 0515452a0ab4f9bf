"""The Term interface: one term of the objective J (a plugin kind)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from ..core.parts import Part
from ..core.validation import signature
from ..model.settings import check_requires
from ..model.subproblems import SUBPROBLEMS


class Term(Part, ABC):
    """One term of the objective: its value, and what it adds to the subproblems of the
    descent blocks.

    A term is a :class:`~causefs.core.parts.Part`: constructor keywords are its options,
    the engine fills those it declares in ``requires`` from the settings (``alpha``) and
    the fit's resources, and a schedule's term entry may set the others
    (``{"name": "my_penalty", "weight": 0.5}``).

    It adds its part to a subproblem in the method the subproblem's class names
    (:mod:`causefs.model.subproblems`), ``add_to_<subproblem>(state, subproblem)``. A term
    must add to every subproblem of a descent block that writes a variable it depends
    on: the engine refuses a schedule where one does not (the block's descent promise
    would not hold for it). :func:`causefs.testing.check_term` tests its value against
    an independent computation and each part it adds against finite differences of its
    value.

    Attributes
    ----------
    name : str
        Registry name used in schedules (``terms: [regression, ...]``).
    weighted_by : str or None
        The option that multiplies the term (a setting for the built-in terms, ``alpha``;
        an option of its own for a plugin's); a weight of 0 switches it off (no value,
        no part in any subproblem).
    reads : tuple of str
        The fields its value depends on (a cached value is reused while they are the
        same objects).
    needs : tuple of str
        The variables it cannot be evaluated without (its value is 0, or the part it
        can compute, without the others).
    requires : tuple of str
        What the engine hands the constructor: settings and resources
        (:func:`causefs.model.settings.providable`).
    fields : tuple of Field
        Variables it declares (a plugin's own; CAUSE-FS's are in
        :mod:`causefs.model.variables`).
    """

    name: ClassVar[str]
    weighted_by: ClassVar[str | None] = None
    reads: ClassVar[tuple] = ()
    needs: ClassVar[tuple] = ()
    requires: ClassVar[tuple] = ()
    fields: ClassVar[tuple] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if getattr(getattr(cls, "value", None), "__isabstractmethod__", False):
            return
        if not set(cls.needs) <= set(cls.reads):
            raise TypeError(f"{cls.__name__}.needs must be a subset of reads")
        if cls.weighted_by is not None and cls.weighted_by not in signature(cls).parameters:
            raise TypeError(f"{cls.__name__}.weighted_by names {cls.weighted_by!r}, which its "
                            "constructor does not take")
        check_requires(cls)

    @abstractmethod
    def value(self, state) -> float:
        """The term's value at ``state`` (weighted)."""

    def weight_value(self):
        """The value of its weight option (None for an unweighted term)."""
        return None if self.weighted_by is None else getattr(self, self.weighted_by)

    @property
    def active(self) -> bool:
        """False when its weight is 0: the term is then 0 and adds nothing."""
        value = self.weight_value()
        return value is None or value != 0

    def inputs(self) -> tuple:
        """The fields its value depends on (none when inactive)."""
        return self.reads if self.active else ()

    def needed(self) -> tuple:
        """The variables it needs (none when inactive)."""
        return self.needs if self.active else ()

    @classmethod
    def contributes_to(cls, kind: type) -> bool:
        """Whether the term adds its part to subproblem ``kind``."""
        return callable(getattr(cls, kind.hook, None))

    @classmethod
    def subproblems(cls) -> list:
        """The subproblem kinds the term adds to."""
        return [kind for kind in SUBPROBLEMS if cls.contributes_to(kind)]
