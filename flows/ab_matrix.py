"""Flow ``ab-matrix``: run a suite through every arm, store rows, report per arm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.futures import PrefectFuture, as_completed
from prefect.task_runners import ThreadPoolTaskRunner

from critiquebench.analysis import arm_summaries, connect
from critiquebench.pipeline import RunConfig, finish_run, start_run
from tasks.run_unit import run_unit_task


@flow(name="ab-matrix")
def ab_matrix(
    suite: str = "basic",
    limit: int | None = None,
    arms: list[str] | None = None,
    reps: int = 1,
    retry_limit: int = 3,
    model: str = "local",
    max_concurrency: int = 2,
    run_id: str | None = None,
    output: str = "data/runs",
    feedback: str = "visible",
    token_budget: int | None = 20_000,
    temperature: float = 0.7,
    max_tokens: int = 256,
) -> dict[str, Any]:
    """Run cases x arms x reps through the critique loop and report per arm.

    Re-running with an existing ``run_id`` resumes it: written units are skipped.
    """
    settings: dict[str, Any] = {
        "suite": suite,
        "limit": limit,
        "arms": arms or ["A", "B"],
        "reps": reps,
        "retry_limit": retry_limit,
        "model": model,
        "max_concurrency": max_concurrency,
        "output": Path(output),
        "feedback": feedback,
        "token_budget": token_budget,
        "temperature": temperature,
        "max_tokens": max_tokens,
    }
    if run_id:
        settings["run_id"] = run_id
    config = RunConfig.model_validate(settings)
    logger = get_run_logger()
    plan = start_run(config)
    total = len(plan.work)
    logger.info(
        "run %s: %d units planned, %d already written, %d to run",
        config.run_id,
        plan.planned,
        plan.skipped,
        total,
    )
    failed = 0
    task_runner: ThreadPoolTaskRunner[Any] = ThreadPoolTaskRunner(
        max_workers=config.max_concurrency
    )
    with task_runner as runner:
        futures: list[PrefectFuture[Any]] = [
            runner.submit(run_unit_task, {"case": case, "unit": unit, "config": config})
            for case, unit in plan.work
        ]
        for done, future in enumerate(as_completed(futures), start=1):
            try:
                future.result()
            except Exception as exc:  # one broken unit must not stop the others
                failed += 1
                logger.error("unit failed: %s", exc)
            logger.info("units finished: %d/%d", done, total)
    finish_run(plan, failed)
    summaries = arm_summaries(connect(config.output), config.run_id)
    if failed:
        raise RuntimeError(f"{failed} of {total} units failed; rerun with run_id={config.run_id}")
    return {
        "run_id": config.run_id,
        "output": str(config.output),
        "arms": [summary.__dict__ for summary in summaries],
    }
