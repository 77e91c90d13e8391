"""Analysis of landed runs: DuckDB views, statistics, the iteration curve, cost, reports."""

from critiquebench.analysis._cost import (
    CallCost,
    CostSummary,
    Price,
    PriceFileError,
    PriceTable,
    call_cost,
    cost_per_defect_removed,
    cost_summary,
    load_prices,
)
from critiquebench.analysis._curve import IterationCurve, iteration_curve
from critiquebench.analysis._html import render_html_report
from critiquebench.analysis._lessons import lessons_markdown
from critiquebench.analysis._report import ArmSummary, RunReport, arm_summaries, build_report
from critiquebench.analysis._sql import interactive_help, query_table, views_sql
from critiquebench.analysis._stats import (
    MIN_CASES,
    Acceptance,
    McNemarResult,
    MeanEstimate,
    ReductionEstimate,
    acceptance,
    cluster_bootstrap_mean,
    cluster_bootstrap_reduction,
    clustered_mcnemar,
    decide_acceptance,
    mcnemar_exact,
    paired_bootstrap_reduction,
)
from critiquebench.analysis._terminal import (
    comparison_table,
    report_markdown,
    summary_table,
    verdict_lines,
)
from critiquebench.analysis._views import connect

__all__ = [
    "MIN_CASES",
    "Acceptance",
    "ArmSummary",
    "CallCost",
    "CostSummary",
    "IterationCurve",
    "McNemarResult",
    "MeanEstimate",
    "Price",
    "PriceFileError",
    "PriceTable",
    "ReductionEstimate",
    "RunReport",
    "acceptance",
    "arm_summaries",
    "build_report",
    "call_cost",
    "cluster_bootstrap_mean",
    "cluster_bootstrap_reduction",
    "clustered_mcnemar",
    "comparison_table",
    "connect",
    "cost_per_defect_removed",
    "cost_summary",
    "decide_acceptance",
    "interactive_help",
    "iteration_curve",
    "lessons_markdown",
    "load_prices",
    "mcnemar_exact",
    "paired_bootstrap_reduction",
    "query_table",
    "render_html_report",
    "report_markdown",
    "summary_table",
    "verdict_lines",
    "views_sql",
]
