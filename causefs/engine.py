"""The engine: resolves names (schedule, blocks, kernel, QP backend) and runs a fit.

This is the one layer that knows both the plugin registry and the blocks: it turns the
settings of a fit (:class:`~causefs.model.settings.Settings`) into parts, hands every
block what it declares in ``requires``, builds the problem and runs the scheduler.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from .blocks import Block
from .budget import FitEstimate, estimate_fit
from .core.schedule import Schedule, ScheduleError, entry_name, validate_blocks
from .core.scheduler import FitResult, run_schedule
from .core.state import State
from .core.validation import InvalidParameterError, check_annotated, construct
from .kernels import Kernel, with_balance_form
from .model.fit_size import FitSize
from .model.objective import CauseFSObjective
from .model.problem import Problem
from .model.settings import Settings, check_setting
from .model.stopping import SelectionStable
from .model.treatment_coding import treatment_coding
from .plugins.registry import get_block, get_schedule, make_kernel, make_qp_backend
from .qp import QPBackend

#: settings a schedule may fix in its ``params``: objective weights (ablation I sets
#: ``beta: 0``) and how the loop runs (the paper's loop sets ``structure_iter: null``)
SCHEDULE_PARAMS = ("alpha", "beta", "lam", "eps", "structure_iter", "patience")

#: the schedule ``schedule="auto"`` stands for: without and with nuisance variables Z
#: (the Z schedule measured best in docs/RESULTS.md, "Known nuisance variables")
AUTO_SCHEDULES = {False: "full", True: "nuisance_adjusted"}


def _name_and_options(spec, what: str) -> tuple[str, dict]:
    if isinstance(spec, str):
        return spec, {}
    if isinstance(spec, Mapping) and "name" in spec:
        options = dict(spec)
        return options.pop("name"), options
    raise InvalidParameterError(f"{what}={spec!r}: must be a registered name, a mapping "
                                "with a 'name' key, or an instance")


def resolve_schedule(spec, nuisance: bool = False) -> Schedule:
    """A :class:`Schedule` from a registered name, a mapping, or a Schedule; ``"auto"``
    is :data:`AUTO_SCHEDULES`'s schedule for a fit with (``nuisance``) or without Z."""
    if isinstance(spec, str) and spec == "auto":
        spec = AUTO_SCHEDULES[bool(nuisance)]
    if isinstance(spec, Schedule):
        return spec
    if isinstance(spec, str):
        return Schedule.from_mapping(get_schedule(spec))
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


def build_blocks(entries, settings: Settings, resources: Mapping) -> tuple:
    """The blocks of a schedule phase (:func:`build_block` for every entry)."""
    return tuple(build_block(entry, settings, resources) for entry in entries)


def build_block(entry, settings: Settings, resources: Mapping) -> Block:
    """The block of a schedule entry (a name, ``{"name": ..., **options}``, or a block).

    A block built from its name receives, by keyword, the settings and ``resources`` it
    declares in ``requires``, then the options written in the entry itself; nothing is
    passed to a block that does not declare it. An instance is used as it is.
    """
    if isinstance(entry, Block):
        return entry
    name = entry_name(entry)
    options = {k: v for k, v in entry.items() if k != "name"} if isinstance(entry, Mapping) \
        else {}
    try:
        cls = get_block(name)
    except InvalidParameterError as error:
        raise ScheduleError(f"schedule: {error}") from None
    provided = {key: resources[key] if key in resources else getattr(settings, key)
                for key in cls.requires if key in resources or hasattr(settings, key)}
    return construct(f"schedule.{name}", cls, {**provided, **options})


def balance_of(kernel: Kernel, form: str = "auto", seed: int = 0) -> Callable:
    """``balance(X, coding, K)``: the kernel's balance operator in the form ``form``
    (``balance_form``), for :attr:`Problem.balance <causefs.model.problem.Problem>`."""
    return functools.partial(_balance_operator, kernel, form, seed)


def _balance_operator(kernel, form, seed, X, coding, K):
    return with_balance_form(kernel.balance_operator(X, coding, K, seed=seed), form,
                             X.shape[0])


@dataclass(frozen=True)
class Parts:
    """What a fit is made of, resolved from its settings."""

    schedule: Schedule
    init: tuple
    loop: tuple
    kernel: Kernel
    qp: QPBackend
    #: the settings the schedule fixes (:data:`SCHEDULE_PARAMS`)
    params: Mapping

    def settings(self, settings: Settings) -> Settings:
        """``settings`` with the schedule's ``params`` applied."""
        return settings.replace(**self.params) if self.params else settings

    @property
    def accepts_sparse(self) -> bool:
        """Whether every block and the kernel work on sparse X (else it is densified)."""
        return self.kernel.accepts_sparse and all(
            block.accepts_sparse for block in (*self.init, *self.loop))


def schedule_params(schedule: Schedule) -> dict:
    """The schedule's ``params``, checked by the rules of the settings of those names."""
    unknown = sorted(set(schedule.params) - set(SCHEDULE_PARAMS))
    if unknown:
        raise ScheduleError(f"schedule.params.{unknown[0]}: not a param of schedule "
                            f"{schedule.name!r}; allowed: {', '.join(SCHEDULE_PARAMS)}")
    try:
        return {name: check_setting(name, value) for name, value in schedule.params.items()}
    except InvalidParameterError as error:
        raise ScheduleError(f"schedule.params.{error}") from None


def build_parts(settings: Settings, seed: int = 0, nuisance: bool = False) -> Parts:
    """Resolve the schedule, its blocks, the kernel and the QP backend of ``settings``
    (``nuisance``: whether the fit has nuisance variables Z, for ``schedule="auto"``)."""
    schedule = resolve_schedule(settings.schedule, nuisance)
    qp = resolve_qp(settings.qp)
    resources = {"qp": qp, "seed": seed}  # blocks.base.RESOURCES
    init, loop = (build_blocks(schedule.init, settings, resources),
                  build_blocks(schedule.loop, settings, resources))
    validate_blocks(init, loop)  # the order, before any data (the objective's needs: at fit)
    return Parts(schedule=schedule, init=init, loop=loop,
                 kernel=resolve_kernel(settings.kernel), qp=qp,
                 params=schedule_params(schedule))


def part_spec(part) -> dict:
    """A built part as ``{"name": ..., **options}``: every option, defaults included,
    normalized (``rtol=1`` is ``1.0``; :func:`~causefs.core.validation.check_annotated`)."""
    return {"name": part.name, **check_annotated(part.name, type(part), part.options())}


def schedule_spec(parts: Parts) -> dict:
    """The schedule of ``parts`` as a mapping, its entries' options and its params
    normalized by the blocks and the settings' rules: equal schedules, equal mappings."""
    def entry(spec, block):
        if isinstance(spec, str):
            return spec
        options = block.options()
        given = spec.items() if isinstance(spec, Mapping) else options.items()
        return {"name": block.name, **{k: options.get(k, v) for k, v in given if k != "name"}}

    schedule = parts.schedule
    return {"name": schedule.name,
            "init": [entry(e, b) for e, b in zip(schedule.init, parts.init)],
            "loop": [entry(e, b) for e, b in zip(schedule.loop, parts.loop)],
            "params": dict(parts.params)}


def fit_size(n_samples: int, n_features: int, settings: Settings, parts: Parts) -> FitSize:
    """The size of a fit as the parts' cost declarations see it."""
    return FitSize(n_samples, n_features, settings,
                   balance=parts.settings(settings).beta != 0)


def estimate(n_samples: int, n_features: int, settings: Settings,
             parts: Parts | None = None) -> FitEstimate:
    """Time and memory of a fit of ``settings`` on n x d data (non-constant features),
    summed over its parts (:func:`causefs.budget.estimate_fit`)."""
    parts = parts if parts is not None else build_parts(settings)
    return estimate_fit(fit_size(n_samples, n_features, settings, parts), parts.init,
                        parts.loop, parts.kernel, parts.qp, settings.max_iter)


def uses_nuisance(parts: Parts) -> bool:
    """Whether a block of the schedule reads the nuisance variables Z."""
    return any("Z" in (*block.reads, *block.optional_reads)
               for block in (*parts.init, *parts.loop))


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


def make_problem(X: np.ndarray, settings: Settings, parts: Parts, seed: int = 0,
                 Z: np.ndarray | None = None) -> Problem:
    """The problem of preprocessed data ``X`` (n, d) without constant features and coded
    nuisance variables ``Z`` (n, q) if any: the settings' weights, overridden by the
    schedule's ``params``."""
    settings = parts.settings(settings)
    return Problem(X=X, coding=treatment_coding(X, settings.treatment,
                                                settings.mmd_normalization),
                   n_clusters=settings.n_clusters, n_neighbors=settings.n_neighbors,
                   sample_weights=settings.sample_weights, alpha=settings.alpha,
                   beta=settings.beta, lam=settings.lam, eps=settings.eps,
                   balance=balance_of(parts.kernel, settings.balance_form, seed), Z=Z)


def stopping_rules(settings: Settings, n_selected: int | None) -> list:
    """The rules besides the objective's change: the top ``n_selected`` features stable
    for ``patience`` iterations (when both are set)."""
    if settings.patience is None or not n_selected:
        return []
    return [SelectionStable(n_selected, settings.patience)]


def run_cause_fs(X: np.ndarray, settings: Settings, *, seed: int = 0, parts: Parts | None = None,
                 n_selected: int | None = None, callback: Callable | None = None,
                 Z: np.ndarray | None = None) -> FitResult:
    """Run CAUSE-FS on preprocessed data ``X`` (n, d) without constant features.

    ``seed`` seeds every random choice of the blocks and the kernel; ``parts`` are
    :func:`build_parts`'s (built here when not given); ``n_selected`` is the number of
    features selected (the selection-stability rule watches them); ``Z`` is the coded
    design of the nuisance variables (:func:`causefs.model.nuisance.code_nuisance`), if
    any. Progress is logged at INFO with ``settings.verbose``, else at DEBUG.
    """
    parts = parts if parts is not None else build_parts(settings, seed, Z is not None)
    check_nuisance(parts, Z is not None)
    problem = make_problem(X, settings, parts, seed, Z)
    settings = parts.settings(settings)
    return run_schedule(State(problem), parts.init, parts.loop, objective=CauseFSObjective(),
                        max_iter=settings.max_iter, tol=settings.tol,
                        stopping=stopping_rules(settings, n_selected),
                        structure_iter=settings.structure_iter, callback=callback,
                        trace=settings.trace, check=settings.check,
                        log_level=logging.INFO if settings.verbose else logging.DEBUG)
