"""``critiquebench list``: every run under the output folder, newest first."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import Any

from rich.table import Table

from critiquebench.pipeline import Root, RunSummary, run_ids, summarize_run


@dataclasses.dataclass(frozen=True)
class ListedRun:
    """A run's summary and the verdict of its report (None: no report.json yet)."""

    summary: RunSummary
    verdict: str | None


def run_verdict(output: Root, run_id: str) -> str | None:
    """The verdict of the run's report.json in one cell: ``B met, C not met``, or the
    run's ``inconclusive: N units not measured``; None without a readable report."""
    from critiquebench.analysis import ReportFormatError, read_report

    try:
        report = read_report(output, run_id)
    except (OSError, ReportFormatError):
        return None
    if report.verdict_text:
        return report.verdict_text
    parts = [f"{arm.arm} {arm.verdict}" for arm in report.arms if arm.verdict]
    return ", ".join(parts) or None


def listed_runs(output: Root) -> list[ListedRun]:
    """Every run under ``output``, the most recently started first."""
    found = [
        ListedRun(summarize_run(output, run), run_verdict(output, run)) for run in run_ids(output)
    ]
    return sorted(found, key=lambda run: (run.summary.started_at, run.summary.run_id), reverse=True)


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if isinstance(value, dt.datetime) else str(value)


def runs_table(runs: list[ListedRun]) -> Table:
    """The runs as a table: id, start (UTC), status, suite, model, arms, units, verdict."""
    table = Table()
    for header in ("id", "started (UTC)", "status", "suite", "model", "arms", "units", "verdict"):
        table.add_column(header, overflow="fold")
    for run in runs:
        s = run.summary
        table.add_row(
            s.run_id, _when(s.started_at), s.status, s.suite, s.model, s.arms,
            f"{s.units_landed}/{s.units_planned}", run.verdict or "-",
        )  # fmt: skip
    return table


def runs_json(runs: list[ListedRun]) -> str:
    """The runs as a JSON list, one object per run (the table's columns and more)."""
    items = []
    for run in runs:
        item = dataclasses.asdict(run.summary)
        item["started_at"] = _iso(run.summary.started_at)
        item["verdict"] = run.verdict
        items.append(item)
    return json.dumps(items, indent=2) + "\n"


def _iso(value: Any) -> str:
    return value.isoformat() if isinstance(value, dt.datetime) else str(value)
