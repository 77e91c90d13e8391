"""Flow ``ab-matrix``: run a suite through every arm, store rows, check them, report."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any
from uuid import UUID

from prefect import flow, get_run_logger
from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.futures import PrefectFuture, as_completed

from critiquebench.analysis import connect, reload_table
from critiquebench.pipeline import RunConfig, RunIncomplete, finish_run, start_run
from critiquebench.progress import UnitProgress
from critiquebench.quality import QualityCheckFailed
from tasks.quality import check_quality_task
from tasks.report import write_reports_task
from tasks.run_unit import UnitDone, run_unit_task
from tasks.runners import RunnerName, make_task_runner, started

_PROGRESS_EVERY_S = 1.0


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
    failed = 0
    updated = time.monotonic()
    workers: set[int] = set()
    with started(units_runner) as runner, UnitProgress(total, time.monotonic) as progress:
        futures: list[PrefectFuture[UnitDone]] = [
            runner.submit(run_unit_task, {"case": case, "unit": unit, "config": config})
            for case, unit in plan.work
        ]
        for done, future in enumerate(as_completed(futures), start=1):
            try:
                workers.add(future.result().worker_pid)
            except Exception as exc:  # one broken unit must not stop the others
                failed += 1
                logger.error("unit failed: %s", exc)
            progress.advance()
            # An API call per unit costs the server CPU the judges need: at most one a second.
            if done == total or time.monotonic() - updated >= _PROGRESS_EVERY_S:
                update_progress_artifact(progress_id, 100.0 * done / max(total, 1))
                updated = time.monotonic()
            logger.info("units finished: %d/%d (%s)", done, total, progress.eta_text())
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
