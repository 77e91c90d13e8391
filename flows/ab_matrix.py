"""Flow ``ab-matrix``: run a suite through every arm, store rows, report per arm."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.futures import PrefectFuture, as_completed
from prefect.task_runners import ThreadPoolTaskRunner

from critiquebench.analysis import RunReport, build_report, connect, load_prices, report_markdown
from critiquebench.pipeline import RunConfig, finish_run, start_run
from tasks.run_unit import run_unit_task


@flow(name="ab-matrix")
def ab_matrix(
    config: RunConfig | None = None,
    prices: str = "data/prices.json",
    target: float = 0.80,
) -> dict[str, Any]:
    """Run cases x arms x reps through the critique loop and report per arm.

    ``config`` holds every run setting (see ``RunConfig``; defaults: the ``basic``
    suite, arms A and B, the local model). Re-running with an existing
    ``config.run_id`` resumes that run: units already written are skipped.
    """
    config = config or RunConfig()
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
    report = build_report(
        connect(config.output), config.run_id, prices=load_prices(Path(prices)), target=target
    )
    publish_report_artifacts(report)
    if failed:
        raise RuntimeError(f"{failed} of {total} units failed; rerun with run_id={config.run_id}")
    return {"run_id": config.run_id, "output": str(config.output), "units_failed": failed}


def publish_report_artifacts(report: RunReport) -> None:
    """Show the numbers in the Prefect UI: a Markdown summary and a per-arm table."""
    key = re.sub(r"[^a-z0-9-]+", "-", report.run_id.lower())
    create_markdown_artifact(
        report_markdown(report), key=f"report-{key}", description="critiquebench report"
    )
    rows = [
        {
            "arm": s.arm,
            "n": s.n,
            "mean_defects": round(s.mean_defects, 3),
            "reduction_vs_a": None if s.reduction_vs_a is None else round(s.reduction_vs_a, 3),
            "verdict": s.verdict or "",
            "pass_rate": round(s.pass_rate, 3),
            "p50_latency_s": round(s.p50_latency_s, 2),
            "cost_usd": round(s.cost_experiment, 6),
        }
        for s in report.arms
    ]
    create_table_artifact(rows, key=f"arms-{key}", description="per-arm numbers")
