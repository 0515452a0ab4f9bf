"""The heartbeat of long phases (causefs.core.progress): when it reports, against the
schedule its docstring states (after FIRST_REPORT seconds, then every max(FIRST_REPORT,
elapsed / 4) seconds, at most LONGEST_SILENCE apart), on a scripted clock."""

import logging
import threading

from causefs.core import progress
from causefs.core.progress import Heartbeat, phase

START = 1000.0  # the clock's reading when the phase starts (not 0: elapsed = now - start)


class Clock:
    """perf_counter and the stop event's wait: each wait advances the clock by its
    timeout, and the heartbeat stops after ``seconds``; ``actions`` run at given times."""

    def __init__(self, seconds, actions=()):
        self.now, self.end, self.actions = START, START + seconds, dict(actions)

    def perf_counter(self):
        return self.now

    def wait(self, timeout):
        self.now += timeout
        action = self.actions.pop(self.now - START, None)
        if action is not None:
            action()
        return self.now > self.end


class Recorder(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def beats(monkeypatch, seconds, actions=(), start_phase="block 'graphs'"):
    """Run the heartbeat's loop on the scripted clock; the messages it logged."""
    clock = Clock(seconds, actions)
    monkeypatch.setattr(progress, "time", clock)
    logger = logging.getLogger("causefs.test_progress")
    logger.setLevel(logging.INFO)
    recorder = Recorder()
    logger.addHandler(recorder)
    try:
        heartbeat = Heartbeat(logger, check_every=1.0)
        heartbeat._stop.wait = clock.wait
        clock.actions = {t: (lambda name=name: heartbeat.doing(name))
                         for t, name in dict(actions).items()}
        if start_phase is not None:
            heartbeat.doing(start_phase)
        heartbeat._beat()
    finally:
        logger.removeHandler(recorder)
    return recorder.messages


def test_a_phase_is_reported_on_the_documented_schedule(monkeypatch):
    # checks every second; reported at 5 s, then once the silence reaches
    # min(30, max(5, t / 4)): 10, 15, 20 (5 >= 5), 27 (7 >= 6.75), 36 (9 >= 9), 48 (12),
    # 64 (16), 86 (22 >= 21.5), 115 (29 >= 28.75), then every 30 s (t / 4 > 30 from 120)
    expected = [5, 10, 15, 20, 27, 36, 48, 64, 86, 115, 145, 175, 205, 235]
    messages = beats(monkeypatch, 240)
    assert messages == [f"block 'graphs' running for {t} s" for t in expected]


def test_a_new_phase_starts_its_own_count(monkeypatch):
    # 'a' from 0 (reported at 5 and 10), 'b' from 12: reported at 17 and 22, not at 15
    messages = beats(monkeypatch, 23, actions={12.0: "b"}, start_phase="a")
    assert messages == ["a running for 5 s", "a running for 10 s", "b running for 5 s",
                        "b running for 10 s"]


def test_a_heartbeat_waits_for_its_first_phase(monkeypatch):
    messages = beats(monkeypatch, 10, actions={3.0: "late"}, start_phase=None)
    assert messages == ["late running for 5 s"]


def test_nested_heartbeats_hand_the_phase_back_and_threads_keep_their_own():
    logger = logging.getLogger("causefs.test_progress_quiet")
    logger.setLevel(logging.WARNING)  # nobody listens: no thread is started
    with Heartbeat(logger) as outer:
        phase("outer work")
        with Heartbeat(logger) as inner:
            phase("inner work")
        assert inner._phase[0] == "inner work" and outer._phase[0] == "outer work"
        phase("outer again")  # the inner one has ended: the outer one is named
        assert outer._phase[0] == "outer again" and inner._phase[0] == "inner work"
    errors = []

    def elsewhere():  # a thread that never held a heartbeat: phase() does nothing
        try:
            phase("nothing to name")
            with Heartbeat(logger) as own:
                phase("its own")
            assert own._phase[0] == "its own"
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert errors == [] and outer._phase[0] == "outer again"


def test_a_listened_heartbeat_beats_in_a_named_daemon_thread():
    logger = logging.getLogger("causefs.test_progress_loud")
    logger.setLevel(logging.INFO)
    with Heartbeat(logger, check_every=0.01):
        found = [t for t in threading.enumerate() if t.name == "causefs-heartbeat"]
        assert len(found) == 1 and found[0].daemon  # never keeps the interpreter alive
    assert not found[0].is_alive()  # joined on exit
