"""The Prefect task that writes a run's reports and shows them in the Prefect UI."""

from __future__ import annotations

from pathlib import Path

import duckdb
from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from critiquebench.analysis import RunReport, artifact_rows, report_markdown
from critiquebench.pipeline import Root
from critiquebench.pipeline._report_child import PendingReport


@task(name="write-reports", cache_policy=NO_CACHE, persist_result=False)
def write_reports_task(
    output: Root,
    run_id: str,
    prices: Path,
    target: float,
    artifact_key: str,
    tables: duckdb.DuckDBPyConnection | None = None,
    pending: PendingReport | None = None,
) -> RunReport:
    """report.json, report.html and lessons.md in the run folder; Markdown and table artifacts.

    The report is computed once; every output here renders that one report. While
    units are not measured its verdict is "inconclusive: N units not measured": the
    artifacts' descriptions say so and the flow's log warns.
    ``tables``: the run's tables already read (shared with the quality check).
    ``pending``: a child process that imported the analysis ahead of time and has read
    the run's files (``PendingReport.prepare``, with these settings); the report is
    then built there, and the memory that building and rendering it (charts) takes
    goes away with the child.
    """
    if pending is None:
        # Imported here: the report's modules (charts, templates) are otherwise the
        # child's, and the flow's process need not load them.
        from critiquebench.analysis import load_prices, write_reports

        report = write_reports(
            output, run_id, prices=load_prices(prices), target=target, tables=tables
        )
        built = report.report
    else:
        done = pending.result()
        get_run_logger().info(
            "reports written in %s (peak RSS %.0f MiB, %.1f s)",
            done.where, done.peak_rss_mib, done.seconds,
        )  # fmt: skip
        built = done.value
    # The verdict withheld is said where the UI lists artifacts, not only inside them.
    withheld = f" ({built.verdict_text})" if built.verdict_text else ""
    if built.headline:
        get_run_logger().warning("%s", built.headline)
    create_markdown_artifact(
        report_markdown(built),
        key=f"report-{artifact_key}",
        description=f"critiquebench report{withheld}",
    )
    create_table_artifact(
        artifact_rows(built), key=f"arms-{artifact_key}", description=f"per-arm numbers{withheld}"
    )
    return built
