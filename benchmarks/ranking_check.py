"""Rankings read from the same CAUSE-FS fits: would another rule pick better top 20s?

    export CAUSEFS_DATA=../shared/datasets
    python benchmarks/ranking_check.py --out results/ranking_check
    python benchmarks/ranking_check.py --out results/ranking_check --report

Every ranking is read from one default fit per case (``CauseFS(n_clusters=<classes>,
n_features_to_select=20, random_state=0, preprocessing="none")`` on the development
benchmark's data, scaled once on the whole dataset as ``benchmarks/dev_benchmark.py``
hands it to every method, whole and on its three seeded 80 % subsamples; so the
``norm`` ranking is the development benchmark's CAUSE-FS cell), then k-means x 20 on each
top 20 (ACC and NMI in %). Besides the 13 datasets: the wide stand-ins of
``benchmarks/wide_data.py`` (seeds 0 and 1) and the correlated-block data of
``benchmarks/redundancy_check.py`` (a signal copied 40 times, block noise 0.1 and 0.3,
seeds 0-2). Every job is one JSON file written atomically, so a re-run resumes; a job
holds every ranking of its fit, so a ranking added here needs a new ``--out`` folder.

The rankings:

- ``norm``: ``||W_f||``, the paper's rule and the default.
- ``contribution``: ``||W_f|| sd(x_f)``, measured and not adopted on 2026-11-29
  (docs/MODEL.md, "The features' contributions as scores"; measured then by this
  script's predecessor, ``contribution_score_check.py``, whose fits were
  ``--preprocessing minmax``'s). Its rule, written before its first run: a higher mean
  ACC over the datasets, as many datasets at or above random features and at or above
  the best of the five strong selectors, a mean rank among the selectors no worse; and
  no wide stand-in lower by more than 2 points.
- ``group_quota`` (issue 23, item 3: the top k spread over the feature groups the method
  already computes): the k places are shared among the fit's final feature groups
  (``groups_``) in proportion to each group's part of ``sum_f ||W_f||`` (largest
  remainders, ties to the lower group index; a group gets no more places than it has
  features, the rest shared again among the others), and each group fills its places
  with its own best features by ``||W_f||``. A block of correlated features that holds
  most of the score gets most of the places, not all of them.

The rule for adopting ``group_quota``, written before its first run (2026-11-30, 21:30
UTC): on the 13 datasets a higher mean ACC than ``norm``; no fewer datasets at or above
random features and at or above the best of variance, Laplacian score, MCFS, NDFS and
FSDK (their means in docs/RESULTS.md's development table); no wide stand-in lower by
more than 2 points; and on the correlated-block data a mean ACC no lower than ``norm``'s.
It failed every part (docs/MODEL.md, "The top k spread over the feature groups").
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from pathlib import Path

import numpy as np

from causefs import CauseFS
from causefs.app.metrics import kmeans_scores
from causefs.numerics.scaling import scale_features

import dev_benchmark
from bench_scale import stored_result
from feature_groups_sampled import CASES
from redundancy_check import make_blocks

ROOT = Path(__file__).resolve().parents[1]
K = dev_benchmark.DEFAULT_RHO
WIDE = ("jaffe_up", "genes")
BLOCK_NOISES = (0.1, 0.3)
RANKINGS = ("norm", "contribution", "group_quota")
#: the selectors whose best a dataset's cell is compared with (their names in RESULTS.md)
STRONG = ("variance", "LapScore", "MCFS", "NDFS", "FSDK")


def group_quota(scores: np.ndarray, groups: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` features of the ``group_quota`` rule (module docstring), best first.

    ``groups`` holds each feature's group (-1: no group, a constant feature: never
    chosen while a grouped feature is left).
    """
    grouped = np.flatnonzero(groups >= 0)
    labels, members = np.unique(groups[grouped], return_inverse=True)
    sizes = np.bincount(members, minlength=labels.size)
    mass = np.bincount(members, weights=scores[grouped], minlength=labels.size)
    places = np.zeros(labels.size, dtype=np.int64)
    left = min(k, grouped.size)
    while left > 0:
        open_ = places < sizes
        share = np.where(open_, mass, 0.0)
        if share.sum() <= 0:  # no score left: share the places by size
            share = np.where(open_, (sizes - places).astype(float), 0.0)
        ideal = left * share / share.sum()
        whole = np.minimum(np.floor(ideal).astype(np.int64), sizes - places)
        places += whole
        left -= int(whole.sum())
        if left == 0:
            break
        remainder = np.where(open_ & (places < sizes), ideal - np.floor(ideal), -1.0)
        # largest remainders, ties to the lower group index; one round, then re-share
        for g in np.lexsort((np.arange(labels.size), -remainder))[:left]:
            if remainder[g] >= 0 and places[g] < sizes[g]:
                places[g] += 1
                left -= 1
    chosen = []
    for g in range(labels.size):
        own = grouped[members == g]
        chosen.extend(own[np.argsort(-scores[own], kind="stable")[:places[g]]])
    chosen = np.asarray(chosen, dtype=np.int64)
    return chosen[np.argsort(-scores[chosen], kind="stable")]


def rankings(X, n_clusters: int, seed: int, options: dict) -> dict:
    """The top ``K`` of one fit (the default but for ``options``) under every rule."""
    fitted = CauseFS(n_clusters=n_clusters, n_features_to_select=K, random_state=seed,
                     **options).fit(X)
    norms = fitted.scores_
    return {
        "norm": np.argsort(-norms, kind="stable")[:K],
        "contribution": np.argsort(-norms * X.std(axis=0), kind="stable")[:K],
        "group_quota": group_quota(norms, fitted.groups_, K),
    }


def scored(X, y, seed: int, options: dict) -> dict:
    """Every ranking's top ``K`` of one fit, with its k-means ACC and NMI in %."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a fit that reaches max_iter is measured anyway
        tops = rankings(X, int(np.unique(y).size), seed, options)
    result = {}
    for name, top in tops.items():
        s = kmeans_scores(X[:, top], y, n_runs=dev_benchmark.N_RUNS)
        result[name] = {"top": top.tolist(), "acc": 100 * s["acc_mean"],
                        "nmi": 100 * s["nmi_mean"]}
    return result


def cases():
    """``(key, loader, fit seed)`` of every case, in the order they run."""
    for name in dev_benchmark.DATASETS:
        for number in range(4):
            yield f"{name}__{number}", lambda n=name, r=number: dev_benchmark.resample(
                *dev_benchmark.load(n), r), 0
    for case in WIDE:
        for seed in (0, 1):
            yield f"wide_{case}__{seed}", lambda c=case, s=seed: _scaled(*CASES[c](s)[:2]), seed
    for noise in BLOCK_NOISES:
        for seed in range(3):
            yield (f"blocks_{noise}__{seed}",
                   lambda s=seed, b=noise: make_blocks(s, 40, b)[:2], 0)


def _scaled(X, y):
    return scale_features(X, "minmax"), y


def run(out: Path, options: dict) -> None:
    """Every case's job into ``out``, its fits ``CauseFS(..., **options)``."""
    out.mkdir(parents=True, exist_ok=True)
    for key, loader, seed in cases():
        result = stored_result(out / f"{key}.json",
                               lambda: scored(*loader(), seed=seed, options=options))
        print(key, {k: round(result[k]["acc"], 1) for k in RANKINGS}, flush=True)


def stored_means(results_md: Path) -> dict:
    """ACC at 20 of random features and of the strong selectors, per dataset, from the
    development table of docs/RESULTS.md."""
    text = results_md.read_text()
    table = text[text.index(dev_benchmark.BEGIN):].split("### NMI")[0]
    lines = [line for line in table.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = {h: float(re.sub(r"[*]", "", c).split("±")[0])
                          for h, c in zip(header[1:], cells[1:]) if h in dev_benchmark.DATASETS}
    return rows


def acc(folder: Path, key: str, ranking: str) -> float:
    """ACC of ``ranking``'s top 20: a dataset's mean over its four resamples, or one
    case's."""
    paths = sorted(folder.glob(f"{key}__*.json")) if key in dev_benchmark.DATASETS \
        else [folder / f"{key}.json"]
    return float(np.mean([json.loads(p.read_text())[ranking]["acc"] for p in paths]))


def summary(folder: Path, stored: dict, ranking: str) -> dict:
    """``ranking``'s cells on the 13 datasets, their mean, the datasets at or above
    random features and the best strong selector (``stored``: :func:`stored_means`),
    its wide stand-ins and its correlated-block mean."""
    cells = {name: acc(folder, name, ranking) for name in dev_benchmark.DATASETS}
    return {
        "cells": cells,
        "mean": float(np.mean(list(cells.values()))),
        "above_random": sum(cells[d] >= stored["Random"][d] for d in cells),
        "above_best": sum(cells[d] >= max(stored[s][d] for s in STRONG) for d in cells),
        "wide": {f"{c}__{s}": acc(folder, f"wide_{c}__{s}", ranking) for c in WIDE
                 for s in (0, 1)},
        "blocks": float(np.mean([acc(folder, f"blocks_{b}__{s}", ranking)
                                 for b in BLOCK_NOISES for s in range(3)])),
    }


def report(out: Path, results_md: Path) -> None:
    stored = stored_means(results_md)
    found = {name: summary(out, stored, name) for name in RANKINGS}
    print("| dataset | " + " | ".join(RANKINGS) + " | random | best strong |")
    print("|---|" + "---|" * (len(RANKINGS) + 2))
    for d in dev_benchmark.DATASETS:
        best = max(stored[s][d] for s in STRONG)
        print(f"| {d} | " + " | ".join(f"{found[n]['cells'][d]:.1f}" for n in RANKINGS)
              + f" | {stored['Random'][d]:.1f} | {best:.1f} |")
    print(f"\n{len(dev_benchmark.DATASETS)} datasets: " + "; ".join(
        f"{n} mean {found[n]['mean']:.2f}, >= random {found[n]['above_random']}, "
        f">= best strong {found[n]['above_best']}" for n in RANKINGS))
    for case in found["norm"]["wide"]:
        print(f"| wide_{case} | " + " | ".join(f"{found[n]['wide'][case]:.1f}"
                                                for n in RANKINGS) + " |")
    print("| correlated blocks (mean of 6) | " + " | ".join(
        f"{found[n]['blocks']:.2f}" for n in RANKINGS) + " |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "ranking_check")
    parser.add_argument("--results", type=Path, default=ROOT / "docs" / "RESULTS.md")
    parser.add_argument("--preprocessing", default="none", choices=("none", "minmax"),
                        help="none: the development benchmark's data as it hands them to "
                        "every method; minmax: each subsample scaled again, as CauseFS() "
                        "does by default (the contribution check of 2026-11-29)")
    parser.add_argument("--report", action="store_true", help="print the tables only")
    args = parser.parse_args(argv)
    if not args.report:
        run(args.out, {"preprocessing": args.preprocessing})
    report(args.out, args.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
