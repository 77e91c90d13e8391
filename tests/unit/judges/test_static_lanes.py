"""mypy checks of several threads run on several daemons at once (issue 24's cap).

One daemon reads one text at a time: with it, a run whose units wait on a slow model
judged no more attempts a second than one core's mypy gave, however many units waited.
Here a lane is made busy by holding its lock, as a long check would.
"""

from __future__ import annotations

import threading
from pathlib import Path

from critiquebench.judges import StaticChecker, StaticReport, StaticSettings

WRONG = "def f(x: int) -> str:\n    return x\n"  # mypy: return-value on line 2
_GENEROUS_S = 300.0
"""A liveness fence, not a timing: a check that can run ends long before it."""


def _check_on_thread(checker: StaticChecker) -> tuple[threading.Thread, list[StaticReport]]:
    reports: list[StaticReport] = []
    thread = threading.Thread(target=lambda: reports.append(checker.check(WRONG)), daemon=True)
    thread.start()
    return thread, reports


def test_a_check_runs_on_a_second_daemon_while_the_first_is_busy(tmp_path: Path) -> None:
    checker = StaticChecker(StaticSettings(lint=False, cache_dir=tmp_path, mypy_lanes=2))
    try:
        with checker._lock:  # lane 0 busy for as long as this block lasts
            thread, reports = _check_on_thread(checker)
            thread.join(_GENEROUS_S)
            assert not thread.is_alive(), "the check waited for the busy daemon"
        assert reports[0].error is None
        assert [f.kind for f in reports[0].findings] == ["types"]
        assert len(checker._lanes) == 1 and checker._lanes[0]._slot.daemon is not None
    finally:
        checker.close()


def test_one_lane_keeps_one_daemon_and_waits_for_it(tmp_path: Path) -> None:
    checker = StaticChecker(StaticSettings(lint=False, cache_dir=tmp_path, mypy_lanes=1))
    try:
        with checker._lock:
            thread, reports = _check_on_thread(checker)
            thread.join(1.0)
            assert thread.is_alive() and not reports  # blocked behind the only lane
        thread.join(_GENEROUS_S)
        assert [f.kind for f in reports[0].findings] == ["types"]
        assert checker._lanes == []
    finally:
        checker.close()


def test_closing_the_checker_stops_every_lane_daemon(tmp_path: Path) -> None:
    checker = StaticChecker(StaticSettings(lint=False, cache_dir=tmp_path, mypy_lanes=2))
    with checker._lock:
        thread, _ = _check_on_thread(checker)
        thread.join(_GENEROUS_S)
    lane_daemon = checker._lanes[0]._slot.daemon
    assert lane_daemon is not None and lane_daemon.alive()
    checker.close()
    assert not lane_daemon.alive()
    other = WRONG.replace("f(", "g(")  # not remembered: it would need a daemon
    assert checker.check(other).error is not None  # closed: no lane starts a daemon again
