"""The Prefect task that writes a run's reports and shows them in the Prefect UI."""

from __future__ import annotations

from pathlib import Path

import duckdb
from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from critiquebench.analysis import (
    RunReport,
    artifact_rows,
    load_prices,
    report_markdown,
    write_reports,
)


@task(name="write-reports", cache_policy=NO_CACHE, persist_result=False)
def write_reports_task(
    output: Path,
    run_id: str,
    prices: Path,
    target: float,
    artifact_key: str,
    tables: duckdb.DuckDBPyConnection | None = None,
) -> RunReport:
    """report.json, report.html and lessons.md in the run folder; Markdown and table artifacts.

    The report is computed once; every output here renders that one report.
    ``tables``: the run's tables already read (shared with the quality check).
    """
    price_table = load_prices(prices)
    report = write_reports(output, run_id, prices=price_table, target=target, tables=tables).report
    create_markdown_artifact(
        report_markdown(report), key=f"report-{artifact_key}", description="critiquebench report"
    )
    create_table_artifact(
        artifact_rows(report), key=f"arms-{artifact_key}", description="per-arm numbers"
    )
    return report
