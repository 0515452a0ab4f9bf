"""Optimization blocks: one variable update of Algorithm 1 each.

============================  =========================  ============  ===============
registry name                 class                      kind          paper
============================  =========================  ============  ===============
uniform_weights               UniformWeightsBlock        init          mu = 1/n
initial_confounders           InitialConfoundersBlock    init          Z^r = X \\ x_r
correlation_groups            CorrelationGroupsBlock     init          Delta_m, nu
initial_granular_graphs       InitialGranularGraphsBlock init          S^(m)
initial_fused_graph           InitialFusedGraphBlock     init          G
spectral_embedding            SpectralEmbeddingBlock     init          F
initial_selection             InitialSelectionBlock      init          W (D = I)
selection_matrix              SelectionMatrixBlock       descent       W, D (eq. W.3)
granular_graphs               GranularGraphsBlock        descent       S^(m) (eq. S.5)
fused_graph                   FusedGraphBlock            descent       G (eq. G.3)
embedding                     EmbeddingBlock             descent       F (eq. F.2)
sample_weights                SampleWeightsBlock         descent       mu (eq. u.3)
granularity                   GranularityBlock           structural    Delta_m, nu
confounders                   ConfoundersBlock           structural    Z^r
decorrelation_weights         DecorrelationWeightsBlock  init          mu (DWR)
density_ratio_weights         DensityRatioWeightsBlock   init          mu (SRDO)
nuisance_centering            NuisanceCenteringBlock     init          Theta (Z)
nuisance_effect               NuisanceEffectBlock        structural    Theta (Z)
nuisance_balance_weights      NuisanceBalanceWeightsBlock init         mu (Z)
============================  =========================  ============  ===============

The last five are not the paper's. ``decorrelation_weights`` and
``density_ratio_weights`` are deconfounding weights from the stable-learning
literature (Kuang et al. 2020; Shen et al. 2020), used by the ``dwr`` and ``srdo``
schedules. The ``nuisance_*`` blocks use known nuisance variables Z (``fit(X,
nuisance=Z)``): the blocks after them fit X with Z's effect removed (docs/MODEL.md,
"Known nuisance variables").
"""

from .base import KINDS, Block
from .confounders import ConfoundersBlock
from .correlation_groups import CorrelationGroupsBlock
from .decorrelation_weights import DecorrelationWeightsBlock
from .density_ratio_weights import DensityRatioWeightsBlock
from .embedding import EmbeddingBlock
from .fused_graph import FusedGraphBlock
from .granular_graphs import GranularGraphsBlock
from .granularity import GranularityBlock
from .initial_confounders import InitialConfoundersBlock
from .initial_graphs import InitialFusedGraphBlock, InitialGranularGraphsBlock
from .initial_selection import InitialSelectionBlock
from .nuisance_adjustment import NuisanceCenteringBlock, NuisanceEffectBlock
from .nuisance_balance_weights import NuisanceBalanceWeightsBlock
from .sample_weights import SampleWeightsBlock
from .selection_matrix import SelectionMatrixBlock
from .spectral_embedding import SpectralEmbeddingBlock
from .uniform_weights import UniformWeightsBlock

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

__all__ = ["KINDS", "Block", "BUILTIN_BLOCKS"] + [cls.__name__ for cls in BUILTIN_BLOCKS]
