"""The engine: resolves names (schedule, blocks, terms, stopping rules, kernel, QP backend)
into parts, the settings once, and runs a fit.

This is the one layer that knows both the plugin registry and the parts: it turns the
settings of a fit (:class:`~causefs.model.settings.Settings`) into parts, hands every part
what it declares in ``requires``, builds the objective from the schedule's terms, checks
that every descent block accounts for every term that depends on its variables, builds
the problem and runs the scheduler.
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from .blocks import EVERY_TERM, Block
from .budget import FitEstimate, estimate_fit, expected_iterations
from .core.convergence import StoppingRule
from .core.loop import FitResult, run_schedule
from .core.schedule import Schedule, ScheduleError, entry_name, validate_blocks
from .core.state import State
from .core.validation import InvalidParameterError, check_annotated, construct, same_value
from .kernels import Kernel, with_balance_form
from .model.fit_size import FitSize
from .model.objective import Objective
from .model.problem import Problem
from .model.settings import DEFAULTS, Settings, SettingsWarning, check_setting, setting_names
from .model.treatments import treatment_coding
from .numerics.anchors import choose_anchors, resolve_anchors
from .plugins.registry import PartRegistry, make_kernel, make_qp_backend, parts as registry_of
from .qp import QPBackend
from .terms import Term

#: the terms of a schedule that names none: CAUSE-FS's objective (paper eq. 3.5)
DEFAULT_TERMS = ("regression", "fused_smoothness", "sparsity", "granular_graphs", "fusion",
                 "balance")
#: the stopping rules of a schedule that names none, in the order they are checked
DEFAULT_STOPPING = ("objective_change", "selection_stable")

#: the schedule ``schedule="auto"`` stands for: without and with nuisance variables Z.
#: Without Z, CAUSE-FS-I (``ablation_I``: the paper's loop without its balance term and
#: sample weights), first of the four schedules on the development benchmark (13
#: datasets, 4 resamples each) and above ``full`` out of distribution in 6 of 8 regimes
#: (docs/RESULTS.md, "Choosing the default schedule"); with Z the same loop adjusted for
#: Z (docs/RESULTS.md, "Known nuisance variables").
AUTO_SCHEDULES = {False: "ablation_I", True: "nuisance_adjusted"}

#: settings every fit uses whatever its parts (the others are used when a part of the
#: schedule declares them in ``requires``)
FIT_SETTINGS = ("n_clusters", "n_features_to_select", "n_neighbors", "n_anchors",
                "sample_weights", "schedule", "kernel", "max_iter", "structure_iter", "preprocessing",
                "treatment", "mmd_normalization", "balance_form", "memory_limit", "trace",
                "check", "random_state", "verbose", "stability_subsamples",
                "max_correlation", "cluster_screen")

#: the three kinds of part a schedule names, by their base class
_KINDS = {"block": Block, "term": Term, "stopping_rule": StoppingRule}


def _name_and_options(spec, what: str) -> tuple[str, dict]:
    if isinstance(spec, str):
        return spec, {}
    if isinstance(spec, Mapping) and "name" in spec:
        options = dict(spec)
        return options.pop("name"), options
    raise InvalidParameterError(f"{what}={spec!r}: must be a registered name, a mapping "
                                "with a 'name' key, or an instance")


def is_auto(spec) -> bool:
    """Whether a schedule setting is ``"auto"`` (a name, or a config node of the name
    alone), resolved when the fit knows whether it has nuisance variables."""
    return (isinstance(spec, str) and spec == "auto") or (
        isinstance(spec, Mapping) and dict(spec) == {"name": "auto"})


def resolve_schedule(spec, nuisance: bool = False) -> Schedule:
    """A :class:`Schedule` from a registered name, a mapping, or a Schedule; ``"auto"``
    (or ``{"name": "auto"}``, the command line's config node) is
    :data:`AUTO_SCHEDULES`'s schedule for a fit with (``nuisance``) or without Z."""
    if is_auto(spec):
        spec = AUTO_SCHEDULES[bool(nuisance)]
    if isinstance(spec, Schedule):
        return spec
    if isinstance(spec, str):
        return Schedule.from_mapping(registry_of().get("schedule", spec))
    if isinstance(spec, Mapping):
        return Schedule.from_mapping(spec)
    raise InvalidParameterError(f"schedule={spec!r}: must be a registered name, a mapping "
                                "or a Schedule")


def resolve_kernel(spec) -> Kernel:
    """A kernel instance from a registered name, ``{"name": ..., **options}`` or an instance."""
    if isinstance(spec, Kernel):
        return spec
    name, options = _name_and_options(spec, "kernel")
    return make_kernel(name, **options)


def resolve_qp(spec) -> QPBackend:
    """A QP backend instance from a registered name, a mapping or an instance."""
    if isinstance(spec, QPBackend):
        return spec
    name, options = _name_and_options(spec, "qp")
    return make_qp_backend(name, **options)


def build_part(kind: str, entry, settings: Settings, resources: Mapping,
               registry: PartRegistry | None = None):
    """The part of a schedule entry of ``kind`` (block, term or stopping_rule): a name,
    ``{"name": ..., **options}``, or an instance (used as it is).

    A part built from its name receives, by keyword, the settings and ``resources`` it
    declares in ``requires``, then the options written in the entry itself; nothing is
    passed to a part that does not declare it. An entry may not set an option that is a
    setting the part requires: the settings are decided once, by the user and the
    schedule's ``setting_defaults`` (:func:`resolve_settings`).
    """
    if isinstance(entry, _KINDS[kind]):
        return entry
    name = entry_name(entry)
    options = {k: v for k, v in entry.items() if k != "name"} if isinstance(entry, Mapping) \
        else {}
    try:
        cls = (registry or registry_of()).get(kind, name)
    except InvalidParameterError as error:
        raise ScheduleError(f"schedule: {error}") from None
    shadowed = sorted(set(options) & set(cls.requires) & set(setting_names()))
    if shadowed:
        raise ScheduleError(f"schedule.{name}.{shadowed[0]}: {shadowed[0]} is a setting; a "
                            "schedule supplies a setting's default in its "
                            "'setting_defaults', where the user's value wins")
    provided = {key: resources[key] if key in resources else getattr(settings, key)
                for key in cls.requires if key in resources or hasattr(settings, key)}
    return construct(f"schedule.{name}", cls, {**provided, **options})


def resolve_settings(settings: Settings, schedule: Schedule) -> Settings:
    """The fit's settings: the user's, with the schedule's ``setting_defaults`` where the user
    left the library's default. A value that differs from the library's default is never
    replaced: where the schedule's default differs from it too, a :class:`SettingsWarning`
    names both and the user's value is used. A value equal to the library's default cannot
    be told from one left there, and takes the schedule's (docs/guide/selector.md,
    "Settings and schedules").

    Raises
    ------
    ScheduleError
        A default that names no setting, ``schedule`` itself, or breaks its rule.
    """
    changes = {}
    suppliable = [name for name in setting_names() if name != "schedule"]
    for name, value in schedule.setting_defaults.items():
        if name not in suppliable:
            raise ScheduleError(f"schedule.setting_defaults.{name}: not a setting a schedule "
                                f"can supply; settings: {', '.join(suppliable)}")
        try:
            value = check_setting(name, value)
        except InvalidParameterError as error:
            raise ScheduleError(f"schedule.setting_defaults.{error}") from None
        user = getattr(settings, name)
        if same_value(user, getattr(DEFAULTS, name)):
            changes[name] = value
        elif not same_value(user, value):
            warnings.warn(f"{name}={user!r} is used, not schedule {schedule.name!r}'s default "
                          f"{name}={value!r}: a value you set is never replaced",
                          SettingsWarning, stacklevel=4)
    return settings.replace(**changes) if changes else settings


def balance_of(kernel: Kernel, form: str = "auto", seed: int = 0) -> Callable:
    """``balance(X, coding, K)``: the kernel's balance operator in the form ``form``
    (``balance_form``), for :attr:`Problem.balance <causefs.model.problem.Problem>`."""
    return functools.partial(_balance_operator, kernel, form, seed)


def _balance_operator(kernel, form, seed, X, coding, K):
    return with_balance_form(kernel.balance_operator(X, coding, K, seed=seed), form,
                             X.shape[0])


@dataclass(frozen=True)
class Parts:
    """What a fit is made of, resolved from its settings (one fit: the stopping rules
    keep the iterations they have seen)."""

    schedule: Schedule
    #: the settings resolved once (:func:`resolve_settings`): the user's and the
    #: schedule's setting_defaults
    settings: Settings
    init: tuple
    loop: tuple
    terms: tuple
    stopping: tuple
    kernel: Kernel
    qp: QPBackend
    #: the declaration of every field (:class:`~causefs.core.state.Field`) by name
    fields: Mapping

    @functools.cached_property
    def objective(self) -> Objective:
        """J, the sum of the schedule's terms."""
        return Objective(self.terms)

    @property
    def blocks(self) -> tuple:
        return (*self.init, *self.loop)

    @property
    def accepts_sparse(self) -> bool:
        """Whether every block and the kernel work on sparse X (else it is densified)."""
        return self.kernel.accepts_sparse and all(block.accepts_sparse for block in self.blocks)

    def used_settings(self) -> set:
        """The settings the fit reads: :data:`FIT_SETTINGS` and those its parts require."""
        used = set(FIT_SETTINGS)
        for part in (*self.blocks, *self.terms, *self.stopping):
            used |= set(part.requires)
        return used


def _available_at_start(fields: Mapping, nuisance: bool | None) -> frozenset:
    """The fields a state has before any block runs: the data, Z when given (or when
    unknown), and the derived fields they give."""
    given = {name for name, field in fields.items() if field.role == "given"
             and (name != "Z" or nuisance is not False)}
    return frozenset(given | {name for name, field in fields.items()
                              if field.role == "derived" and set(field.needs) <= given})


def check_subproblems(loop, objective: Objective) -> None:
    """Every term that depends on what a descent block writes is accounted for by the
    block: it adds to the block's subproblem, or the block was derived for it.

    Raises
    ------
    ScheduleError
        Naming the block, the term and what it lacks.
    """
    problems = []
    for block in loop:
        if block.kind != "descent":
            continue
        variables = block.descended()
        if block.subproblem is not None:
            for name in objective.missing_contributions(block.subproblem, variables):
                problems.append(
                    f"term {name!r} depends on {list(variables)}, which descent block "
                    f"{block.name!r} updates, but adds nothing to its subproblem "
                    f"({block.subproblem.__name__}: a method {block.subproblem.hook})")
        elif block.derived_for != EVERY_TERM:
            for term in objective.contributors(variables):
                if term.name not in block.derived_for:
                    problems.append(
                        f"descent block {block.name!r} was derived for the terms "
                        f"{list(block.derived_for)}, not for term {term.name!r}, which "
                        f"depends on {list(variables)}")
    if problems:
        raise ScheduleError("schedule: " + "; ".join(problems))


def build_parts(settings: Settings, seed: int = 0, nuisance: bool | None = None,
                n_selected: int | None = None) -> Parts:
    """Resolve the schedule, the settings (once), the blocks, terms and stopping rules,
    the kernel and the QP backend of ``settings``, and check them together.

    ``nuisance``: whether the fit has nuisance variables Z (for ``schedule="auto"``, and
    to refuse a schedule that reads Z without them; None: not known yet, no check);
    ``n_selected``: the number of features the fit selects (for the stopping rules).
    Settings the user set that no part uses are reported (:class:`SettingsWarning`).
    """
    schedule = resolve_schedule(settings.schedule, bool(nuisance))
    settings = resolve_settings(settings, schedule)
    registry = registry_of()
    qp = resolve_qp(settings.qp)
    resources = {"qp": qp, "seed": seed, "n_selected": n_selected}  # settings.RESOURCES

    def build(kind, entries):
        return tuple(build_part(kind, entry, settings, resources, registry)
                     for entry in entries)

    parts = Parts(schedule=schedule, settings=settings,
                  init=build("block", schedule.init), loop=build("block", schedule.loop),
                  terms=build("term", schedule.terms if schedule.terms is not None
                              else DEFAULT_TERMS),
                  stopping=build("stopping_rule", schedule.stopping
                                 if schedule.stopping is not None else DEFAULT_STOPPING),
                  kernel=resolve_kernel(settings.kernel), qp=qp, fields=registry.fields)
    if nuisance is not None:
        check_nuisance(parts, nuisance)
    validate_blocks(parts.init, parts.loop, parts.objective.needs,
                    _available_at_start(parts.fields, nuisance))
    check_subproblems(parts.loop, parts.objective)
    _warn_unused(settings, parts)
    return parts


#: settings that name a part, and how to build it (its options are then compared)
_PART_RESOLVERS = {"qp": resolve_qp, "kernel": resolve_kernel}


def _at_default(name: str, value) -> bool:
    """Whether setting ``name`` is at the library's default; a part given as its config
    node (``{"name": "gradient_projection_cg", **its defaults}``, as the command line
    passes it) is the default part."""
    default = getattr(DEFAULTS, name)
    if same_value(value, default):
        return True
    resolve = _PART_RESOLVERS.get(name)
    try:
        return resolve is not None and part_spec(resolve(value)) == part_spec(resolve(default))
    except (InvalidParameterError, TypeError, ValueError):
        return False


def _warn_unused(settings: Settings, parts: Parts) -> None:
    unused = [name for name in setting_names() if name not in parts.used_settings()
              and not _at_default(name, getattr(settings, name))]
    for name in unused:
        warnings.warn(f"{name}={getattr(settings, name)!r} is not used: no part of schedule "
                      f"{parts.schedule.name!r} reads it (its terms: "
                      f"{', '.join(parts.objective.names)})", SettingsWarning, stacklevel=4)


def part_spec(part) -> dict:
    """A built part as ``{"name": ..., **options}``: every option, defaults included,
    normalized (``rtol=1`` is ``1.0``; :func:`~causefs.core.validation.check_annotated`)."""
    return {"name": part.name, **check_annotated(part.name, type(part), part.options())}


def schedule_spec(parts: Parts) -> dict:
    """The schedule of ``parts`` as a mapping, its entries' options normalized by the
    parts' rules: equal schedules, equal mappings."""
    def entry(spec, part):
        if isinstance(spec, str):
            return spec
        options = part.options()
        given = spec.items() if isinstance(spec, Mapping) else options.items()
        return {"name": part.name, **{k: options.get(k, v) for k, v in given if k != "name"}}

    schedule = parts.schedule
    named = {"terms": (schedule.terms, parts.terms),
             "stopping": (schedule.stopping, parts.stopping)}
    return {"name": schedule.name,
            "init": [entry(e, b) for e, b in zip(schedule.init, parts.init)],
            "loop": [entry(e, b) for e, b in zip(schedule.loop, parts.loop)],
            **{key: None if entries is None else [entry(e, p) for e, p in zip(entries, built)]
               for key, (entries, built) in named.items()},
            "setting_defaults": dict(schedule.setting_defaults)}


def objective_spec(parts: Parts) -> list:
    """The objective's terms, each with its options (its weight among them)."""
    return [part_spec(term) for term in parts.terms]


def fit_size(n_samples: int, n_features: int, parts: Parts, density: float = 1.0,
             n_nuisance: int = 0) -> FitSize:
    """The size of a fit as the parts' cost declarations see it (``density``: the share
    of the data's cells that are non-zero; ``n_nuisance``: the coded columns of Z)."""
    balance = parts.objective.term("balance")
    return FitSize(n_samples, n_features, parts.settings,
                   balance=balance is not None and balance.active, density=density,
                   n_nuisance=n_nuisance)


def estimate(n_samples: int, n_features: int, settings: Settings,
             parts: Parts | None = None, density: float = 1.0,
             n_nuisance: int = 0) -> FitEstimate:
    """Time and memory of a fit of ``settings`` on n x d data (non-constant features) of
    which the share ``density`` of the cells is non-zero, with ``n_nuisance`` coded
    columns of known nuisance variables, summed over its parts
    (:func:`causefs.budget.estimate_fit`; ``parts`` are :func:`build_parts`'s of
    ``settings``, built here when not given)."""
    parts = parts if parts is not None else build_parts(settings)
    iterations = expected_iterations(parts.settings.max_iter, bool(parts.stopping))
    return estimate_fit(fit_size(n_samples, n_features, parts, density, n_nuisance),
                        parts.init, parts.loop, parts.kernel, parts.qp, iterations,
                        parts.settings.structure_iter)


def uses_nuisance(parts: Parts) -> bool:
    """Whether a block of the schedule reads the nuisance variables Z."""
    return any("Z" in (*block.reads, *block.optional_reads) for block in parts.blocks)


def check_nuisance(parts: Parts, given: bool) -> None:
    """Refuse a schedule that reads Z for a fit without it.

    Raises
    ------
    InvalidParameterError
    """
    if uses_nuisance(parts) and not given:
        raise InvalidParameterError(
            f"schedule={parts.schedule.name!r}: adjusts for nuisance variables, but none "
            "were given; pass them to fit(X, nuisance=Z) or choose another schedule")


def make_problem(X: np.ndarray, parts: Parts, seed: int = 0,
                 Z: np.ndarray | None = None, neighbors=None) -> Problem:
    """The problem of preprocessed data ``X`` (n, d) without constant features, coded
    nuisance variables ``Z`` (n, q) if any and given neighbours (checked, see
    :attr:`causefs.model.problem.Problem.neighbors`) if any: the data, the parts'
    objective, the resolved settings' sizes and treatment coding, and the anchors of
    ``n_anchors`` (:mod:`causefs.numerics.anchors`, drawn with ``seed``; none where
    neighbours were given, which replace the search of the first graph).

    Raises
    ------
    InvalidParameterError
        ``n_anchors`` set to a number while neighbours were given.
    """
    settings = parts.settings
    m = resolve_anchors(settings.n_anchors, X.shape[0], neighbors is not None)
    return Problem(X=X, coding=treatment_coding(X, settings.treatment,
                                                settings.mmd_normalization),
                   n_clusters=settings.n_clusters, n_neighbors=settings.n_neighbors,
                   sample_weights=settings.sample_weights, objective=parts.objective,
                   balance=balance_of(parts.kernel, settings.balance_form, seed), Z=Z,
                   neighbors=neighbors, fields=parts.fields,
                   anchors=None if m is None else choose_anchors(X.shape[0], m, seed))


def run_cause_fs(X: np.ndarray, parts: Parts, *, seed: int = 0,
                 callback: Callable | None = None, Z: np.ndarray | None = None,
                 neighbors=None) -> FitResult:
    """Run the fit of ``parts`` (:func:`build_parts`, built for this fit) on preprocessed
    data ``X`` (n, d) without constant features.

    ``seed`` seeds every random choice of the blocks and the kernel; ``Z`` is the coded
    design of the nuisance variables (:func:`causefs.model.nuisance_coding.code_nuisance`),
    if any; ``neighbors`` the checked neighbours the fit was given, if any
    (:mod:`causefs.numerics.given_neighbors`). Progress is logged at INFO with
    ``verbose``, else at DEBUG.
    """
    settings = parts.settings
    problem = make_problem(X, parts, seed, Z, neighbors)
    return run_schedule(State(problem), parts.init, parts.loop, objective=problem.objective,
                        max_iter=settings.max_iter, stopping=parts.stopping,
                        structure_iter=settings.structure_iter, callback=callback,
                        trace=settings.trace, check=settings.check,
                        log_level=logging.INFO if settings.verbose else logging.DEBUG)
