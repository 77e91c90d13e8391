"""Flow ``ab-matrix``: run a suite through every arm, store rows, check them, report."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any
from uuid import UUID

from prefect import flow, get_run_logger
from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.futures import as_completed
from prefect.task_runners import TaskRunner

from critiquebench.analysis import connect, reload_table
from critiquebench.pipeline import (
    RunConfig,
    RunIncomplete,
    Unit,
    batch_label,
    finish_run,
    start_run,
    unit_batches,
)
from critiquebench.progress import UnitProgress
from critiquebench.quality import QualityCheckFailed
from critiquebench.suites import Case
from tasks.quality import check_quality_task
from tasks.report import write_reports_task
from tasks.run_unit import BatchDone, run_units_task
from tasks.runners import RunnerName, make_task_runner, started

_PROGRESS_EVERY_S = 1.0


def _run_batches(
    runner: TaskRunner[Any],
    work: list[tuple[Case, Unit]],
    config: RunConfig,
    progress: UnitProgress,
    progress_id: UUID,
) -> tuple[int, set[int]]:
    """Run ``work`` as batch tasks (see ``unit_batches``); units that raised, worker pids.

    Each batch is one task run in the Prefect UI, named after its units; every unit's
    rows land in Parquet as soon as it finishes, whatever its batch.
    """
    logger = get_run_logger()
    batches = unit_batches(work, config.max_concurrency)
    futures = {
        runner.submit(
            run_units_task, {"work": batch, "config": config, "label": batch_label(batch)}
        ): len(batch)
        for batch in batches
    }
    failed, done, updated = 0, 0, time.monotonic()
    workers: set[int] = set()
    for future in as_completed(list(futures)):
        try:
            result: BatchDone = future.result()
        except Exception as exc:  # a lost batch must not stop the others
            failed += futures[future]
            logger.error("batch failed: %s", exc)
        else:
            failed += len(result.failed)
            workers.update(unit.worker_pid for unit in result.done)
        for _ in range(futures[future]):
            progress.advance()
        done += futures[future]
        # An API call per update costs the server CPU the judges need: at most one a second.
        if done == len(work) or time.monotonic() - updated >= _PROGRESS_EVERY_S:
            update_progress_artifact(progress_id, 100.0 * done / max(len(work), 1))
            updated = time.monotonic()
        logger.info("units finished: %d/%d (%s)", done, len(work), progress.eta_text())
    return failed, workers


@flow(name="ab-matrix")
def ab_matrix(
    config: RunConfig | None = None,
    prices: str = "data/prices.json",
    target: float = 0.80,
    task_runner: RunnerName = "threads",
    dask_address: str | None = None,
) -> dict[str, Any]:
    """Run cases x arms x reps through the critique loop, check the data, report per arm.

    ``config`` holds every run setting (see ``RunConfig``; defaults: the ``basic``
    suite, arms A and B, the local model). Re-running with an existing
    ``config.run_id`` resumes that run: finished units are skipped, units recorded
    with an infrastructure error run again, other experiment settings are refused.
    Raises ``RunIncomplete`` when units are left unfinished (status ``incomplete``).
    ``task_runner`` runs the units on threads of this process (``threads``), on Dask
    worker processes (``dask``: a local cluster of ``config.max_concurrency`` workers,
    or the scheduler at ``dask_address``) or on Ray (``ray``); see tasks/runners.py.
    """
    config = config or RunConfig()
    logger = get_run_logger()
    key = re.sub(r"[^a-z0-9-]+", "-", config.run_id.lower())
    units_runner = make_task_runner(task_runner, config.max_concurrency, dask_address)
    plan = start_run(config)
    total = len(plan.work)
    logger.info(
        "run %s: %d units planned, %d already finished, %d to run (%d retried after errors)",
        config.run_id, plan.planned, plan.skipped, total, plan.retried,
    )  # fmt: skip
    # Called from a sync flow these return plain values; the union type is for async use.
    progress_id = create_progress_artifact(0.0, key=f"progress-{key}", description="units done")
    assert isinstance(progress_id, UUID)
    with started(units_runner) as runner, UnitProgress(total, time.monotonic) as progress:
        failed, workers = _run_batches(runner, plan.work, config, progress, progress_id)
    # One scan of this run's files serves the quality check and the report.
    tables = connect(config.output, [config.run_id], snapshot=True)
    quality = check_quality_task(config.output, config.run_id, key, tables)
    end = finish_run(plan, failed, quality="passed" if quality.passed else "failed")
    reload_table(tables, config.output, [config.run_id], "runs")  # the row just written
    write_reports_task(config.output, config.run_id, Path(prices), target, key, tables)
    if not quality.passed:
        raise QualityCheckFailed(quality)
    if end.status == "incomplete":
        raise RunIncomplete(end)
    return {
        "run_id": config.run_id,
        "output": str(config.output),
        "units_failed": failed,
        "worker_pids": sorted(workers),
    }
