"""The Prefect task that runs the data-quality suites on a landed run."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from critiquebench.quality import QualityReport
from critiquebench.quality._isolated import PendingCheck


@task(name="check-quality", cache_policy=NO_CACHE, persist_result=False)
def check_quality_task(pending: PendingCheck, artifact_key: str) -> QualityReport:
    """Finish the check of the run in the child process ``pending`` (started with the
    run: it imported Great Expectations and validated each unit's rows as they landed
    while the units ran, see ``critiquebench.quality._incremental``); publish the outcome."""
    pending.finish()
    checked = pending.result()
    get_run_logger().info(
        "data-quality check: %d expectations in a child process (peak RSS %.0f MiB, %.1f s)",
        len(checked.value.results), checked.peak_rss_mib, checked.seconds,
    )  # fmt: skip
    create_markdown_artifact(
        checked.value.markdown(), key=f"quality-{artifact_key}", description="data-quality checks"
    )
    return checked.value
