"""Optimization blocks: one variable update of Algorithm 1 each (a plugin kind).

============================  ===========================  ==========  ============  ======================
registry name                 class                        room        kind          paper
============================  ===========================  ==========  ============  ======================
uniform_weights               UniformWeightsBlock          initial.    init          mu = 1/n
initial_confounders           InitialConfoundersBlock      initial.    init          K[:, r] = all but r
correlation_groups            CorrelationGroupsBlock       initial.    init          Delta_m, nu
initial_granular_graphs       InitialGranularGraphsBlock   initial.    init          S^(m)
initial_fused_graph           InitialFusedGraphBlock       initial.    init          G
spectral_embedding            SpectralEmbeddingBlock       initial.    init          F
initial_selection             InitialSelectionBlock        initial.    init          W (D = I)
decorrelation_weights         DecorrelationWeightsBlock    initial.    init          mu (DWR)
density_ratio_weights         DensityRatioWeightsBlock     initial.    init          mu (SRDO)
selection_matrix              SelectionMatrixBlock         descent     descent       W (eq. W.3)
granular_graphs               GranularGraphsBlock          descent     descent       S^(m) (eq. S.5)
fused_graph                   FusedGraphBlock              descent     descent       G (eq. G.3)
embedding                     EmbeddingBlock               descent     descent       F (eq. F.2)
sample_weights                SampleWeightsBlock           descent     descent       mu (eq. u.3)
granularity                   GranularityBlock             structure   structural    Delta_m, nu
confounders                   ConfoundersBlock             structure   structural    confounder sets K
nuisance_centering            NuisanceCenteringBlock       nuisance    init          Theta (Z)
nuisance_effect               NuisanceEffectBlock          nuisance    structural    Theta (Z)
nuisance_balance_weights      NuisanceBalanceWeightsBlock  nuisance    init          mu (Z)
============================  ===========================  ==========  ============  ======================

Rooms: ``initialization/`` builds the variables before the loop, ``descent/`` lowers the
objective (each block solves the subproblem the objective's terms assemble for it),
``structure/`` changes the objective itself, ``nuisance/`` uses known nuisance variables
Z. ``decorrelation_weights`` and ``density_ratio_weights`` are not the paper's:
deconfounding weights from the stable-learning literature (Kuang et al. 2020; Shen et
al. 2020), used by the ``dwr`` and ``srdo`` schedules. Nor are the ``nuisance_*``
blocks, which use Z (``fit(X, nuisance=Z)``): the blocks after them fit ``X_adjusted``,
X with Z's effect removed (docs/MODEL.md, "Known nuisance variables").
"""

from .base import EVERY_TERM, KINDS, Block
from .descent.embedding import EmbeddingBlock
from .descent.fused_graph import FusedGraphBlock
from .descent.granular_graphs import GranularGraphsBlock
from .descent.sample_weights import SampleWeightsBlock
from .descent.selection_matrix import SelectionMatrixBlock
from .initialization.correlation_groups import CorrelationGroupsBlock
from .initialization.decorrelation_weights import DecorrelationWeightsBlock
from .initialization.density_ratio_weights import DensityRatioWeightsBlock
from .initialization.initial_confounders import InitialConfoundersBlock
from .initialization.initial_graphs import InitialFusedGraphBlock, InitialGranularGraphsBlock
from .initialization.initial_selection import InitialSelectionBlock
from .initialization.spectral_embedding import SpectralEmbeddingBlock
from .initialization.uniform_weights import UniformWeightsBlock
from .nuisance.nuisance_adjustment import NuisanceCenteringBlock, NuisanceEffectBlock
from .nuisance.nuisance_balance_weights import NuisanceBalanceWeightsBlock
from .structure.confounders import ConfoundersBlock
from .structure.granularity import GranularityBlock

BUILTIN_BLOCKS = (
    UniformWeightsBlock,
    InitialConfoundersBlock,
    CorrelationGroupsBlock,
    InitialGranularGraphsBlock,
    InitialFusedGraphBlock,
    SpectralEmbeddingBlock,
    InitialSelectionBlock,
    SelectionMatrixBlock,
    GranularGraphsBlock,
    FusedGraphBlock,
    EmbeddingBlock,
    SampleWeightsBlock,
    GranularityBlock,
    ConfoundersBlock,
    DecorrelationWeightsBlock,
    DensityRatioWeightsBlock,
    NuisanceCenteringBlock,
    NuisanceEffectBlock,
    NuisanceBalanceWeightsBlock,
)

__all__ = ["EVERY_TERM", "KINDS", "Block", "BUILTIN_BLOCKS"] + [
    cls.__name__ for cls in BUILTIN_BLOCKS]
