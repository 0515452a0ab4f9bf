"""Logging as a library does it: a NullHandler, silence unless verbose, log records
written above a progress bar, not into it."""

import logging
import sys

import pytest
from tqdm import std as tqdm_std

from causefs import CauseFS

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)

FIT = dict(n_clusters=3, max_iter=3, tol=0.0, random_state=0, memory_limit=None)


def test_the_library_logger_has_a_null_handler():
    handlers = logging.getLogger("causefs").handlers
    assert any(isinstance(h, logging.NullHandler) for h in handlers)


@pytest.mark.parametrize("verbose", [False, True])
def test_progress_is_logged_at_info_only_when_verbose(blobs, caplog, verbose):
    caplog.set_level(logging.DEBUG, logger="causefs")
    CauseFS(verbose=verbose, **FIT).fit(blobs[0])
    progress = [r for r in caplog.records if "iteration 3/3" in r.getMessage()]
    assert len(progress) == 1
    assert progress[0].levelno == (logging.INFO if verbose else logging.DEBUG)
    info = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert bool(info) == verbose  # verbose=False: nothing at INFO or above


def test_log_lines_go_above_the_bar_not_into_it(blobs, monkeypatch):
    """With verbose, the console handlers of the root logger write through tqdm.write
    (tqdm's logging redirect), so a line never lands inside the bar on a terminal."""
    written = []
    monkeypatch.setattr(tqdm_std.tqdm, "write",
                        classmethod(lambda cls, s, file=None, end="\n", nolock=False:
                                    written.append(s)))
    handler = logging.StreamHandler(sys.stderr)
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.INFO)
    try:
        CauseFS(verbose=True, **FIT).fit(blobs[0])
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    assert any("iteration 3/3" in line for line in written)
    assert root.handlers.count(handler) == 0  # the redirect put the handlers back


def test_the_evaluation_counts_its_k_means_runs_on_a_bar(blobs, monkeypatch):
    """The evaluation phase (n_runs k-means fits per distinct number of features) moves a
    bar one step per fit, and shows it only when given a title on a terminal."""
    import tqdm.auto

    from causefs.app.evaluation import evaluate_ranking

    bars = []

    class Recorded(tqdm_std.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "disable": True})
            self.disable_asked, self.steps = kwargs["disable"], 0
            bars.append(self)

        def update(self, n=1):
            self.steps += n

    monkeypatch.setattr(tqdm.auto, "tqdm", Recorded)
    X, y = blobs
    evaluate_ranking(X, y, list(range(12)), rhos=(2, 4, 4, 40), n_runs=3,
                     progress="evaluation")
    evaluate_ranking(X, y, list(range(12)), rhos=(2,), n_runs=3)
    assert [(b.total, b.steps) for b in bars] == [(9, 9), (3, 3)]  # 40 capped at d = 12
    assert [b.disable_asked for b in bars] == [None, True]  # None: on a terminal only
