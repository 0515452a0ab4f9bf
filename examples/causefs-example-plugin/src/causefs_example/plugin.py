"""The plugin module named by the ``causefs`` entry point: the registration hooks."""

from causefs.plugins import hookimpl

from .laplace_kernel import LaplaceKernel
from .osqp_backend import OSQPBackend
from .procrustes_embedding import ProcrustesEmbeddingBlock
from .ridge_term import RidgeTerm
from .variance_selector import VarianceSelector

#: the blocks of CAUSE-FS's schedule (``full``), which the schedules below build on
PAPER_INIT = ["uniform_weights", "correlation_groups", "initial_fused_graph",
              "initial_granular_graphs", "spectral_embedding", "initial_selection",
              "initial_confounders"]
PAPER_LOOP = ["selection_matrix", "granular_graphs", "fused_graph", "embedding",
              "sample_weights", "granularity", "confounders"]

#: CAUSE-FS with an elastic net on W: the paper's blocks and terms, and the ridge term
ELASTIC_NET_SCHEDULE = {
    "name": "elastic_net",
    "init": PAPER_INIT,
    "loop": PAPER_LOOP,
    "terms": ["regression", "fused_smoothness", "sparsity", "granular_graphs", "fusion",
              "balance", {"name": "ridge", "weight": 0.1}],
}

#: the paper's schedule with a Procrustes rotation of F before every embedding update
PROCRUSTES_SCHEDULE = {
    "name": "procrustes",
    "init": PAPER_INIT,
    "loop": [*PAPER_LOOP[:3], "procrustes_embedding", *PAPER_LOOP[3:]],
}


@hookimpl
def causefs_register_blocks(registry):
    registry.add_block(ProcrustesEmbeddingBlock)


@hookimpl
def causefs_register_terms(registry):
    registry.add_term(RidgeTerm)


@hookimpl
def causefs_register_kernels(registry):
    registry.add_kernel(LaplaceKernel)


@hookimpl
def causefs_register_qp_backends(registry):
    registry.add_qp_backend(OSQPBackend)


@hookimpl
def causefs_register_schedules(registry):
    registry.add_schedule(PROCRUSTES_SCHEDULE)
    registry.add_schedule(ELASTIC_NET_SCHEDULE)


@hookimpl
def causefs_register_selectors(registry):
    registry.add_selector(VarianceSelector)
