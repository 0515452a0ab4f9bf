"""The rankings of benchmarks/ranking_check.py (the group quota's places, worked by hand;
the stored means it compares with, read off the development table's ACC cells) and the
rule of benchmarks/default_settings_check.py, each of whose parts can fail alone."""

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import ranking_check  # noqa: E402

SCORES = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.5, 0.1, 0.0])
GROUPS = np.array([0, 0, 0, 1, 1, 2, 2, -1])  # masses 12, 3 and 0.6 of 15.6


@pytest.mark.parametrize("k, expected", [
    # 3 x (12, 3, 0.6) / 15.6 = 2.31, 0.58, 0.12: floors 2, 0, 0, the last place to group 1
    (3, [0, 1, 3]),
    # 5 x ... = 3.85, 0.96, 0.19: group 0 full at 3, groups 1 and 2 one place each
    (5, [0, 1, 2, 3, 5]),
    # more places than grouped features: every grouped feature, never the ungrouped one
    (8, [0, 1, 2, 3, 4, 5, 6]),
])
def test_the_group_quota_shares_the_places_by_the_groups_scores(k, expected):
    assert ranking_check.group_quota(SCORES, GROUPS, k).tolist() == expected


def test_without_scores_the_places_are_shared_by_the_groups_sizes():
    # 4 x (3, 2, 2) / 7 = 1.71, 1.14, 1.14: floors 1, 1, 1, the last place to group 0
    chosen = ranking_check.group_quota(np.zeros(8), GROUPS, 4)
    assert sorted(chosen.tolist()) == [0, 1, 3, 5]


def test_the_stored_means_are_read_off_the_acc_table_of_the_development_benchmark(tmp_path):
    page = tmp_path / "RESULTS.md"
    page.write_text("\n".join([
        "text", ranking_check.dev_benchmark.BEGIN, "### ACC (%) at 20 features (k-means x 20)",
        "", "| method | lsvt | jaffe | mean rank | wins over random |", "|---|---|---|---|---|",
        "| Random | 58.4 ± 0.8 | 75.3 | 6.85 | 13 |",
        "| NDFS | 53.2 ± 2.5 | **90.2 ± 2.5** | 5.31 | 10 |",
        "", "### NMI (%) at 20 features (k-means x 20)", "",
        "| method | lsvt | jaffe | mean rank | wins over random |", "|---|---|---|---|---|",
        "| Random | 5.4 | 80.4 | 6.46 | 13 |", ranking_check.dev_benchmark.END]))
    assert ranking_check.stored_means(page) == {"Random": {"lsvt": 58.4, "jaffe": 75.3},
                                                "NDFS": {"lsvt": 53.2, "jaffe": 90.2}}


def _summary(shift=0.0, **cells):
    import dev_benchmark

    base = {d: 50.0 for d in dev_benchmark.DATASETS}
    base.update(cells)
    base = {d: v + shift for d, v in base.items()}
    return {"cells": base, "mean": float(np.mean(list(base.values()))), "above_random": 10,
            "above_best": 2, "wide": {"jaffe_up__0": 80.0 + shift}, "blocks": 50.0 + shift}


def test_a_candidate_better_everywhere_passes_every_part_of_the_default_rule():
    import default_settings_check

    parts = default_settings_check.verdict(_summary(1.5), _summary())
    assert all(parts.values())


def _changed(summary, **parts):
    return {**summary, **parts}


@pytest.mark.parametrize("candidate, failed", [
    (_summary(0.9), "(a)"),  # higher everywhere, but by less than a point
    # over a point higher on average, but below the default on 5 of 13
    (_summary(**{d: 50.0 + (5.0 if i < 8 else -0.1) for i, d in enumerate(
        ranking_check.dev_benchmark.DATASETS)}), "(b)"),
    (_changed(_summary(1.5), above_best=1), "(c)"),
    (_summary(3.0, jaffe=44.0), "(d)"),  # JAFFE 3 points lower than the default's 50
    (_changed(_summary(1.5), wide={"jaffe_up__0": 77.9}), "(e)"),
    (_changed(_summary(1.5), blocks=48.9), "(e)"),
])
def test_each_part_of_the_default_rule_can_fail_alone(candidate, failed):
    import default_settings_check

    parts = default_settings_check.verdict(candidate, _summary())
    assert [part[:3] for part, passed in parts.items() if not passed] == [failed]


def test_a_summary_is_the_mean_over_the_resamples_against_the_stored_means(tmp_path):
    import json

    datasets = ranking_check.dev_benchmark.DATASETS
    for i, d in enumerate(datasets):  # resamples 40 + i and 44 + i: a mean of 42 + i
        for number, value in enumerate([40.0, 44.0, 40.0, 44.0]):
            (tmp_path / f"{d}__{number}.json").write_text(
                json.dumps({"norm": {"acc": value + i}}))
    for case in [f"wide_{c}__{s}" for c in ranking_check.WIDE for s in (0, 1)]:
        (tmp_path / f"{case}.json").write_text(json.dumps({"norm": {"acc": 80.0}}))
    for b in ranking_check.BLOCK_NOISES:
        for s in range(3):
            (tmp_path / f"blocks_{b}__{s}.json").write_text(
                json.dumps({"norm": {"acc": 50.0 + s}}))
    # random features at 45 everywhere; the strong selectors' best at 50
    stored = {"Random": {d: 45.0 for d in datasets},
              **{s: {d: 50.0 - k for d in datasets}
                 for k, s in enumerate(ranking_check.STRONG)}}
    found = ranking_check.summary(tmp_path, stored, "norm")
    assert found["cells"] == {d: 42.0 + i for i, d in enumerate(datasets)}
    assert found["mean"] == pytest.approx(42.0 + (len(datasets) - 1) / 2)
    assert found["above_random"] == len(datasets) - 3  # 45.0 and up: i >= 3
    assert found["above_best"] == len(datasets) - 8  # 50.0 and up: i >= 8
    assert set(found["wide"].values()) == {80.0}
    assert found["blocks"] == pytest.approx(51.0)
