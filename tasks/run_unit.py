"""The Prefect task that runs one (case, arm, rep) unit."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from critiquebench.pipeline import RunConfig, Unit, run_unit
from critiquebench.suites import Case


@task(
    name="run-unit",
    task_run_name="{unit.case_id} arm {unit.arm} rep {unit.rep}",
    cache_policy=NO_CACHE,
    persist_result=False,
)
def run_unit_task(case: Case, unit: Unit, config: RunConfig) -> Unit:
    """Run the loop on one unit and write its rows (see critiquebench.pipeline.run_unit)."""
    return run_unit(case, unit, config)
