"""Analysis of landed runs: DuckDB views, statistics, the iteration curve, cost, reports."""

from critiquebench.analysis._charts import Figure, figure_svg
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
from critiquebench.analysis._curve import (
    IterationCurve,
    TokensPoint,
    iteration_curve,
    pass_rate_vs_tokens,
)
from critiquebench.analysis._figures import report_figures
from critiquebench.analysis._html import html_report
from critiquebench.analysis._lessons import lessons_markdown
from critiquebench.analysis._outputs import (
    ReportFiles,
    read_report,
    render_html_report,
    write_reports,
)
from critiquebench.analysis._project_lessons import (
    LESSONS_FILE,
    project_lessons_markdown,
    update_project_lessons,
)
from critiquebench.analysis._report import arm_summaries, build_report
from critiquebench.analysis._report_types import (
    REPORT_VERSION,
    ArmCurves,
    ArmSummary,
    EscalatedUnit,
    FailedUnit,
    ReportFormatError,
    RunCost,
    RunMeta,
    RunReport,
)
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
    artifact_rows,
    comparison_table,
    report_markdown,
    summary_table,
    verdict_lines,
)
from critiquebench.analysis._views import connect, read_only_connection

__all__ = [
    "LESSONS_FILE",
    "MIN_CASES",
    "REPORT_VERSION",
    "Acceptance",
    "ArmCurves",
    "ArmSummary",
    "CallCost",
    "CostSummary",
    "EscalatedUnit",
    "FailedUnit",
    "Figure",
    "IterationCurve",
    "McNemarResult",
    "MeanEstimate",
    "Price",
    "PriceFileError",
    "PriceTable",
    "ReductionEstimate",
    "ReportFiles",
    "ReportFormatError",
    "RunCost",
    "RunMeta",
    "RunReport",
    "TokensPoint",
    "acceptance",
    "arm_summaries",
    "artifact_rows",
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
    "figure_svg",
    "html_report",
    "interactive_help",
    "iteration_curve",
    "lessons_markdown",
    "load_prices",
    "mcnemar_exact",
    "paired_bootstrap_reduction",
    "pass_rate_vs_tokens",
    "project_lessons_markdown",
    "query_table",
    "read_only_connection",
    "read_report",
    "render_html_report",
    "report_figures",
    "report_markdown",
    "summary_table",
    "update_project_lessons",
    "verdict_lines",
    "views_sql",
    "write_reports",
]
