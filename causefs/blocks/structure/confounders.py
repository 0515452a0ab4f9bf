"""Confounder pruning (Algorithm 1, line 11): refine the confounder set K of every treatment."""

from __future__ import annotations

import numpy as np

from ...core.parts import Cost
from ...core.state import State
from ...core.validation import Interval, check_choice, check_value
from ...model.settings import DEFAULTS, check_setting
from ...model.treatments import bounded_treatments
from ...numerics.correlation import pearson_similarity
from ..base import Block

CORRELATIONS = ("cosine", "pearson")


class ConfoundersBlock(Block):
    """``K[:, r]`` = all features minus r, minus irrelevant features U, minus adjustment features.

    * U: features whose contribution ``||W_f||^2`` is below ``irrelevant_tol`` times the
      largest (the paper's all-zero rows of W, for an IRLS solution that is never
      exactly zero).
    * adjustment features of r: candidates whose correlation with r, divided by the
      largest correlation among r's candidates, is below ``sigma``. Correlation is the
      ``|cosine|`` of W rows (default) or the ``|Pearson|`` correlation of the data
      columns.

    Only treatments (features with a non-zero coding) get confounders, and with
    ``max_treatments`` only the top ones by ``||W_f||`` (:mod:`causefs.model.treatments`);
    similarities are computed for the kept treatments' columns only, ``O(d |T|)``.
    Structural.

    Parameters
    ----------
    sigma : float
        Adjustment threshold in [0, 1] (the paper: sigma <= 0.2).
    irrelevant_tol : float
        Relative contribution below which a feature is irrelevant.
    correlation : {"cosine", "pearson"}
    max_treatments : None, "auto" or int
        Bound on the treatments; None keeps all (the paper).
    """

    name = "confounders"
    accepts_sparse = True
    kind = "structural"
    reads = ("X_adjusted", "W")
    writes = ("K",)
    requires = ("sigma", "max_treatments")

    def __init__(self, sigma: float = DEFAULTS.sigma, irrelevant_tol: float = 1e-3,
                 correlation: str = "cosine", max_treatments=DEFAULTS.max_treatments):
        self.sigma = check_setting("sigma", sigma)
        self.irrelevant_tol = check_value("irrelevant_tol", irrelevant_tol,
                                          Interval(float, 0, 1))
        self.correlation = check_choice("correlation", correlation, CORRELATIONS)
        self.max_treatments = check_setting("max_treatments", max_treatments)

    def cost(self, size) -> Cost:
        """The new K beside the one the loop keeps from before (each (d, d) bools), and
        the (d, t) similarities, candidates and ratios of the t kept treatments (about
        20 bytes a pair measured; 26 declared), with ``pearson`` the data's centred and
        scaled copies and the treatments' columns (n (2 d + t) floats)."""
        n, d, treatments = size.n_samples, size.n_features, size.n_treatments
        phase = float(d) ** 2 + 26.0 * d * treatments
        if self.correlation == "pearson":
            phase += 8.0 * n * (2 * d + treatments)
        return Cost(resident=float(d) ** 2, memory={"confounders": phase})

    def step(self, state: State) -> State:
        W, X = state.W, state.X_adjusted
        d = W.shape[0]
        treatments = np.flatnonzero(
            bounded_treatments(X, state.problem.coding, W, self.max_treatments))
        contribution = np.einsum("ij,ij->i", W, W)
        relevant = contribution >= self.irrelevant_tol * contribution.max()
        if self.correlation == "cosine":
            norms = np.sqrt(contribution)
            unit = W / np.where(norms > 0, norms, 1.0)[:, None]
            similarity = np.abs(unit @ unit[treatments].T)
        else:
            similarity = pearson_similarity(X, treatments)
        # candidates of treatment r: relevant features other than r itself
        candidates = relevant[:, None] & (np.arange(d)[:, None] != treatments[None, :])
        similarity = np.where(candidates, similarity, 0.0)
        largest = similarity.max(axis=0)
        normalized = similarity / np.where(largest > 0, largest, 1.0)
        K = np.zeros((d, d), dtype=bool)
        K[:, treatments] = candidates & (normalized >= self.sigma) & (largest > 0)[None, :]
        return state.replace(K=K)
