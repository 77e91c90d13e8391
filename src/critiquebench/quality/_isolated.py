"""The data-quality check of a run in a short-lived child process.

Great Expectations and pandas take ~270 MiB and seconds of CPU to import, and a
process that imported them keeps that memory to its end. So a run's process starts
this child (a ``WarmChild``) when the run starts, at a low CPU priority: it imports
them while the units run, on CPU time the judges leave idle. Given the run's
folder (``output``), the child then follows the run: every second or two it
reads the files of the units landed since, and every ten seconds validates the rows
read, each in a fork of itself at its low priority (see ``_incremental``), so that
once the units are done only the last rows and what needs the whole run are left:
``finish`` asks for that and the report. Nothing in the child writes the run's
files, and the run's process reads none of them for the check.

Without ``output`` the run's process scans the run's files itself and hands over
the check's tables (``send``); the child validates them all at once.
"""

from __future__ import annotations

import functools
import select
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from critiquebench.pipeline import Root
from critiquebench.quality._report import QualityReport
from critiquebench.warm_child import ChildResult, WarmChild

if TYPE_CHECKING:  # imported in the child only, after the heavy imports
    from critiquebench.quality._incremental import Checked, LandingCheck
    from critiquebench.quality._landed import Chunk

_HEAVY = ("great_expectations", "pandas", "critiquebench.quality._suites", __name__)
_READ_EVERY_S = 1.5
"""How often the child reads the files of the units landed since (~1 ms a unit)."""
_CHECK_EVERY_S = 10.0
"""How often it validates the rows read since: GX costs ~1 s whatever the rows, so
validating more often would take CPU time from the units and save the end nothing."""


class PendingCheck:
    """A check waiting in a child process: ``finish`` (with ``output``) or ``send`` the
    tables once the run's rows are in, then wait for ``result``. ``nice``: the child's
    lower CPU priority until then. ``output``: the folder of runs, to follow the run's
    units as they land (the run need not have started yet)."""

    def __init__(self, run_id: str, nice: int = 0, output: Root | None = None) -> None:
        self.run_id = run_id
        self._output = output
        follow_run = None if output is None else functools.partial(follow, output, run_id)
        self._child: WarmChild[QualityReport] = WarmChild(_HEAVY, warm_up=follow_run, nice=nice)

    def finish(self) -> None:
        """The units are done: check what is left of the run followed (see ``output``)."""
        if self._output is None:
            raise ValueError("a check not given the run's output folder cannot follow it")
        self._child.call(finish_followed, self._output, self.run_id)

    def send(self, tables: duckdb.DuckDBPyConnection) -> None:
        """Hand over the run's tables (``connect(..., snapshot=True)``); the check starts."""
        from critiquebench.quality._load import derived_tables

        derived, retry_limit = derived_tables(tables)
        self._child.call(check_arrow, self.run_id, derived, retry_limit)

    def result(self, timeout_s: float | None = None) -> ChildResult[QualityReport]:
        """The child's report, and its cost (see ``WarmChild.result``)."""
        return self._child.result(timeout_s)

    def close(self) -> None:
        """Stop the child without a check (the run ended early)."""
        self._child.close()


def check_isolated(run_id: str, tables: duckdb.DuckDBPyConnection) -> ChildResult[QualityReport]:
    """``check_run`` of a run's open tables, in a child process (see the module doc)."""
    pending = PendingCheck(run_id)
    pending.send(tables)
    return pending.result()


def check_arrow(
    run_id: str, derived: dict[str, pa.Table], retry_limit: int | None
) -> QualityReport:
    """``check_frames`` of the tables ``derived_tables`` gives (what the child runs), with
    ``cases`` validated in a fork meanwhile: the child does nothing else."""
    from critiquebench.quality._check import check_frames

    frames = {table: data.to_pandas() for table, data in derived.items()}
    return check_frames(run_id, frames, retry_limit, forked=True)


@functools.cache
def _followed(output: Path, run_id: str) -> LandingCheck:
    """The one ``LandingCheck`` of the run in this child: the warm-up fills it, the call
    finishes it."""
    from critiquebench.quality._incremental import LandingCheck

    return LandingCheck(output, run_id)


def follow(output: Root, run_id: str) -> None:
    """Validate the run's units as they land, until the parent calls (the child's warm-up).

    A validation still running when the call comes is dropped: its rows are part of
    what ``finish_followed`` validates. A run on an object store is validated at the
    end, all at once: following tells a file rewritten in place by its inode, which an
    object has not got.
    """
    from critiquebench.quality._fork import CAN_FORK, Forked

    if not isinstance(output, Path):
        return
    check = _followed(output, run_id)
    if not CAN_FORK:
        return  # validated at the end, all at once
    running: Forked[Chunk | Checked | None] | None = None
    checked = -_CHECK_EVERY_S  # the first check comes at once: it asks GX for every detail
    try:
        while True:
            waiting = [sys.stdin.fileno(), *([running.fileno()] if running else [])]
            ready = select.select(waiting, [], [], None if running else _READ_EVERY_S)[0]
            if sys.stdin.fileno() in ready:  # the call (or the parent gone)
                return
            if running is not None:
                done, running = running.result(), None
                check.record(done)
                continue
            job: Callable[[], Chunk | Checked | None] | None = None
            if time.monotonic() - checked >= _CHECK_EVERY_S:
                job = check.check_job()
                checked = time.monotonic() if job is not None else checked
            running = Forked(job or check.read_job())
    finally:
        if running is not None:
            running.kill()


def finish_followed(output: Root, run_id: str) -> QualityReport:
    """The report of the run ``follow`` followed (all of it, if it followed nothing).

    Finished in a fork: the DuckDB and GX work of the end then adds to the fork's
    memory, which does not count the pages of this process's libraries it leaves
    untouched, instead of to this process's (the child's peak stays ~50 MiB lower).
    """
    from critiquebench.quality._fork import CAN_FORK, Forked

    if not isinstance(output, Path):
        from critiquebench.quality._check import check_run

        return check_run(output, run_id)
    check = _followed(output, run_id)
    return Forked(check.finish).result() if CAN_FORK else check.finish()
