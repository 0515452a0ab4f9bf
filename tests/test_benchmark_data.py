"""On the paper's benchmark files (slow: select with ``-m slow``).

Every schedule, kernel and QP backend runs on the real datasets, and the fast path gives
the dense paper-literal reference's objective and features.
"""

import itertools

import numpy as np
import pytest

from causefs import CauseFS
from causefs.datasets import load_dataset
from causefs.engine import build_parts, uses_nuisance
from causefs.plugins import available

pytestmark = [pytest.mark.slow, pytest.mark.short_fit]  # short fits: tests/conftest.py

def parts_choices(schedule: str) -> list:
    """Every kernel and QP backend the schedule reads, each combined with the others;
    the library's default (None: not passed) for a part it does not read (passing one
    would warn that it is unused, and would run the same fit again)."""
    used = build_parts(CauseFS(schedule=schedule).settings()).used_settings()
    return list(itertools.product(*(available(part) if part in used else [None]
                                     for part in ("kernel", "qp"))))


COMBINATIONS = [(dataset, schedule, kernel, qp)
                for dataset in ("jaffe", "umist", "coil20")
                for schedule in available("schedule")
                for kernel, qp in parts_choices(schedule)]


@pytest.mark.parametrize("dataset, schedule, kernel, qp", COMBINATIONS)
def test_every_combination_runs_on_the_benchmarks(data_dir, dataset, schedule, kernel, qp):
    data = load_dataset(dataset, data_home_path=data_dir)
    given = {name: value for name, value in (("kernel", kernel), ("qp", qp)) if value}
    est = CauseFS(n_clusters=int(np.unique(data.y).size), n_features_to_select=20,
                  schedule=schedule, max_iter=2, random_state=0, **given)
    # a schedule that adjusts for nuisance variables gets some (labels tied to no class)
    nuisance = np.arange(len(data.X)) % 2 if uses_nuisance(build_parts(est.settings())) \
        else None
    est.fit(data.X, nuisance=nuisance)
    assert np.all(np.isfinite(est.scores_)) and est.support_.sum() == 20
    assert np.all(np.isfinite(est.objective_history_)) and est.n_iter_ == 2


def exact_mu_schedule():
    """The full schedule with the mu block solving its QP exactly in float64."""
    from causefs.engine import resolve_schedule

    full = resolve_schedule("full")
    loop = [{"name": name, "max_products": None, "precision": "float64"}
            if name == "sample_weights" else name for name in full.loop]
    return {"name": "full_exact_mu", "init": list(full.init), "loop": loop}


def test_fast_path_matches_the_dense_reference(data_dir):
    """Matrix-free products and kNN candidates give the dense reference's objective and
    features when the mu solve is exact; the default budgeted solve stays close."""
    data = load_dataset("jaffe", data_home_path=data_dir)
    common = dict(n_clusters=10, n_features_to_select=20, max_iter=10, random_state=0,
                  schedule=exact_mu_schedule())
    fast = CauseFS(**common).fit(data.X)
    reference = CauseFS(**common, qp="cvxpy", neighbor_algorithm="all",
                        memory_limit=None).fit(data.X)
    final = reference.objective_history_[-1]
    assert abs(fast.objective_history_[-1] - final) <= 1e-4 * abs(final)
    assert np.count_nonzero(fast.support_ & reference.support_) >= 19
    budgeted = CauseFS(**{**common, "schedule": "full"}).fit(data.X)
    assert budgeted.objective_history_[-1] <= final * 1.02
