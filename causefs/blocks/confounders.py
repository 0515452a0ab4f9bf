"""Confounder pruning (Algorithm 1, line 11): refine the confounder set of every treatment."""

from __future__ import annotations

import numpy as np

from ..state import State
from .base import Block

CORRELATIONS = ("cosine", "pearson")


def pearson_similarity(X: np.ndarray) -> np.ndarray:
    """``|corr(x_f, x_g)|`` of data columns, (d, d); constant columns correlate 0."""
    Z = X - X.mean(axis=0)
    norms = np.linalg.norm(Z, axis=0)
    Z = Z / np.where(norms > 0, norms, 1.0)
    return np.abs(Z.T @ Z)


class ConfoundersBlock(Block):
    """``K[:, r]`` = all features minus r, minus irrelevant features U, minus adjustment features.

    * U: features whose contribution ``||W_f||^2`` is below ``irrelevant_tol`` times the
      largest (the paper's all-zero rows of W, for an IRLS solution that is never
      exactly zero).
    * adjustment features of r: candidates whose correlation with r, divided by the
      largest correlation among r's candidates, is below ``sigma``. Correlation is the
      |cosine| of W rows (default) or the |Pearson| correlation of the data columns.

    Only treatments (features with a non-zero coding) get confounders. Structural.

    Parameters
    ----------
    sigma : float
        Adjustment threshold in [0, 1] (the paper: sigma <= 0.2).
    irrelevant_tol : float
        Relative contribution below which a feature is irrelevant.
    correlation : {"cosine", "pearson"}
    """

    name = "confounders"
    kind = "structural"
    reads = ("X", "W")
    writes = ("K",)

    def __init__(self, sigma: float = 0.2, irrelevant_tol: float = 1e-3,
                 correlation: str = "cosine"):
        if correlation not in CORRELATIONS:
            raise ValueError(
                f"unknown correlation {correlation!r}; allowed: {', '.join(CORRELATIONS)}"
            )
        if not 0 <= sigma <= 1:
            raise ValueError(f"sigma must lie in [0, 1], got {sigma}")
        self.sigma = sigma
        self.irrelevant_tol = irrelevant_tol
        self.correlation = correlation

    def step(self, state: State) -> State:
        W, X = state.W, state.X
        d = W.shape[0]
        contribution = np.einsum("ij,ij->i", W, W)
        relevant = contribution >= self.irrelevant_tol * contribution.max()
        if self.correlation == "cosine":
            norms = np.sqrt(contribution)
            unit = W / np.where(norms > 0, norms, 1.0)[:, None]
            similarity = np.abs(unit @ unit.T)
        else:
            similarity = pearson_similarity(X)
        candidates = relevant[:, None] & ~np.eye(d, dtype=bool)
        candidates &= np.any(state.problem.coding != 0, axis=0)[None, :]
        similarity = np.where(candidates, similarity, 0.0)
        largest = similarity.max(axis=0)
        normalized = similarity / np.where(largest > 0, largest, 1.0)
        K = candidates & (normalized >= self.sigma) & (largest > 0)[None, :]
        return state.replace(K=K)
