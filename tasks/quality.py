"""The Prefect task that runs the data-quality suites on a landed run."""

from __future__ import annotations

import duckdb
from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from critiquebench.quality import QualityReport
from critiquebench.quality._isolated import PendingCheck


@task(name="check-quality", cache_policy=NO_CACHE, persist_result=False)
def check_quality_task(
    pending: PendingCheck, tables: duckdb.DuckDBPyConnection, artifact_key: str
) -> QualityReport:
    """Validate every table of the run from ``tables`` (the run's files, scanned once)
    in the child process ``pending`` (started with the run, so Great Expectations is
    imported there while the units run); publish the outcome."""
    pending.send(tables)
    checked = pending.result()
    get_run_logger().info(
        "data-quality check: %d expectations in %s (peak RSS %.0f MiB, %.1f s)",
        len(checked.value.results), checked.where, checked.peak_rss_mib, checked.seconds,
    )  # fmt: skip
    create_markdown_artifact(
        checked.value.markdown(), key=f"quality-{artifact_key}", description="data-quality checks"
    )
    return checked.value
