"""The Prefect task that runs one (case, arm, rep) unit."""

from __future__ import annotations

import os
from dataclasses import dataclass

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from critiquebench.pipeline import RunConfig, Unit, run_unit
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
