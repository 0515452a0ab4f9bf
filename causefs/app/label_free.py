"""Choose a swept setting of stored results without labels (``causefs-report --choose``).

A sweep (``causefs -m method.alpha=0.1,1,10``) leaves one store entry per setting. With
labels the report keeps the best by ACC ("tuned on labels"); without them — or beside
them, to see what an honest choice would have given — :func:`choose` scores each
setting's top features with a criterion of :mod:`causefs.model_selection` on the data
the runs were fitted on, loaded again and checked against the entries' hash.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..datasets import DatasetWarning, load_dataset
from ..model_selection import LabelFreeCriterion
from .store import StoreError


def stored_data(result: dict, data_home=None):
    """The dataset a stored result was fitted on, loaded again as its run loaded it
    (the run's ``dataset`` configuration; ``data_home`` else the run's ``data_dir``).

    Raises
    ------
    StoreError
        The data cannot be loaded here, or its content differs from the run's (the
        hash in ``job.dataset.sha256``).
    """
    job_dataset = result["job"]["dataset"]
    config = result.get("config") or {}
    spec = config.get("dataset") or job_dataset
    options = {k: v for k, v in spec.items()
               if k not in ("name", "path", "label_column", "nuisance", "sha256")}
    name = spec["name"]
    try:
        with warnings.catch_warnings():  # the run said them already
            warnings.simplefilter("ignore", DatasetWarning)
            data = load_dataset(name, path=spec.get("path"),
                                data_home_path=data_home or config.get("data_dir"),
                                label_column=spec.get("label_column"),
                                nuisance=spec.get("nuisance"), **options)
    except (OSError, ValueError) as error:  # DatasetError is a ValueError
        raise StoreError(f"result {result['key']}: cannot load its dataset {name!r} "
                         f"here ({error}); give the data directory (--data-dir)") from None
    if job_dataset.get("sha256") not in (None, data.sha256()):
        raise StoreError(f"result {result['key']}: the dataset {name!r} loaded here "
                         f"({data.source}) is not the data the run was fitted on (its "
                         "content hash differs)")
    return data


def collapsed(result: dict) -> bool:
    """Whether a CAUSE-FS result's W collapsed to the eps floor (every ``||W_f||^2 <
    eps``: the ranking is eps's, not the model's; the fit warned CollapseWarning).
    Results of methods without ``eps`` never collapse."""
    settings = (result.get("details") or {}).get("settings") or {}
    eps = settings.get("eps")
    if eps is None:
        return False
    return bool(np.max(np.asarray(result["scores"], dtype=float)) ** 2 < eps)


def choose(members: list, criterion: str, rho: int, data_home=None) -> dict:
    """Score the top ``rho`` features of every result in ``members`` (settings of one
    grid: same method, data and protocol) by ``criterion`` and keep the highest.

    Returns ``{"chosen": result or None, "score": float, "scores": [float, ...]}``, the
    scores in ``members``' order (``-inf`` for a collapsed fit; ``chosen`` is None when
    all collapsed). Ties go to the first member.
    """
    first = members[0]
    data = stored_data(first, data_home)
    job = first["job"]
    scorer = LabelFreeCriterion(data.X, int(job["n_clusters"]), criterion,
                                preprocessing=job.get("preprocessing") or "minmax")
    top = min(rho, len(first["features_best_first"]))
    scores = scorer.scores([None if collapsed(m) else scorer.measure(
        m["features_best_first"][:top]) for m in members])
    best = int(np.argmax(scores))
    chosen = None if scores[best] == -np.inf else members[best]
    return {"chosen": chosen, "score": float(scores[best]), "scores": scores.tolist()}
