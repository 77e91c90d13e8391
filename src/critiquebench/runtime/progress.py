"""Progress of a run's units: a live bar on a terminal, plain lines everywhere else.

On a terminal the bar shows done/total, the elapsed time and an ETA, redrawn on a
timer so both keep moving while a slow unit runs. When the stream is not a
terminal (CI, ``nohup``, a deployment's logs) a plain line is printed every few
seconds instead, e.g. ``progress: 4/9 units, 0:02:31 elapsed, ETA 0:03:10``. Both
end with a final line. Progress goes to stderr so a redirected report stays clean.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task
from rich.text import Text

INTERVAL_VARIABLE = "CRITIQUEBENCH_PROGRESS_SECONDS"
"""Seconds between plain progress lines when output is not a terminal (default 10)."""
DEFAULT_INTERVAL_S = 10.0


def clock_text(seconds: float) -> str:
    """A duration as ``H:MM:SS`` (``0:02:31``)."""
    minutes, secs = divmod(max(0, int(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


@dataclass(frozen=True)
class Snapshot:
    """Where a run stands at one moment."""

    done: int
    total: int
    elapsed_s: float

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the rate observed so far; None before the first unit finishes.

        The rate is finished units over elapsed time, so the estimate grows while a
        slow unit holds the run up and drops when units finish: it never freezes.
        """
        if not self.done:
            return None
        return self.elapsed_s / self.done * max(0, self.total - self.done)

    def eta_text(self) -> str:
        """``ETA 0:03:10``, or ``ETA unknown`` before the first unit finishes."""
        eta = self.eta_s
        return "ETA unknown" if eta is None else f"ETA {clock_text(eta)}"

    def line(self) -> str:
        """The plain progress line: ``progress: 4/9 units, 0:02:31 elapsed, ETA 0:03:10``."""
        return (
            f"progress: {self.done}/{self.total} units, "
            f"{clock_text(self.elapsed_s)} elapsed, {self.eta_text()}"
        )

    def final_line(self) -> str:
        """The last line: ``progress: 9/9 units done in 0:05:41``."""
        return f"progress: {self.done}/{self.total} units done in {clock_text(self.elapsed_s)}"


def interval_from_environment(default: float = DEFAULT_INTERVAL_S) -> float:
    """The plain-line interval from ``CRITIQUEBENCH_PROGRESS_SECONDS``, else ``default``."""
    raw = os.environ.get(INTERVAL_VARIABLE, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        return default
    return value if value > 0 else default


class _ElapsedEtaColumn(ProgressColumn):
    """``0:02:31 elapsed, ETA 0:03:10`` from the run's own clock, redrawn on every refresh."""

    def __init__(self, snapshot: Callable[[], Snapshot]) -> None:
        super().__init__()
        self._snapshot = snapshot

    def render(self, task: Task) -> Text:
        now = self._snapshot()
        return Text(f"{clock_text(now.elapsed_s)} elapsed, {now.eta_text()}")


class UnitProgress:
    """``with UnitProgress(total, clock) as progress: ... progress.advance()``.

    ``stream`` defaults to stderr; ``interactive`` (default: whether ``stream`` is a
    terminal) chooses the live bar or the plain lines, which are printed every
    ``interval_s`` seconds (default: ``CRITIQUEBENCH_PROGRESS_SECONDS`` or 10).
    """

    def __init__(
        self,
        total: int,
        clock: Callable[[], float],
        *,
        stream: TextIO | None = None,
        interactive: bool | None = None,
        interval_s: float | None = None,
    ) -> None:
        self.total = total
        self.done = 0
        self._clock = clock
        self._started = clock()
        self._stream = stream if stream is not None else sys.stderr
        self._interval_s = interval_s if interval_s is not None else interval_from_environment()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        console = Console(file=self._stream)
        self.interactive = console.is_terminal if interactive is None else interactive
        self._bar = Progress(
            "units", BarColumn(), MofNCompleteColumn(), _ElapsedEtaColumn(self.snapshot),
            console=console, transient=True, refresh_per_second=2,
        )  # fmt: skip
        self._task = self._bar.add_task("units", total=total)

    def snapshot(self) -> Snapshot:
        """Done, total and elapsed time now."""
        with self._lock:
            done = self.done
        return Snapshot(done, self.total, self._clock() - self._started)

    def __enter__(self) -> UnitProgress:
        if self.interactive:
            self._bar.start()
        else:
            self._ticker = threading.Thread(target=self._tick_until_stopped, daemon=True)
            self._ticker.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self.interactive:
            self._bar.stop()
        self._write(self.snapshot().final_line())

    def advance(self) -> None:
        """One more unit finished."""
        with self._lock:
            self.done += 1
        self._bar.advance(self._task)

    def advance_to(self, done: int) -> None:
        """``done`` units finished (counted elsewhere, e.g. rows landed); never goes back."""
        with self._lock:
            step = max(0, min(done, self.total) - self.done)
            self.done += step
        if step:
            self._bar.advance(self._task, step)

    def eta_text(self) -> str:
        """Estimated time to finish, for log lines."""
        return self.snapshot().eta_text()

    def tick(self) -> None:
        """Print the plain progress line now (the timer calls this every interval)."""
        self._write(self.snapshot().line())

    def _tick_until_stopped(self) -> None:
        while not self._stop.wait(self._interval_s):
            self.tick()

    def _write(self, line: str) -> None:
        try:
            self._stream.write(line + "\n")
            self._stream.flush()
        except (OSError, ValueError):  # a closed pipe must not fail the run
            pass
