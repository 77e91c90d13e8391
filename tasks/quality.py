"""The Prefect task that runs the data-quality suites on a landed run."""

from __future__ import annotations

from pathlib import Path

import duckdb
from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from critiquebench.quality import QualityReport, check_run


@task(name="check-quality", cache_policy=NO_CACHE, persist_result=False)
def check_quality_task(
    output: Path, run_id: str, artifact_key: str, tables: duckdb.DuckDBPyConnection | None = None
) -> QualityReport:
    """Validate every table of the run (read-only) and publish the outcome as an artifact.

    ``tables``: the run's tables already read (shared with the report), else read here.
    """
    report = check_run(output, run_id, tables)
    create_markdown_artifact(
        report.markdown(), key=f"quality-{artifact_key}", description="data-quality checks"
    )
    return report
