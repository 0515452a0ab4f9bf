"""A descent block: rotate F towards the regression target (orthogonal Procrustes)."""

import numpy as np

from causefs.blocks import Block


class ProcrustesEmbeddingBlock(Block):
    """``F <- F Q`` with the rotation Q that best aligns F with ``X~ W``.

    ``Q = U V'`` from the SVD ``F' X~ W = U s V'`` maximizes ``Tr(Q' F' X~ W)``, so the
    regression term cannot rise; ``F Q`` keeps ``F'F = I`` and the graph term
    ``Tr(Q'F' L_G F Q) = Tr(F' L_G F)`` is unchanged: a descent block with no option.
    """

    name = "procrustes_embedding"
    kind = "descent"
    reads = ("X_adjusted", "mu", "W", "F")
    writes = ("F",)
    # the terms of CAUSE-FS that depend on F, for which the update was derived: a
    # schedule whose objective has another term depending on F is refused
    derived_for = ("regression", "fused_smoothness")

    def step(self, state):
        target = state.mu[:, None] * (state.X_adjusted @ state.W)
        U, _, Vt = np.linalg.svd(state.F.T @ target)
        return state.replace(F=state.F @ (U @ Vt))
