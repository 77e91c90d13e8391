"""What a run's report child process runs: the report files of a finished run.

Kept apart from the flow's tasks so the child imports the analysis, not Prefect.
"""

from __future__ import annotations

from pathlib import Path

from critiquebench.analysis import PriceTable, RunReport, write_reports

REPORT_MODULES = ("critiquebench.analysis", "scipy.special", __name__)
"""What the child imports ahead of the call (the analysis imports scipy only when an
interval is first computed)."""


def report_of(output: Path, run_id: str, prices: PriceTable | None, target: float) -> RunReport:
    """Write the run's report files (see ``write_reports``) and return the report."""
    return write_reports(output, run_id, prices=prices, target=target).report
