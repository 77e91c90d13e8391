"""Unit progress on a fake clock: the ETA moves, plain lines for logs, a final line."""

from __future__ import annotations

import io
import time

import pytest

from critiquebench.runtime.progress import (
    INTERVAL_VARIABLE,
    Snapshot,
    UnitProgress,
    clock_text,
    interval_from_environment,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0:00:00"), (151.9, "0:02:31"), (3725, "1:02:05"), (-3, "0:00:00")]
)
def test_clock_text(seconds: float, text: str) -> None:
    assert clock_text(seconds) == text


def test_eta_is_the_observed_rate_applied_to_what_is_left() -> None:
    assert Snapshot(0, 9, 30.0).eta_text() == "ETA unknown"
    # 4 units in 151 s: 37.75 s each, 5 left.
    assert Snapshot(4, 9, 151.0).eta_s == pytest.approx(188.75)
    assert Snapshot(4, 9, 151.0).line() == "progress: 4/9 units, 0:02:31 elapsed, ETA 0:03:08"
    assert Snapshot(9, 9, 341.0).final_line() == "progress: 9/9 units done in 0:05:41"


def test_eta_moves_while_a_slow_unit_runs_and_no_unit_finishes() -> None:
    clock = FakeClock()
    progress = UnitProgress(9, clock, stream=io.StringIO(), interactive=False)
    clock.now += 10
    for _ in range(4):
        progress.advance()
    seen = []
    for _ in range(3):  # 2.5 minutes with no unit finishing, as in the issue
        clock.now += 50
        seen.append(progress.snapshot())
    assert [s.done for s in seen] == [4, 4, 4]
    assert [clock_text(s.elapsed_s) for s in seen] == ["0:01:00", "0:01:50", "0:02:40"]
    etas = [s.eta_s for s in seen]
    assert len(set(etas)) == 3 and etas == sorted(etas)  # the run is slower than it was
    clock.now += 5
    progress.advance()
    assert progress.snapshot().eta_s == pytest.approx(165 / 5 * 4)


def test_plain_mode_prints_lines_and_a_final_line_on_a_fake_clock() -> None:
    clock = FakeClock()
    out = io.StringIO()
    # A long interval keeps the timer thread silent: tick() is what it would call.
    with UnitProgress(3, clock, stream=out, interactive=False, interval_s=3600) as progress:
        clock.now += 20
        progress.tick()
        progress.advance()
        clock.now += 10
        progress.tick()
        progress.advance()
        progress.advance()
        clock.now += 30
    assert out.getvalue().splitlines() == [
        "progress: 0/3 units, 0:00:20 elapsed, ETA unknown",
        "progress: 1/3 units, 0:00:30 elapsed, ETA 0:01:00",
        "progress: 3/3 units done in 0:01:00",
    ]


def test_plain_mode_prints_on_a_timer() -> None:
    out = io.StringIO()
    with UnitProgress(2, time.monotonic, stream=out, interactive=False, interval_s=0.05):
        time.sleep(0.3)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3
    assert all(line.startswith("progress: 0/2 units, 0:00:00 elapsed") for line in lines[:-1])
    assert lines[-1] == "progress: 0/2 units done in 0:00:00"


def test_a_stream_that_is_not_a_terminal_gets_plain_lines() -> None:
    assert UnitProgress(1, time.monotonic, stream=io.StringIO()).interactive is False


def test_a_closed_stream_does_not_fail_the_run() -> None:
    out = io.StringIO()
    progress = UnitProgress(1, time.monotonic, stream=out, interactive=False, interval_s=3600)
    out.close()
    progress.tick()  # no exception


@pytest.mark.parametrize(("raw", "seconds"), [("", 10.0), ("2.5", 2.5), ("x", 10.0), ("0", 10.0)])
def test_interval_from_environment(
    monkeypatch: pytest.MonkeyPatch, raw: str, seconds: float
) -> None:
    monkeypatch.setenv(INTERVAL_VARIABLE, raw)
    assert interval_from_environment() == seconds


def test_progress_counts_units_landed_elsewhere_and_never_goes_back() -> None:
    import io

    from critiquebench.runtime.progress import UnitProgress

    stream = io.StringIO()
    with UnitProgress(10, lambda: 0.0, stream=stream, interactive=False) as progress:
        progress.advance_to(4)  # four rows landed, whatever batch wrote them
        progress.advance_to(3)
        assert progress.done == 4
        progress.advance_to(99)
        assert progress.done == 10
