"""CAUSE-FS as a selector (the estimator, with the experiment's data and seed), and AllFea."""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np

from ..core.loop import objective_by_iteration, seconds_by
from ..core.validation import (
    InvalidParameterError,
    config_value,
    constructor_defaults,
    same_value,
)
from ..engine import build_parts, is_auto, part_spec, schedule_spec, uses_nuisance
from ..estimator import CauseFS
from ..model.diagnostics import describe as describe_weights
from ..model.settings import DEFAULTS, Settings, SettingsWarning, affects_result, setting_names
from ..plugins.registry import parts
from .base import Selector

#: settings every method gets from the experiment (:meth:`Selector.score`'s arguments,
#: and the scaling applied to the data before any method sees it)
SUPPLIED = ("n_clusters", "n_features_to_select", "random_state", "preprocessing")
#: what a report calls each built-in schedule
SCHEDULE_LABELS = {"full": "CAUSE-FS (full)", "auto": "CAUSE-FS", "ablation_I": "CAUSE-FS-I",
                   "ablation_II": "CAUSE-FS-II"}
#: settings that name a part (a registered name, or ``{"name": ..., **options}``)
PART_SETTINGS = ("kernel", "qp")


def _name_and_options(spec) -> tuple:
    if isinstance(spec, Mapping):
        return spec.get("name"), {k: v for k, v in spec.items() if k != "name"}
    return spec, {}


def part_change(group: str, spec, default: str) -> str | None:
    """How a part spec differs from the default part: ``None`` when it is the default,
    else its name and the options that differ from its constructor's defaults
    (``rbf(n_components=200)``)."""
    name, options = _name_and_options(spec)
    registry = parts()
    known = constructor_defaults(registry.get(group, name)) \
        if name in registry.names(group) else {}
    changed = {k: v for k, v in options.items() if not (k in known and same_value(v, known[k]))}
    if name == default and not changed:
        return None
    return str(name) + (f"({', '.join(f'{k}={v}' for k, v in changed.items())})"
                        if changed else "")


def _quiet_parts(settings: Settings, nuisance: bool | None = None):
    """The parts of ``settings`` for a fit with or without (``nuisance``) Z, or either
    (None), checked; what the fit will warn about is not said twice."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SettingsWarning)
        return build_parts(settings, nuisance=nuisance)


def _written(value):
    """``value`` as a result file holds it (a part instance by its repr)."""
    try:
        return config_value(value)
    except TypeError:
        return repr(value)


class CauseFSSelector(Selector):
    """:class:`causefs.CauseFS` scores ``||W_f||_2``; its options are the estimator's
    settings but those the experiment supplies (:data:`SUPPLIED`)."""

    name = "causefs"
    display_name = "CAUSE-FS"
    result_neutral = tuple(n for n in setting_names() if not affects_result(n))

    def __init__(self, **options):
        unknown = sorted(set(options) - set(self.defaults()))
        if unknown:
            raise InvalidParameterError(
                f"{unknown[0]}: not an option of CAUSE-FS here; its options are "
                f"{', '.join(self.defaults())} ({', '.join(SUPPLIED)} are the "
                "experiment's)")
        # every value checked (and normalized) by the settings' rules, the parts
        # resolved with their options
        settings = Settings(**{**self.defaults(), **options})
        self._options = {name: getattr(settings, name) for name in self.defaults()}
        _quiet_parts(settings)

    @classmethod
    def defaults(cls) -> dict:
        return {name: getattr(DEFAULTS, name) for name in setting_names()
                if name not in SUPPLIED}

    def options(self) -> dict:
        return dict(self._options)

    def result_options(self) -> dict:
        """The settings that can change the result; the schedule, kernel and QP backend
        as mappings of their normalized options (:func:`causefs.engine.part_spec`)."""
        settings = Settings(**self._options)
        parts = _quiet_parts(settings)
        schedule = schedule_spec(parts)
        if is_auto(settings.schedule):  # both schedules "auto" may stand for
            schedule = {"name": "auto", "without_nuisance": schedule,
                        "with_nuisance": schedule_spec(_quiet_parts(settings, True))}
        return {**super().result_options(), "schedule": schedule,
                "kernel": part_spec(parts.kernel), "qp": part_spec(parts.qp)}

    def uses_nuisance(self) -> bool:
        return uses_nuisance(_quiet_parts(Settings(**self._options), True))

    def _estimator(self, n_clusters, n_features_to_select, random_state) -> CauseFS:
        return CauseFS(n_clusters=n_clusters, n_features_to_select=n_features_to_select,
                       random_state=random_state, preprocessing="none", **self._options)

    def check_data(self, n_samples, n_features, n_clusters) -> None:
        self._estimator(n_clusters, None, None).settings().check_data(n_samples, n_features)

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        self.estimator_ = self._estimator(n_clusters, min(n_features_to_select, X.shape[1]),
                                          random_state).fit(X, nuisance=nuisance)
        if (self.estimator_.settings_.max_correlation is None
                and self.estimator_.carries_clusters_ is None):
            return self.estimator_.scores_
        # the decorrelated order, or features without the clusters last, is not the
        # scores' order: scores that give it
        return (X.shape[1] - self.estimator_.ranking_).astype(float)

    def details(self) -> dict:
        est = self.estimator_

        def listed(values):
            return None if values is None else values.tolist()

        return {"settings": {name: _written(getattr(est.settings_, name))
                             for name in setting_names()},
                "schedule": est.schedule_,
                "selection_frequency": listed(est.selection_frequency_),
                "nuisance_share": listed(est.nuisance_share_),
                "nuisance_share_adjusted": listed(est.nuisance_share_adjusted_),
                "carries_clusters": listed(est.carries_clusters_),
                "terms": [{key: _written(value) for key, value in term.items()}
                          for term in est.terms_],
                "objective_history": est.objective_history_.tolist(),
                "objective_by_iteration": objective_by_iteration(est.trace_),
                "final_terms": est.trace_[-1]["terms"] if est.trace_ else None,
                "n_iter": est.n_iter_, "converged": est.converged_,
                "stop_reason": est.stop_reason_,
                "structure_frozen_at": est.structure_frozen_at_,
                "block_seconds": seconds_by(est.trace_),
                "n_granularities": int(est.groups_.max()) + 1,
                "sample_weight": est.sample_weight_.tolist(),
                "diagnostics": est.diagnostics_.summary()}

    def describe(self, details: Mapping) -> list[str]:
        frozen = details["structure_frozen_at"]
        weights = np.asarray(details["sample_weight"])
        fitted = weights.size > 0 and np.ptp(weights) > 0  # uniform: no block fitted them
        return [f"{details['n_iter']} iterations ({details['stop_reason']}"
                + (f"; structure frozen after iteration {frozen}" if frozen else "")
                + f"), {details['n_granularities']} feature granularities",
                *describe_objective(details.get("objective_by_iteration") or []),
                *([describe_weights(details["diagnostics"])] if fitted else [])]

    @classmethod
    def label(cls, options: Mapping) -> str:
        schedule = options.get("schedule", DEFAULTS.schedule)
        name = schedule.get("name") if isinstance(schedule, Mapping) else schedule
        return SCHEDULE_LABELS.get(name, f"CAUSE-FS[{name}]")

    @classmethod
    def changed_options(cls, options: Mapping) -> dict:
        """The settings that differ from the defaults and can change the result (the
        schedule is in the :meth:`label`; a kernel or QP backend by name and options)."""
        changed = {}
        for key, value in options.items():
            if key in cls.result_neutral or key == "schedule" or key not in cls.defaults():
                continue
            if key in PART_SETTINGS:
                text = part_change(key, value, getattr(DEFAULTS, key))
                if text is not None:
                    changed[key] = text
            elif not same_value(value, getattr(DEFAULTS, key)):
                changed[key] = value
        return changed


def describe_objective(rows: list) -> list[str]:
    """The objective and its terms by iteration as a table
    (:func:`~causefs.core.loop.objective_by_iteration`), with a line on why it may rise
    (a structural change) or be negative (the fusion term)."""
    if not rows:
        return []
    names = list(rows[0]["terms"])
    widths = [max(len(name), 10) for name in names]
    lines = ["objective by iteration and by term (* = structure re-estimated):",
             "  iteration   objective  " + "  ".join(n.rjust(w) for n, w in zip(names, widths))]
    for row in rows:
        mark = "*" if row["structure_changed"] else " "
        lines.append(f"  {row['iteration']:>8}{mark} {row['objective']:>11.5g}  "
                     + "  ".join(f"{row['terms'].get(n, 0.0):>{w}.5g}"
                                 for n, w in zip(names, widths)))
    values = [row["objective"] for row in rows]
    rose = any(b > a for a, b in zip(values, values[1:]))
    if rose and any(row["structure_changed"] for row in rows[1:]):
        lines.append("  (the objective may rise in an iteration marked *: re-estimating the "
                     "feature granularities and confounder sets defines a new objective; the "
                     "descent blocks never raise it)")
    if min(values) < 0 or any(row["terms"].get("fusion", 0) < 0 for row in rows):
        lines.append("  (the fusion term -sum_m nu_m <G, S_m> rewards the fused graph's "
                     "agreement with the granular graphs: it is negative by design, and the "
                     "objective may be too)")
    return lines


class AllFeatures(Selector):
    """AllFea: every feature, whatever rho (scores are all equal)."""

    name = "all_features"
    display_name = "AllFea"
    select_all = True
    depends_on_count = False

    def score(self, X, *, n_clusters, n_features_to_select, random_state=0, nuisance=None):
        return np.zeros(X.shape[1])
