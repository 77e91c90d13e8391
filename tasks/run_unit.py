"""The Prefect task that runs one (case, arm, rep) unit."""

from __future__ import annotations

import os
from dataclasses import dataclass

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from critiquebench.pipeline import BatchWriter, RunConfig, Unit, run_unit, stop_requested
from critiquebench.suites import Case


@dataclass(frozen=True)
class UnitDone:
    """What a finished unit task returns: the unit, the process that ran it, its error."""

    unit: Unit
    worker_pid: int
    error: str | None = None
    """The infrastructure error the unit recorded (it is then rerun by a resume)."""


@task(
    name="run-unit",
    task_run_name="{unit.case_id} arm {unit.arm} rep {unit.rep}",
    cache_policy=NO_CACHE,
    persist_result=False,
)
def run_unit_task(case: Case, unit: Unit, config: RunConfig) -> UnitDone:
    """Run the loop on one unit and write its rows (see critiquebench.pipeline.run_unit)."""
    written = run_unit(case, unit, config)
    if written.error is not None:
        get_run_logger().warning("unit not finished: %s", written.error)
    return UnitDone(written.unit, os.getpid(), written.error)


@dataclass(frozen=True)
class BatchDone:
    """What a batch task returns: its finished units, and the units that raised."""

    done: tuple[UnitDone, ...]
    failed: tuple[str, ...] = ()
    """``unit key: message`` of each unit that raised (it has no rows; a rerun retries it)."""


@task(name="run-units", task_run_name="{label}", cache_policy=NO_CACHE, persist_result=False)
def run_units_task(
    work: list[tuple[Case, Unit]], config: RunConfig, label: str, prefix: str
) -> BatchDone:
    """Run a batch of units one after another (``label`` names them in the Prefect UI).

    The batch's rows are written as one file per table (``BatchWriter``, its files
    named after ``prefix``, e.g. ``batch_prefix(invocation, index)``), when it ends or
    sooner should its units be slow. A unit that raises is logged and counted without
    stopping the rest. Once the run is asked to stop (Ctrl-C), units not yet started
    are left for a resume, and those finished are written.
    """
    logger = get_run_logger()
    done: list[UnitDone] = []
    failed: list[str] = []
    with BatchWriter(config, prefix) as batch:
        for case, unit in work:
            if stop_requested(config.output, config.run_id):
                break
            try:
                written = run_unit(case, unit, config, batch)
            except Exception as exc:  # one broken unit must not stop the others
                logger.error("unit %s failed: %s", unit.key, exc)
                failed.append(f"{unit.key}: {exc}")
                continue
            if written.error is not None:
                logger.warning("unit %s not finished: %s", unit.key, written.error)
            done.append(UnitDone(written.unit, os.getpid(), written.error))
    return BatchDone(tuple(done), tuple(failed))
