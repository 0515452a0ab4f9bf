"""Every setting of a CAUSE-FS fit, its default and its constraint: one table.

:class:`Settings` is that table. Its field defaults are the only place a default is
written: :class:`causefs.CauseFS` takes its parameters' defaults from it, the command
line's ``method=causefs`` node is generated from it, the engine builds the problem and
hands the blocks what they declare in ``requires`` from a ``Settings`` instance, and the
budget estimates a fit from it. Its constraints are the only rules a value is checked
against, whatever route it came by (estimator, command line, schedule ``params``, block
options that share a setting's name).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..core.contracts import CHECKS
from ..core.validation import (
    BOOLEAN,
    NONE,
    ByteSize,
    InstanceOf,
    Interval,
    InvalidParameterError,
    Options,
    PartSpec,
    SEED,
    check_value,
    signature,
)
from ..numerics.neighbors import NEIGHBOR_ALGORITHMS
from ..numerics.scaling import SCALINGS
from .treatments import MMD_NORMALIZATIONS, TREATMENT_RULES

#: sum(mu): 1 (the paper) or n (the same model with lambda and beta rescaled)
SAMPLE_WEIGHTS = ("mean_one", "simplex")
#: how the balance operator is held: matrix-free products, the dense Gram, or the cheaper
BALANCE_FORMS = ("auto", "products", "gram")

_PART = PartSpec()


class SettingsWarning(UserWarning):
    """A setting the user gave is used where the schedule would supply another default,
    or no part of the schedule uses it (causefs.engine.resolve_settings)."""


def setting(default, *constraints, in_key: bool = True):
    """A field of :class:`Settings`: its default and the constraints a value must meet
    (any of them); ``in_key=False`` marks a setting that cannot change a fit's result."""
    return field(default=default, metadata={"constraints": constraints, "in_key": in_key})


@dataclass(frozen=True)
class Settings:
    """The settings of one CAUSE-FS fit, checked when built (:meth:`check`).

    The parameters and their meaning are documented on :class:`causefs.CauseFS`.
    Objective weights (alpha, beta, lam, eps) and the feasible set's sizes (n_clusters,
    n_neighbors, n_anchors, sample_weights) define the model; the others say how it is solved.
    """

    n_clusters: int = setting(8, Interval(int, 2))
    n_features_to_select: int | float | None = setting(
        None, NONE, Interval(int, 1), Interval(float, 0, 1, closed="right"))
    alpha: float = setting(1.0, Interval(float, 0, closed="neither"))
    beta: float = setting(1e-4, Interval(float, 0))
    lam: float = setting(1.0, Interval(float, 0, closed="neither"))
    n_neighbors: int = setting(5, Interval(int, 1))
    n_anchors: int | str | None = setting("auto", NONE, Options(["auto"]), Interval(int, 3))
    eps: float = setting(1e-8, Interval(float, 0, closed="neither"))
    sigma: float = setting(0.2, Interval(float, 0, 1))
    max_treatments: int | str | None = setting("auto", NONE, Options(["auto"]),
                                               Interval(int, 1))
    sample_weights: str = setting("mean_one", Options(SAMPLE_WEIGHTS))
    schedule: object = setting("auto", _PART)
    kernel: object = setting("linear", _PART)
    qp: object = setting("gradient_projection_cg", _PART)
    max_iter: int = setting(30, Interval(int, 0))
    tol: float = setting(1e-5, Interval(float, 0))
    patience: int | None = setting(3, NONE, Interval(int, 1))
    structure_iter: int | None = setting(3, NONE, Interval(int, 0))
    preprocessing: str = setting("minmax", Options(SCALINGS))
    max_granularity: int = setting(10, Interval(int, 1))
    max_correlation: float | None = setting(None, NONE, Interval(float, 0, 1,
                                                                 closed="neither"))
    cluster_screen: float | None = setting(0.01, NONE, Interval(float, 0, 1,
                                                                closed="right"))
    treatment: str = setting("median", Options(TREATMENT_RULES))
    mmd_normalization: str = setting("group", Options(MMD_NORMALIZATIONS))
    neighbor_algorithm: str = setting("auto", Options(NEIGHBOR_ALGORITHMS))
    balance_form: str = setting("auto", Options(BALANCE_FORMS))
    memory_limit: int | str | None = setting("auto", NONE, Options(["auto"]), ByteSize(),
                                             in_key=False)
    trace: bool = setting(False, BOOLEAN, in_key=False)
    check: str = setting("cheap", Options(CHECKS), in_key=False)
    stability_subsamples: int = setting(0, Interval(int, 0))
    random_state: object = setting(None, NONE, SEED,
                                   InstanceOf(np.random.RandomState, "a RandomState"))
    verbose: bool = setting(False, BOOLEAN, in_key=False)

    def __post_init__(self):
        for item in dataclasses.fields(self):  # checked, and normalized (alpha=1 is 1.0)
            object.__setattr__(self, item.name, check_setting(item.name,
                                                              getattr(self, item.name)))

    def replace(self, **changes) -> "Settings":
        """A copy with ``changes`` applied (and checked)."""
        return dataclasses.replace(self, **changes)

    def check_data(self, n_samples: int, n_features: int) -> int:
        """Check the settings bounded by the data; returns the number of features to
        select. Nothing is capped silently.

        Raises
        ------
        InvalidParameterError
            ``n_clusters`` > n, ``n_neighbors`` > n - 2 (the closed form uses the
            (k+1)-th neighbour), ``n_anchors`` > n or below ``n_neighbors`` + 2, or
            ``n_features_to_select`` > d.
        """
        if self.n_clusters > n_samples:
            raise InvalidParameterError(f"n_clusters={self.n_clusters}: exceeds the "
                                        f"{n_samples} samples of the data")
        if self.n_neighbors > n_samples - 2:
            raise InvalidParameterError(
                f"n_neighbors={self.n_neighbors}: needs at least n_neighbors + 2 = "
                f"{self.n_neighbors + 2} samples (the closed form uses the (k+1)-th "
                f"neighbour), the data has {n_samples}")
        if isinstance(self.n_anchors, int):
            if self.n_anchors > n_samples:
                raise InvalidParameterError(f"n_anchors={self.n_anchors}: exceeds the "
                                            f"{n_samples} samples of the data")
            if self.n_anchors < self.n_neighbors + 2:
                raise InvalidParameterError(
                    f"n_anchors={self.n_anchors}: needs at least n_neighbors + 2 = "
                    f"{self.n_neighbors + 2} anchors (the closed form uses the (k+1)-th "
                    "nearest anchor other than a sample itself)")
        k = self.n_features_to_select
        if k is None:
            return max(1, n_features // 2)
        if isinstance(k, float):
            return max(1, int(round(k * n_features)))
        if k > n_features:
            raise InvalidParameterError(f"n_features_to_select={k}: exceeds the "
                                        f"{n_features} features of the data")
        return int(k)


_FIELDS = {item.name: item for item in dataclasses.fields(Settings)}


def setting_names() -> list[str]:
    """The settings, in the table's order."""
    return list(_FIELDS)


def affects_result(name: str) -> bool:
    """Whether a setting can change a fit's result (``verbose`` cannot)."""
    return _FIELDS[name].metadata["in_key"]


def check_setting(name: str, value):
    """``value`` if it meets the constraint of setting ``name``, else an
    :class:`~causefs.core.validation.InvalidParameterError` naming it."""
    return check_value(name, value, *_FIELDS[name].metadata["constraints"])


#: the defaults, as an instance (``DEFAULTS.alpha``)
DEFAULTS = Settings()


#: what the engine hands a part besides the settings
RESOURCES = {
    "qp": "the QP backend, resolved from the qp setting",
    "seed": "the int seed of the fit's random choices, drawn from random_state",
    "n_selected": "the number of features the fit selects",
}


def providable() -> list[str]:
    """Every name a part may declare in ``requires``: a setting or a resource."""
    return [*setting_names(), *RESOURCES]


def check_requires(cls) -> None:
    """A part's ``requires`` names constructor keywords the engine can fill.

    Raises
    ------
    TypeError
    """
    parameters = signature(cls).parameters
    missing = [name for name in cls.requires if name not in parameters]
    if missing:
        raise TypeError(f"{cls.__name__}.requires names {missing}, which its constructor "
                        "does not take")
    unknown = sorted(set(cls.requires) - set(providable()))
    if unknown:
        raise TypeError(f"{cls.__name__}.requires names {unknown}, which the engine does "
                        f"not provide; it provides the settings and {sorted(RESOURCES)}")
