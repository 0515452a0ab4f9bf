"""The engine: resolves names (schedule, blocks, kernel, QP backend) and runs a fit.

This is the one layer that knows both the plugin registry and the blocks; blocks get
their resources (the QP backend) and options handed in here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

import numpy as np

from .kernels import Kernel
from .objective import CauseFSObjective
from .plugins.registry import get_block, get_schedule, make_kernel, make_qp_backend
from .preprocessing import treatment_coding
from .qp import QPBackend
from .scheduler import FitResult, Schedule, ScheduleError, run_schedule
from .state import Problem, State


def _name_and_options(spec, what: str) -> tuple[str, dict]:
    if isinstance(spec, str):
        return spec, {}
    if isinstance(spec, Mapping):
        options = dict(spec)
        if "name" not in options:
            raise ValueError(f"a {what} given as a mapping needs a 'name' key, got {dict(spec)}")
        return options.pop("name"), options
    raise TypeError(f"a {what} is a name, a mapping with a 'name' key, or an instance; "
                    f"got {spec!r}")


def resolve_schedule(spec) -> Schedule:
    """A :class:`Schedule` from a registered name, a mapping, or a Schedule."""
    if isinstance(spec, Schedule):
        return spec
    if isinstance(spec, str):
        return Schedule.from_mapping(get_schedule(spec))
    if isinstance(spec, Mapping):
        return Schedule.from_mapping(spec)
    raise TypeError(f"schedule must be a name, a mapping or a Schedule; got {spec!r}")


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
    name, options = _name_and_options(spec, "qp backend")
    return make_qp_backend(name, **options)


#: what the engine can hand a block that declares it in ``Block.requires``
PROVIDED = {
    "qp": "the QP backend (resolved from the ``qp`` parameter)",
    "sigma": "the confounder threshold (``CauseFS(sigma=...)``)",
    "max_granularity": "the largest number of feature granularities M",
    "max_treatments": "the bound on the treatments that get confounder sets",
}


def build_blocks(entries, settings: Mapping, resources: Mapping) -> list:
    """Instantiate the blocks of a schedule phase.

    A block receives, by keyword, the ``settings`` and ``resources`` it declares in
    ``requires`` (names of :data:`PROVIDED`; one not given falls back to the
    constructor's default), then the options written in the schedule entry itself.
    Nothing is passed to a block that does not declare it.
    """
    provided = {**settings, **resources}
    blocks = []
    for entry in entries:
        name, options = _name_and_options(entry, "schedule entry")
        cls = get_block(name)
        accepted = set(inspect.signature(cls).parameters)
        unknown = set(options) - accepted
        if unknown:
            raise ScheduleError(f"block {name!r} has no option(s) {sorted(unknown)}; "
                                f"its options are {sorted(accepted) or 'none'}")
        unknown = set(cls.requires) - set(PROVIDED)
        if unknown:
            raise ScheduleError(f"block {name!r} requires {sorted(unknown)}, which the engine "
                                f"does not provide; it provides {sorted(PROVIDED)}")
        kwargs = {k: provided[k] for k in cls.requires if k in provided}
        kwargs.update(options)
        try:
            blocks.append(cls(**kwargs))
        except TypeError as exc:
            raise ScheduleError(f"cannot build block {name!r}: {exc}") from exc
    return blocks


def run_cause_fs(X: np.ndarray, *, n_clusters: int, alpha: float, beta: float, lam: float,
                 eps: float, n_neighbors: int, mu_total: float, schedule, kernel, qp,
                 settings: Mapping | None = None, treatment: str = "median",
                 mmd_normalization: str = "group", neighbor_algorithm: str = "auto",
                 balance_form: str = "auto",
                 max_iter: int = 30, tol: float = 1e-5, seed: int = 0,
                 callback: Callable | None = None, trace: bool = False,
                 check: str = "cheap") -> FitResult:
    """Run CAUSE-FS on preprocessed data ``X`` (n, d) without constant features.

    The schedule's ``params`` override the hyperparameters of the same name; ``check``
    is the scheduler's run-time checking (:func:`causefs.scheduler.run_schedule`).
    """
    schedule = resolve_schedule(schedule)
    params = {"alpha": alpha, "beta": beta, "lam": lam, "eps": eps}
    unknown = set(schedule.params) - set(params)
    if unknown:
        raise ScheduleError(f"schedule {schedule.name!r} sets unknown params {sorted(unknown)}; "
                            f"allowed: {sorted(params)}")
    params.update(schedule.params)
    problem = Problem(
        X=X,
        coding=treatment_coding(X, treatment, mmd_normalization),
        n_clusters=n_clusters,
        n_neighbors=n_neighbors,
        mu_total=mu_total,
        kernel=resolve_kernel(kernel),
        neighbor_algorithm=neighbor_algorithm,
        balance_form=balance_form,
        seed=seed,
        **params,
    )
    resources = {"qp": resolve_qp(qp)}
    settings = dict(settings or {})
    init = build_blocks(schedule.init, settings, resources)
    loop = build_blocks(schedule.loop, settings, resources)
    return run_schedule(State(problem), init, loop, objective=CauseFSObjective(),
                        max_iter=max_iter, tol=tol, callback=callback, trace=trace,
                        check=check)
