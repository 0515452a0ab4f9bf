"""The plugin module named by the ``causefs`` entry point: the registration hooks."""

from causefs.plugins import hookimpl

from .laplace_kernel import LaplaceKernel
from .osqp_backend import OSQPBackend
from .procrustes_embedding import ProcrustesEmbeddingBlock
from .variance_selector import VarianceSelector

#: the paper's schedule with a Procrustes rotation of F before every embedding update
PROCRUSTES_SCHEDULE = {
    "name": "procrustes",
    "init": ["uniform_weights", "initial_confounders", "correlation_groups",
             "initial_fused_graph", "initial_granular_graphs", "spectral_embedding",
             "initial_selection"],
    "loop": ["selection_matrix", "granular_graphs", "fused_graph", "procrustes_embedding",
             "embedding", "sample_weights", "granularity", "confounders"],
    "params": {},
}


@hookimpl
def causefs_register_parts(registry):
    registry.add_block(ProcrustesEmbeddingBlock)
    registry.add_kernel(LaplaceKernel)
    registry.add_qp_backend(OSQPBackend)
    registry.add_schedule(PROCRUSTES_SCHEDULE)


@hookimpl
def causefs_register_selectors(registry):
    registry.add_selector(VarianceSelector)
