"""The data-quality check of a run in a short-lived child process.

Great Expectations and pandas take ~270 MiB and seconds of CPU to import, and a
process that imported them keeps that memory to its end. So a run's process starts
this child (a ``WarmChild``) when the run starts, at a low CPU priority: it imports
them while the units run, on CPU time the judges leave idle. Once the units are
done the child reads the run's files itself (only this run's, read-only), validates
them, returns the report and exits; the run's process holds none of that data.
"""

from __future__ import annotations

from pathlib import Path

from critiquebench.quality._report import QualityReport
from critiquebench.warm_child import ChildResult, WarmChild

_HEAVY = (
    "great_expectations",
    "pandas",
    "critiquebench.quality._suites",
    "critiquebench.quality._load",
    "critiquebench.quality._check",
)


class PendingCheck:
    """A check waiting in a child process: ``start`` it once the run's rows are in,
    then wait for ``result``. ``nice``: the child's lower CPU priority until then."""

    def __init__(self, output: Path, run_id: str, nice: int = 0) -> None:
        self.output = output
        self.run_id = run_id
        self._child: WarmChild[QualityReport] = WarmChild(_HEAVY, nice=nice)

    def start(self) -> None:
        """Check the run's files as they are now (see ``check_run``)."""
        from critiquebench.quality._check import check_run  # its GX import is deferred

        self._child.call(check_run, self.output, self.run_id, forked=True)

    def result(self, timeout_s: float | None = None) -> ChildResult[QualityReport]:
        """The child's report, and its cost (see ``WarmChild.result``)."""
        return self._child.result(timeout_s)

    def close(self) -> None:
        """Stop the child without a check (the run ended early)."""
        self._child.close()


def check_isolated(output: Path, run_id: str) -> ChildResult[QualityReport]:
    """``check_run`` of a run, in a child process (see the module doc)."""
    pending = PendingCheck(output, run_id)
    pending.start()
    return pending.result()
