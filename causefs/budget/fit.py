"""A fit's time and memory, summed over the parts it is made of."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.parts import Cost
from ..model.fit_size import FitSize
from . import runtime
from .memory import MemoryEstimate

_FLOAT = 8
#: modules imported on first use during a fit and allocator slack (docs/PERFORMANCE.md)
LIBRARY_BYTES = 64 << 20
#: iterations a fit with stopping rules is priced at (at most max_iter): the default
#: fits stopped by the selection's stability after 6 to 20 (digits 7-10, JAFFE 11-13,
#: UMIST 18-20, COIL20 15-17, USPS 13-15, 20,000 to 100,000 x 64: 6; docs/PERFORMANCE.md),
#: and 11 is within 2x of both ends; pricing max_iter = 30 overstated them 2-5x
EXPECTED_ITERATIONS = 11


@dataclass(frozen=True)
class FitEstimate:
    """Estimated seconds (an order of magnitude) and memory of a fit."""

    seconds: float
    memory: MemoryEstimate


def state_bytes(size: FitSize) -> int:
    """What a fit keeps throughout: the data and its copies, the variables, the graphs
    (the confounder sets K, (d, d) bools, are declared by the blocks that make them)."""
    n, d, h = size.n_samples, size.n_features, size.n_clusters
    k, M = size.n_neighbors, size.n_granularities
    resident = LIBRARY_BYTES
    # X as given, validated copy, scaled copy, the active copy, treatment coding
    resident += 5 * n * d * _FLOAT
    resident += 4 * d * h * _FLOAT + 3 * n * h * _FLOAT  # W, D, F and their successors
    resident += 2 * (M + 1) * n * k * (_FLOAT + 8)  # S[m], G (values, indices) x 2 states
    return resident  # K, where a schedule has confounder sets: their blocks' resident


def expected_iterations(max_iter: int, stops_early: bool) -> int:
    """The iterations a fit is priced at: ``max_iter``, or :data:`EXPECTED_ITERATIONS`
    when fewer and the fit has stopping rules (``stops_early``)."""
    return min(max_iter, EXPECTED_ITERATIONS) if stops_early else max_iter


def estimate_fit(size: FitSize, init, loop, kernel, qp, max_iter: int,
                 structure_iter: int | None = None) -> FitEstimate:
    """Time and memory of a fit running the ``init`` blocks once and the ``loop`` blocks
    ``max_iter`` times (the iterations it is priced at, :func:`expected_iterations`), with ``kernel``'s balance operator and the ``qp`` backend; the
    structural blocks run in the first ``structure_iter`` iterations only (every
    iteration when None), as the loop runs them (:mod:`causefs.core.loop`).

    A block's balance products are priced by the kernel (its cost is that of one
    product); the QP backend's phases run while the balance operator is held, so the
    operator's memory counts in them too.
    """
    init_costs = [block.cost(size) for block in init]
    loop_costs = [block.cost(size) for block in loop]
    product = kernel.cost(size)
    structural = max_iter if structure_iter is None else min(structure_iter, max_iter)
    used = init_costs + [_times(c, structural if block.kind == "structural" else max_iter)
                         for block, c in zip(loop, loop_costs)]
    products = sum(c.balance_products for c in used)
    flops = sum(c.flops for c in used) + products * product.flops
    ops = sum(c.ops for c in used) + products * product.ops
    operator = max(product.memory.values(), default=0.0)
    solver = qp.cost(size)
    solver = Cost(memory={phase: b + operator for phase, b in solver.memory.items()},
                  advice=solver.advice, resident=solver.resident)
    phases, advice = {}, {}
    for cost in (*init_costs, *loop_costs, product, solver):
        for phase, nbytes in cost.memory.items():
            phases[phase] = max(phases.get(phase, 0), int(nbytes))
        advice.update(cost.advice)
    resident = state_bytes(size) + sum(c.resident for c in (*init_costs, *loop_costs,
                                                            product, solver))
    memory = MemoryEstimate(resident=int(resident), phases=phases, advice=advice)
    return FitEstimate(seconds=runtime.seconds(flops, ops), memory=memory)


def _times(cost: Cost, count: int) -> Cost:
    return Cost(flops=count * cost.flops, ops=count * cost.ops,
                balance_products=count * cost.balance_products, resident=cost.resident,
                memory=cost.memory, advice=cost.advice)
