"""The data-quality check of a run in a short-lived child process.

Great Expectations and pandas take ~270 MiB and seconds of CPU to import, and a
process that imported them keeps that memory to its end. So a run's process starts
this child (a ``WarmChild``) when the run starts, at a low CPU priority: it imports
them while the units run, on CPU time the judges leave idle. Once the units are
done the run's process scans the run's files and hands over the check's tables
(``send``); the child validates them all at once and reports. Nothing in the child
writes the run's files.

A process that has imported them already (one that checked a run before) checks in
itself instead: see ``critiquebench.runtime.warm_child``.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from critiquebench.quality._report import QualityReport
from critiquebench.runtime.warm_child import ChildResult, WarmChild, imported

# The suites first: they import Great Expectations with the modules it never needs deferred.
_HEAVY = ("critiquebench.quality._suites", "great_expectations", "pandas", __name__)


class PendingCheck:
    """A check waiting in a child process: ``send`` the tables once the run's rows are
    in, then wait for ``result``. ``nice``: the child's lower CPU priority until then.
    ``in_process``: check in this process (default: when it has imported the check's
    modules already)."""

    def __init__(self, run_id: str, nice: int = 0, in_process: bool | None = None) -> None:
        self.run_id = run_id
        here = imported(_HEAVY) if in_process is None else in_process
        self._child: WarmChild[QualityReport] = WarmChild(_HEAVY, nice=nice, in_process=here)

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
    pending = PendingCheck(run_id, in_process=False)
    pending.send(tables)
    return pending.result()


def check_arrow(
    run_id: str, derived: dict[str, pa.Table], retry_limit: int | None
) -> QualityReport:
    """``check_frames`` of the tables ``derived_tables`` gives (what the child runs)."""
    from critiquebench.quality._check import check_frames

    frames = {table: data.to_pandas() for table, data in derived.items()}
    return check_frames(run_id, frames, retry_limit)
