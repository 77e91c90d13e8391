"""Flow ``ab-matrix``: run a suite through every arm, store rows, check them, report.

Its parameters are the fields of ``RunConfig``, one each, generated from the model
(see ``flow_parameters``): a deployment sets them flat in prefect.yaml and a run
overrides any of them, e.g. ``prefect deployment run 'ab-matrix/smoke' --param limit=5``.
"""

from __future__ import annotations

import inspect
import re
import time
from contextlib import closing
from typing import Any
from uuid import UUID

from prefect import flow, get_run_logger
from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.futures import wait
from prefect.task_runners import TaskRunner
from pydantic_core import PydanticUndefined

from critiquebench.analysis import connect
from critiquebench.pipeline import (
    Root,
    RunConfig,
    RunIncomplete,
    RunInterrupted,
    RunPlan,
    StoreField,
    batch_label,
    batch_prefix,
    compact_run,
    finish_run,
    landed_units,
    start_run,
    stop_requested,
    unit_batches,
)
from critiquebench.pipeline._report_child import PendingReport
from critiquebench.quality import QualityCheckFailed
from critiquebench.quality._isolated import PendingCheck
from critiquebench.runtime.progress import UnitProgress
from tasks.quality import check_quality_task
from tasks.report import write_reports_task
from tasks.run_unit import BatchDone, run_units_task
from tasks.runners import make_task_runner, started

_COMPUTED = frozenset(
    name for name, info in RunConfig.model_fields.items() if info.default is PydanticUndefined
)
"""Fields whose default is computed when a run starts (a new run id, the project's
folders): their parameter defaults to None, "compute it then", so a deployment made
on one machine does not freeze another machine's paths or one run's id."""

_PROGRESS_EVERY_S = 1.0
_CHILD_NICE = 10
"""How much lower the check's and the report's children run until they are called."""


def _run_batches(
    runner: TaskRunner[Any],
    plan: RunPlan,
    progress: UnitProgress,
    progress_id: UUID,
) -> tuple[int, set[int]]:
    """Run the plan's work as batch tasks (see ``unit_batches``); units that raised,
    worker pids.

    Each batch is one task run in the Prefect UI, named after its units, and writes
    one file per table (``BatchWriter``). Progress counts the units of those files
    (``landed_units``), once a second.
    """
    logger = get_run_logger()
    config, work = plan.config, plan.work
    batches = unit_batches(work, config.max_concurrency)
    futures = {
        runner.submit(
            run_units_task,
            {
                "work": batch,
                "config": config,
                "label": batch_label(batch),
                "prefix": batch_prefix(plan.invocation, index),
            },
        ): len(batch)
        for index, batch in enumerate(batches)
    }
    failed, shown = 0, -1
    workers: set[int] = set()
    pending = list(futures)
    while pending:
        finished, not_done = wait(pending, timeout=_PROGRESS_EVERY_S)
        for future in finished:
            try:
                result: BatchDone = future.result()
            except Exception as exc:  # a lost batch must not stop the others
                failed += futures[future]
                logger.error("batch failed: %s", exc)
            else:
                failed += len(result.failed)
                workers.update(unit.worker_pid for unit in result.done)
        pending = list(not_done)
        progress.advance_to(landed_units(plan))
        # An API call per update costs the server CPU the judges need: at most one a second.
        if progress.done != shown:
            shown = progress.done
            update_progress_artifact(progress_id, 100.0 * shown / max(len(work), 1))
            logger.info("units finished: %d/%d (%s)", shown, len(work), progress.eta_text())
    return failed, workers


def flow_parameters() -> list[inspect.Parameter]:
    """One keyword parameter per ``RunConfig`` field: its type and default."""
    parameters = []
    for name, info in RunConfig.model_fields.items():
        computed = name in _COMPUTED
        annotation: Any = info.annotation
        if annotation == Root:
            # The validator too: Prefect would take "s3://b/p" for a Path ("s3:/b/p").
            annotation = StoreField
        parameters.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=None if computed else info.default,
                annotation=annotation | None if computed else annotation,
            )
        )
    return parameters


def config_from_parameters(parameters: dict[str, Any]) -> RunConfig:
    """The ``RunConfig`` of a flow run's parameters (None computes a computed field)."""
    given = {k: v for k, v in parameters.items() if not (k in _COMPUTED and v is None)}
    return RunConfig.model_validate(given)


def _docstring() -> str:
    """The flow's docstring, with one ``Args`` line per parameter for the Prefect UI."""
    lines = [f"    {name}: {info.description}" for name, info in RunConfig.model_fields.items()]
    return f"{_run_ab_matrix.__doc__}\n\nArgs:\n" + "\n".join(lines)


def _run_ab_matrix(**parameters: Any) -> dict[str, Any]:
    """Run cases x arms x reps through the critique loop, check the data, report per arm.

    Every parameter is a field of ``RunConfig`` (defaults: the ``basic`` suite, arms A
    and B, the local model). Re-running with an existing ``run_id`` resumes that run:
    finished units are skipped, units recorded with an infrastructure error run
    again, other experiment settings are refused. Raises ``RunIncomplete`` when units
    are left unfinished (status ``incomplete``). ``task_runner`` runs the units on
    threads of this process (``threads``), on Dask worker processes (``dask``: a local
    cluster of ``max_concurrency`` workers, or the scheduler at ``dask_address``) or
    on Ray (``ray``); see tasks/runners.py.
    """
    config = config_from_parameters(parameters)
    key = re.sub(r"[^a-z0-9-]+", "-", config.run_id.lower())
    units_runner = make_task_runner(config.task_runner, config.max_concurrency, config.dask_address)
    # The data-quality check (Great Expectations) and the reports (charts) run in child
    # processes, their memory gone with them (see critiquebench.runtime.warm_child). They start
    # now, at a low CPU priority, so their imports use what the units leave idle.
    checker = PendingCheck(config.run_id, nice=_CHILD_NICE)
    reporter = PendingReport(nice=_CHILD_NICE)
    try:
        return _run_and_check(config, units_runner, checker, reporter, key)
    finally:
        checker.close()  # children whose results were never asked for (the run failed)
        reporter.close()


def _run_and_check(
    config: RunConfig,
    units_runner: TaskRunner[Any],
    checker: PendingCheck,
    reporter: PendingReport,
    key: str,
) -> dict[str, Any]:
    logger = get_run_logger()
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
        failed, workers = _run_batches(runner, plan, progress, progress_id)
    # One part per table before anything reads the run: the check and the report then
    # open a few files instead of one per batch.
    compact_run(config.output, config.run_id)
    if stop_requested(config.output, config.run_id):
        # Interrupted: record it and stop; checking and reporting a part of the matrix
        # would print a verdict that looks final.
        end = finish_run(plan, failed, None)
        if end.status == "interrupted":
            # Returned, not raised: an exception would put a traceback in the log of a
            # run stopped on purpose. The caller reads "status" (see run_ab_matrix).
            logger.warning("%s", end.message())
            return {**_outcome(config, failed, workers), "status": end.status,
                    "message": end.message()}  # fmt: skip
    # The report's child reads the run's files while this process does for the check;
    # it reports (the run's status included) once finish_run has recorded the run's end.
    reporter.prepare(config.output, config.run_id, config.prices, config.target)
    with closing(connect(config.output, [config.run_id], snapshot=True)) as tables:
        quality = check_quality_task(checker, tables, key)
    end = finish_run(plan, failed, "passed" if quality.passed else "failed")
    write_reports_task(
        config.output, config.run_id, config.prices, config.target, key, pending=reporter
    )
    if not quality.passed:
        raise QualityCheckFailed(quality)
    if end.status == "incomplete":
        raise RunIncomplete(end)
    return {**_outcome(config, failed, workers), "status": end.status}


def _outcome(config: RunConfig, failed: int, workers: set[int]) -> dict[str, Any]:
    return {
        "run_id": config.run_id,
        "output": str(config.output),
        "units_failed": failed,
        "worker_pids": sorted(workers),
    }


_signature = inspect.Signature(flow_parameters(), return_annotation=dict[str, Any])
_target: Any = _run_ab_matrix
_target.__signature__ = _signature
_target.__annotations__ = {p.name: p.annotation for p in _signature.parameters.values()}
_target.__doc__ = _docstring()
ab_matrix = flow(name="ab-matrix")(_run_ab_matrix)


def run_ab_matrix(config: RunConfig) -> dict[str, Any]:
    """Run the ``ab-matrix`` flow with the settings of ``config`` (its fields, flat).

    Raises ``RunInterrupted`` when the run was asked to stop and units are unfinished
    (the flow itself returns then, with status ``interrupted``, see ``request_stop``).
    """
    result: dict[str, Any] = ab_matrix(**config.model_dump())
    if result.get("status") == "interrupted":
        raise RunInterrupted(str(result.get("message", "")))
    return result
