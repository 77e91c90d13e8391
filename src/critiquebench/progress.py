"""A live count of finished units with an ETA, for long runs in a terminal."""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


class UnitProgress:
    """``with UnitProgress(total, clock) as progress: ... progress.advance()``.

    The bar only draws on a terminal; ``eta_text`` serves logs everywhere.
    """

    def __init__(self, total: int, clock: Callable[[], float]) -> None:
        self.total = total
        self.done = 0
        self._clock = clock
        self._started = clock()
        self._bar = Progress(
            TextColumn("units"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            transient=True,
        )  # fmt: skip
        self._task = self._bar.add_task("units", total=total)

    def __enter__(self) -> UnitProgress:
        if self._bar.console.is_terminal:
            self._bar.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._bar.stop()

    def advance(self) -> None:
        """One more unit finished."""
        self.done += 1
        self._bar.advance(self._task)

    def eta_text(self) -> str:
        """Estimated time to finish, from the mean time per finished unit."""
        if not self.done:
            return "ETA unknown"
        elapsed = self._clock() - self._started
        remaining = elapsed / self.done * (self.total - self.done)
        minutes, seconds = divmod(int(remaining), 60)
        return f"ETA {minutes}m{seconds:02d}s"
