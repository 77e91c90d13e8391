"""A run's report built in a child process (see ``critiquebench.runtime.warm_child``).

The child starts with the run, at a low CPU priority, imports the analysis and
bundles the chart library (seconds, and no data needed) while the units run. Once
they are done it reads the run's files and builds the report while the data-quality
check runs elsewhere; the run's end is recorded after that check (its status is in
the report), so the child then waits for ``PendingReport.result`` to read the run's
``runs`` rows again, take the run's status and end from them and write the report's
files. Kept apart from the flow's tasks so the child imports the analysis, not Prefect.

Measured gain (``bench/pipeline.py --ab report-inline --paths flow --concurrency 2
--pairs 3``, 984 units, a quiet host at load 2.9-4.0; before, 546007f measured it
only at load 20-27): the phase after the units (compaction, check, reports, printing)
took 12.1 / 12.9 / 11.2 s with the child and 16.4 / 13.7 / 13.0 s with the report
built in the flow's process, in turn: 1.8 s median a pair, ~6% of the run's 30 s wall
time, above issue 25's 5% bar, so it stays. It costs CPU (the child imports the
analysis again: 34.0 vs 30.3 CPU-s median), which the idle core pays while the units
run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from critiquebench.pipeline._location import Root
from critiquebench.runtime.warm_child import ChildResult, WarmChild, imported, wait_for_parent

if TYPE_CHECKING:
    from critiquebench.analysis import RunReport

REPORT_MODULES = ("critiquebench.analysis", __name__)
"""What the child imports ahead of the call; ``warm_up`` imports the analysis's own modules."""

_REPORT_NAMES = (
    "build_report",
    "connect",
    "load_prices",
    "reload_table",
    "with_run_state",
    "write_report_files",
    "write_units_stories",
)
"""The analysis's names ``report_when_asked`` uses (each imports its module on first use)."""
LOADED_MODULES = (
    *REPORT_MODULES,
    "critiquebench.analysis.report._report",
    "critiquebench.analysis.render._outputs",
    "critiquebench.analysis.render._charts",
    "vl_convert",
)
"""Modules that only a report loads (``warm_up``'s, not the flow's): a process that has
them builds the report itself (see ``critiquebench.runtime.warm_child``)."""


def warm_up() -> None:
    """What the report needs that no run's data changes, done in the child ahead: the
    analysis's modules the report uses, and the chart library's bundle.

    The analysis is imported here and in ``report_when_asked``, not with this module:
    the run's own process imports this module for ``PendingReport``, and the report's
    modules (altair, Jinja2, the statistics) are the child's to load. Measured: importing
    the flow's module in a process that had imported the CLI, the run, LangGraph and
    Prefect loaded 53 modules instead of 200 and took 0.55-0.82 CPU-s instead of
    0.97-1.42 (5 alternated pairs, each pair 0.3-0.6 CPU-s apart, load 17-18).
    """
    from critiquebench import analysis

    for name in _REPORT_NAMES:
        getattr(analysis, name)
    analysis.vega_bundle()


def report_when_asked(output: Root, run_id: str, prices: Path, target: float) -> RunReport:
    """Write the run's report files (see ``write_reports``) and return the report, in
    two steps: read the run's files and build the report, with the price table at
    ``prices`` (its errors are the report's); then wait for the parent
    (``wait_for_parent``) to read its ``runs`` rows again (only they change meanwhile),
    take the run's state from them and write the files."""
    from critiquebench.analysis import (
        build_report,
        connect,
        load_prices,
        reload_table,
        with_run_state,
        write_report_files,
        write_units_stories,
    )

    tables = connect(output, [run_id], snapshot=True)
    built = build_report(tables, run_id, prices=load_prices(prices), target=target)
    # The units' stories do not change with the run's state: written while the parent ends.
    units = write_units_stories(output, run_id, tables)
    if not wait_for_parent():
        raise RuntimeError(f"run {run_id}: the run ended before its report was asked for")
    reload_table(tables, output, [run_id], "runs")
    return write_report_files(output, with_run_state(tables, built), units=units).report


class PendingReport:
    """A run's report in a child process: ``prepare`` once the units are done, then
    ``result`` once the run's end is recorded. ``nice``: as for ``WarmChild``.
    ``in_process``: build it in this process, all at ``result`` (default: when it has
    loaded ``LOADED_MODULES`` already)."""

    def __init__(self, nice: int = 0, in_process: bool | None = None) -> None:
        here = imported(LOADED_MODULES) if in_process is None else in_process
        self._child: WarmChild[RunReport] = WarmChild(
            REPORT_MODULES, warm_up=warm_up, nice=nice, in_process=here
        )
        self._prepared = False

    def prepare(self, output: Root, run_id: str, prices: Path, target: float) -> None:
        """Read the run's files now; the report (priced by the file ``prices``) follows
        ``result``."""
        self._child.call(report_when_asked, output, run_id, prices, target)
        self._prepared = True

    def result(self, timeout_s: float | None = None) -> ChildResult[RunReport]:
        """Build and write the report (from the ``runs`` rows as they are now)."""
        if not self._prepared:
            raise RuntimeError("PendingReport.result before prepare")
        self._child.go_on()
        return self._child.result(timeout_s)

    def close(self) -> None:
        """Stop the child without a report (the run ended early)."""
        self._child.close()
