"""What the sample weights did in a fit: diagnostics a user can read.

Balancing can only help when the weights stay spread over the samples and actually lower
the imbalance of the confounders; these numbers show both after a fit
(:attr:`causefs.CauseFS.diagnostics_`, printed by the ``causefs`` command).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.state import State

#: a weight at most this fraction of the mean weight counts as zero (the simplex QP
#: sets exact zeros; other blocks may leave round-off)
ZERO_WEIGHT = 1e-8


def effective_sample_size(mu: np.ndarray) -> float:
    """Kish's effective sample size ``(sum mu)^2 / sum mu^2``: n for uniform weights, 1
    when one sample has all the weight."""
    mu = np.asarray(mu, dtype=float)
    square = float(mu @ mu)
    if square == 0:
        raise ValueError("all sample weights are zero: the effective sample size is undefined")
    return float(mu.sum() ** 2 / square)


def treatment_imbalance(X: np.ndarray, coding: np.ndarray, K, mu: np.ndarray) -> np.ndarray:
    """Per treatment r, ``||X_{K_r}' (mu o a_r)||``: the distance between the mu-weighted
    mean confounders of treated and control samples (with the ``group`` coding).

    Kernel-free, so comparable across kernels; for the linear kernel its square is
    ``MMD_r(mu)``. Treatments without confounders have imbalance 0.

    Returns
    -------
    ndarray of shape (d,)
    """
    K = np.asarray(K.toarray() if hasattr(K, "toarray") else K, dtype=bool)
    out = np.zeros(K.shape[1])
    # only treatments with confounders: a (d, d) float copy of K and of the moments took
    # 2.4 GB at d = 10,000, where a bounded treatment set keeps 125 columns
    T = np.flatnonzero(K.any(axis=0))
    if T.size:
        moments = X.T @ (mu[:, None] * coding[:, T])  # feature f against treatment r
        out[T] = np.sqrt(np.where(K[:, T], moments**2, 0.0).sum(axis=0))
    return out


def describe(summary: dict) -> str:
    """One readable line from :meth:`WeightDiagnostics.summary` (the CLI prints it)."""
    s = summary
    return (f"sample weights: effective sample size {s['effective_sample_size']:.1f} "
            f"({100 * s['effective_sample_fraction']:.1f}% of n), "
            f"{100 * s['zero_weight_share']:.1f}% zero, largest {s['max_weight_ratio']:.2f} x "
            f"mean; balance term {s['balance_uniform']:.4g} at uniform weights, "
            f"{s['balance_fitted']:.4g} fitted; per-treatment imbalance mean "
            f"{s['mean_imbalance_uniform']:.4g} -> {s['mean_imbalance_fitted']:.4g}, "
            f"max {s['max_imbalance_uniform']:.4g} -> {s['max_imbalance_fitted']:.4g}"
            # the weights minimize every term that holds them, not the balance alone: a
            # balance that rises beside an objective that falls is a trade, not a failure
            + ("" if s.get("objective_fitted") is None else
               f"; the objective (every term) {s['objective_uniform']:.4g} at uniform "
               f"weights, {s['objective_fitted']:.4g} fitted"))


@dataclass(frozen=True)
class WeightDiagnostics:
    """Diagnostics of the sample weights mu at the end of a fit.

    Attributes
    ----------
    effective_sample_size : float
        Kish's ``(sum mu)^2 / sum mu^2``.
    effective_sample_fraction : float
        The same divided by n.
    zero_weight_share : float
        Share of samples whose weight is at most :data:`ZERO_WEIGHT` times the mean.
    max_weight_ratio : float
        Largest weight over the mean weight.
    balance_uniform, balance_fitted : float
        The balance term ``sum_r MMD_r(mu)`` (without beta) at uniform and at the fitted
        weights, with the final confounder sets and the fit's kernel.
    imbalance_uniform, imbalance_fitted : ndarray of shape (d,)
        :func:`treatment_imbalance` per feature at uniform and at the fitted weights.
    objective_uniform, objective_fitted : float or None
        The fit's objective J (every term of its schedule) at uniform and at the fitted
        weights, the other variables as fitted: the weights minimize J, so the balance
        term alone may rise where the weighted regression and graph terms fall more.
        None for a problem built without an objective.
    """

    effective_sample_size: float
    effective_sample_fraction: float
    zero_weight_share: float
    max_weight_ratio: float
    balance_uniform: float
    balance_fitted: float
    imbalance_uniform: np.ndarray
    imbalance_fitted: np.ndarray
    objective_uniform: float | None
    objective_fitted: float | None

    def summary(self) -> dict:
        """The scalar diagnostics, with the mean and largest per-treatment imbalance."""
        out = {k: v for k, v in vars(self).items() if not isinstance(v, np.ndarray)}
        for when in ("uniform", "fitted"):
            values = getattr(self, f"imbalance_{when}")
            out[f"mean_imbalance_{when}"] = float(values.mean()) if values.size else 0.0
            out[f"max_imbalance_{when}"] = float(values.max()) if values.size else 0.0
        return out

    def __str__(self) -> str:
        return describe(self.summary())


def weight_diagnostics(state: State, objective: float | None = None) -> WeightDiagnostics:
    """:class:`WeightDiagnostics` of a fitted state (needs ``mu``; ``K`` if present);
    ``objective`` is J at ``state`` where the caller has it (the loop's last value), else
    it is evaluated.

    Without confounder sets (a schedule with none) the balance and imbalance are 0. Where
    the weights are uniform (a schedule that fits none, the default's), the fitted values
    are the uniform ones, computed once (they took 10-20 % of small default fits).
    """
    p = state.problem
    mu = np.asarray(state.mu, dtype=float)
    uniform = np.full(p.n_samples, mu.sum() / p.n_samples)
    same = np.array_equal(mu, uniform)  # no weights fitted
    ess = effective_sample_size(mu)
    balance_uniform = balance_fitted = 0.0
    # no confounder sets (the default schedules): nothing is imbalanced, and no (d, d) K
    # is made to say so (400 MB at d = 20,000)
    imbalance_uniform = imbalance_fitted = np.zeros(p.n_features)
    if state.K is not None:
        quad = p.balance_operator(state.K).quad
        balance_uniform = float(quad(uniform))
        balance_fitted = balance_uniform if same else float(quad(mu))
        imbalance_uniform = treatment_imbalance(p.X, p.coding, state.K, uniform)
        imbalance_fitted = (imbalance_uniform if same else
                            treatment_imbalance(p.X, p.coding, state.K, mu))
    objective_uniform = objective_fitted = None
    if p.objective is not None:
        objective_fitted = float(p.objective(state).total if objective is None else objective)
        objective_uniform = (objective_fitted if same else
                             float(p.objective(state.replace(mu=uniform)).total))
    return WeightDiagnostics(
        effective_sample_size=ess,
        effective_sample_fraction=ess / p.n_samples,
        zero_weight_share=float(np.mean(mu <= ZERO_WEIGHT * uniform[0])),
        max_weight_ratio=float(mu.max() / uniform[0]),
        balance_uniform=balance_uniform,
        balance_fitted=balance_fitted,
        imbalance_uniform=imbalance_uniform,
        imbalance_fitted=imbalance_fitted,
        objective_uniform=objective_uniform,
        objective_fitted=objective_fitted,
    )
