"""Estimate the peak memory of a fit before it starts, and refuse one that would not fit.

The estimate adds the arrays that live through the whole fit (data, treatment coding,
W, F, graphs) to the largest temporary of any phase (the d x d systems of the W update
and of feature clustering, the candidate tables of the graph updates, the balance
operator, and the n x n matrices of the dense reference paths). Each term is an upper
bound of what the code allocates, in float64.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from .blocks.selection_matrix import selection_system_cost
from .kernels.base import gram_fits
from .treatments import treatment_cap

_FLOAT = 8
_LIBRARIES = 64 << 20


class MemoryLimitError(MemoryError):
    """A fit whose estimated peak memory exceeds the budget."""


@dataclass(frozen=True)
class MemoryEstimate:
    """Estimated bytes: ``resident`` for the whole fit, ``peak`` with the worst phase."""

    resident: int
    phases: dict

    @property
    def peak(self) -> int:
        return self.resident + max(self.phases.values(), default=0)

    @property
    def worst_phase(self) -> str:
        return max(self.phases, key=self.phases.get)


def available_memory() -> int | None:
    """Bytes of memory available now (Linux/macOS ``sysconf``), or None if unknown."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        return None


_UNITS = (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1))


def parse_bytes(value) -> int | None:
    """``"8GB"``, ``"512 MB"``, ``2e9`` or None -> bytes (a positive int).

    Raises
    ------
    ValueError
        Anything else: text without a number, a bool, NaN, infinity, or a size <= 0.
    """
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip().upper().replace(" ", "")
        factor = next((f for unit, f in _UNITS if text.endswith(unit)), 1)
        digits = next((text[: -len(unit)] for unit, _ in _UNITS if text.endswith(unit)), text)
        try:
            number = float(digits) * factor
        except ValueError:
            number = math.nan
    else:
        number = math.nan
    if not math.isfinite(number) or number < 1:
        raise ValueError(f"memory_limit={value!r}: must be 'auto', null (no check), a number "
                         "of bytes >= 1 or a size such as '8GB' (units B, KB, MB, GB, TB)")
    return int(number)


def parse_memory_limit(limit) -> int | str | None:
    """``limit`` checked: ``"auto"``, None or bytes (:func:`parse_bytes`)."""
    if limit == "auto" or limit is None:
        return limit
    return parse_bytes(limit)


def estimate_fit_memory(n: int, d: int, *, n_clusters: int, n_neighbors: int,
                        max_granularity: int, qp: str, kernel: str = "linear",
                        kernel_components: int = 50, kernel_exact: bool = False,
                        neighbor_algorithm: str = "auto",
                        balance_form: str = "auto",
                        max_treatments="auto") -> MemoryEstimate:
    """Upper-bound estimate of a CauseFS fit's memory in bytes.

    Parameters mirror :class:`causefs.CauseFS`; ``qp`` and ``kernel`` are registry names
    (unknown plugins are assumed matrix-free), ``kernel_exact`` says whether an rbf
    kernel resolves to its exact (dense) form, ``max_treatments`` bounds the balance
    term's treatments (:mod:`causefs.treatments`). ``balance_form="auto"`` is counted as the
    Gram wherever that may be chosen (an upper bound).
    """
    h, k, M = n_clusters, n_neighbors, max_granularity
    # modules imported on first use during a fit and allocator slack: 30 MB measured on
    # JAFFE (n = 213), where the fit's arrays take about 5 MB (benchmarks/bench_scale.py)
    resident = _LIBRARIES
    # X as given, validated copy, scaled copy, the active copy, treatment coding
    resident += 5 * n * d * _FLOAT
    resident += 4 * d * h * _FLOAT + 3 * n * h * _FLOAT  # W, D, F and their successors
    resident += 2 * (M + 1) * n * k * (_FLOAT + 8)  # S[m], G (values, indices) x 2 states
    resident += 2 * d * d  # K, bool, current and previous
    phases = {}
    cost = selection_system_cost(n, d, [max(1, d // max(M, 1))] * max(M, 1))
    if cost["primal"] <= cost["dual"]:
        phases["selection_matrix"] = 3 * d * d * _FLOAT + 2 * n * d * _FLOAT
    else:  # the n x n (Woodbury) form: C^-1 X~' and X~ blocks, n x n systems
        phases["selection_matrix"] = (4 * n * d + 4 * n * n) * _FLOAT
    # |corr| (d, d), its condensed distances and SciPy's copy of them
    phases["feature_clustering"] = 2.5 * d * d * _FLOAT
    width = (k + 1) + M * k  # kNN candidates plus the prior's support (G update)
    phases["graph_candidates"] = 6 * n * width * _FLOAT + 2 * n * max(h, 1) * _FLOAT
    # the balance operator keeps X_V, A_T and its (d, d) pair weights, two operators are
    # cached, and a product makes (d, d) moments and their weighted copy: 1.27 GiB measured
    # at n = 1000, d = 5000, where 2 d^2 doubles had estimated 0.98 GiB in all
    treatments = treatment_cap(max_treatments, n, d, d)
    phases["balance_operator"] = 3 * n * d * _FLOAT + 6 * d * treatments * _FLOAT
    if kernel == "rbf":
        if kernel_exact:
            phases["balance_operator"] = 3 * n * n * _FLOAT
        else:
            phases["balance_operator"] = (n * d * kernel_components + 3 * n * d) * _FLOAT
    elif balance_form == "gram" or (balance_form == "auto" and gram_fits(n)):
        # H, and the (512, n) row blocks it is built from
        phases["balance_operator"] += (n * n + 3 * 512 * n) * _FLOAT
    if qp == "cvxpy":
        # dense P and its scaled copy, cvxpy's sparse canonical copy (values and indices),
        # Clarabel's KKT matrix and factor: 11.4 GB measured at n = 9298 (USPS, rbf),
        # about 16 n^2 doubles; 20 n^2 bounds it
        phases["dense_qp"] = 20 * n * n * _FLOAT + phases["balance_operator"]
    if neighbor_algorithm == "all":
        phases["graph_candidates"] = 5 * n * n * _FLOAT
    return MemoryEstimate(resident=int(resident), phases={k: int(v) for k, v in phases.items()})


def _advice(estimate: MemoryEstimate, qp: str, kernel: str, neighbor_algorithm: str,
            balance_form: str) -> str:
    phase = estimate.worst_phase
    if phase == "dense_qp":
        return "use a matrix-free QP backend: qp='gradient_projection_cg'"
    if phase == "graph_candidates" and neighbor_algorithm == "all":
        return "use a kNN candidate search: neighbor_algorithm='auto'"
    if phase == "balance_operator" and kernel == "linear" and balance_form != "products":
        return "hold the balance term as products: balance_form='products'"
    if phase == "balance_operator" and kernel == "rbf":
        return ("use fewer random features (kernel={'name': 'rbf', 'n_components': ...}) "
                "or kernel='linear'")
    if phase in ("selection_matrix", "feature_clustering"):
        return "reduce the number of features (d x d systems dominate)"
    return "reduce the number of samples"


def check_memory(estimate: MemoryEstimate, limit, *, qp: str, kernel: str,
                 neighbor_algorithm: str, balance_form: str = "auto") -> None:
    """Raise :class:`MemoryLimitError` when the estimated peak exceeds ``limit``.

    ``limit``: bytes, a string such as ``"8GB"``, ``"auto"`` (80% of the memory
    available now), or None (no check).
    """
    budget = parse_memory_limit(limit)
    if budget is None:
        return
    if budget == "auto":
        available = available_memory()
        if available is None:
            return
        budget = int(0.8 * available)
    if estimate.peak > budget:
        gib = 1 << 30
        raise MemoryLimitError(
            f"this fit needs an estimated {estimate.peak / gib:.2f} GiB at its peak "
            f"({estimate.worst_phase}: {estimate.phases[estimate.worst_phase] / gib:.2f} GiB), "
            f"more than the budget of {budget / gib:.2f} GiB (memory_limit={limit!r}); "
            f"{_advice(estimate, qp, kernel, neighbor_algorithm, balance_form)}, or raise memory_limit"
        )
