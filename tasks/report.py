"""The Prefect task that writes a run's reports and shows them in the Prefect UI."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from critiquebench.analysis import (
    RunReport,
    build_report,
    connect,
    lessons_markdown,
    load_prices,
    render_html_report,
    report_markdown,
)
from critiquebench.pipeline import ResultStore


@task(name="write-reports", cache_policy=NO_CACHE, persist_result=False)
def write_reports_task(
    output: Path, run_id: str, prices: Path, target: float, artifact_key: str
) -> RunReport:
    """report.html and lessons.md in the run folder; Markdown and table artifacts."""
    table = load_prices(prices)
    connection = connect(output)
    report = build_report(connection, run_id, prices=table, target=target)
    render_html_report(output, run_id, prices=table, target=target)
    ResultStore(output).write_text(run_id, "lessons.md", lessons_markdown(connection, run_id))
    create_markdown_artifact(
        report_markdown(report), key=f"report-{artifact_key}", description="critiquebench report"
    )
    create_table_artifact(
        [
            {
                "arm": s.arm,
                "n": s.n,
                "mean_defects": round(s.mean_defects, 3),
                "reduction_vs_a": None if s.reduction_vs_a is None else round(s.reduction_vs_a, 3),
                "verdict": s.verdict or "",
                "pass_rate": round(s.pass_rate, 3),
                "p50_latency_s": round(s.p50_latency_s, 2),
                "cost_usd": round(s.cost_experiment, 6),
                "verifier_errors": s.verifier_errors,
                "findings_killed": s.findings_killed,
            }
            for s in report.arms
        ],
        key=f"arms-{artifact_key}",
        description="per-arm numbers",
    )
    return report
