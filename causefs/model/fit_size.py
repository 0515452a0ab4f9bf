"""The size of a fit, as the parts' cost declarations see it (:meth:`Part.cost`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .settings import Settings
from .treatments import treatment_cap


@dataclass(frozen=True)
class FitSize:
    """A fit of ``n_samples`` x ``n_features`` (non-constant features) with ``settings``.

    ``balance`` says whether the objective has a balance term (beta != 0 once the
    schedule's ``params`` are applied); ``density`` is the share of the data's cells that
    are non-zero (1 for dense data), which prices the searches and products that pass
    over the non-zeros only; ``n_nuisance`` is the number q of coded columns of the known
    nuisance variables Z (0 without them), which the nuisance blocks' memory grows with.
    """

    n_samples: int
    n_features: int
    settings: Settings
    balance: bool = True
    density: float = 1.0
    n_nuisance: int = 0

    @property
    def n_clusters(self) -> int:
        return self.settings.n_clusters

    @property
    def n_neighbors(self) -> int:
        return self.settings.n_neighbors

    @property
    def n_granularities(self) -> int:
        """The largest number of feature granularities M (at most one per feature)."""
        return min(self.settings.max_granularity, self.n_features)

    @cached_property
    def n_treatments(self) -> int:
        """Treatments with confounder sets, after ``max_treatments``."""
        d = self.n_features
        return treatment_cap(self.settings.max_treatments, self.n_samples, d, d)
