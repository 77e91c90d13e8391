"""Analysis of landed runs: DuckDB views, statistics, the iteration curve, cost, reports.

Every name is imported on first use (PEP 562): the run's process needs the DuckDB
views (``connect``) but not the charts, statistics and templates, which load altair,
scipy and Jinja2 (1.6 s and ~150 MiB together).
"""

from typing import TYPE_CHECKING

from critiquebench.runtime.lazy import lazy_exports

if TYPE_CHECKING:
    from critiquebench.analysis._charts import Figure, figure_svg
    from critiquebench.analysis._cost import (
        CallCost,
        CostSummary,
        Price,
        PriceFileError,
        PriceTable,
        StoredPrices,
        call_cost,
        cost_per_defect_removed,
        cost_summary,
        load_prices,
        stored_prices,
    )
    from critiquebench.analysis._curve import (
        IterationCurve,
        TokensPoint,
        iteration_curve,
        pass_rate_vs_tokens,
    )
    from critiquebench.analysis._figures import report_figures
    from critiquebench.analysis._format import inert, markdown_code
    from critiquebench.analysis._html import html_report
    from critiquebench.analysis._lessons import lessons_markdown
    from critiquebench.analysis._outputs import (
        ReportFiles,
        render_html_report,
        write_report_files,
        write_reports,
    )
    from critiquebench.analysis._paired import (
        PairedComparison,
        PairingRefused,
        comparison_json,
        paired_comparison,
        paired_table,
    )
    from critiquebench.analysis._project_lessons import (
        LESSONS_FILE,
        project_lessons_markdown,
        update_project_lessons,
    )
    from critiquebench.analysis._report import arm_summaries, build_report, with_run_state
    from critiquebench.analysis._report_types import (
        FAILURE_RULE,
        REPORT_VERSION,
        ArmCurves,
        ArmSensitivity,
        ArmSummary,
        EscalatedUnit,
        FailedUnit,
        MissingUnit,
        ReportFormatError,
        RunCost,
        RunMeta,
        RunReport,
        read_report,
    )
    from critiquebench.analysis._sql import interactive_help, query_table
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
    from critiquebench.analysis._transcript_view import (
        StoryError,
        UnitStory,
        load_stories,
        render_side_by_side,
        render_story,
        render_units,
        unit_list,
    )
    from critiquebench.analysis._views import (
        connect,
        latest_run,
        read_only_connection,
        reload_table,
        table_files,
        views_sql,
    )
    from critiquebench.analysis._withheld import not_measured_lines, sensitivity_lines

_LAZY = {
    **dict.fromkeys(("Figure", "figure_svg"), "_charts"),
    **dict.fromkeys(
        (
            "CallCost",
            "CostSummary",
            "Price",
            "PriceFileError",
            "PriceTable",
            "StoredPrices",
            "call_cost",
            "cost_per_defect_removed",
            "cost_summary",
            "load_prices",
            "stored_prices",
        ),
        "_cost",
    ),
    **dict.fromkeys(
        (
            "IterationCurve",
            "TokensPoint",
            "iteration_curve",
            "pass_rate_vs_tokens",
        ),
        "_curve",
    ),
    "report_figures": "_figures",
    **dict.fromkeys(("inert", "markdown_code"), "_format"),
    "html_report": "_html",
    "lessons_markdown": "_lessons",
    **dict.fromkeys(
        ("ReportFiles", "render_html_report", "write_report_files", "write_reports"), "_outputs"
    ),
    **dict.fromkeys(
        (
            "LESSONS_FILE",
            "project_lessons_markdown",
            "update_project_lessons",
        ),
        "_project_lessons",
    ),
    **dict.fromkeys(("arm_summaries", "build_report", "with_run_state"), "_report"),
    **dict.fromkeys(
        (
            "FAILURE_RULE",
            "REPORT_VERSION",
            "ArmCurves",
            "ArmSensitivity",
            "ArmSummary",
            "EscalatedUnit",
            "FailedUnit",
            "MissingUnit",
            "ReportFormatError",
            "RunCost",
            "RunMeta",
            "RunReport",
            "read_report",
        ),
        "_report_types",
    ),
    **dict.fromkeys(("interactive_help", "query_table"), "_sql"),
    **dict.fromkeys(
        (
            "MIN_CASES",
            "Acceptance",
            "McNemarResult",
            "MeanEstimate",
            "ReductionEstimate",
            "acceptance",
            "cluster_bootstrap_mean",
            "cluster_bootstrap_reduction",
            "clustered_mcnemar",
            "decide_acceptance",
            "mcnemar_exact",
            "paired_bootstrap_reduction",
        ),
        "_stats",
    ),
    **dict.fromkeys(
        (
            "artifact_rows",
            "comparison_table",
            "report_markdown",
            "summary_table",
            "verdict_lines",
        ),
        "_terminal",
    ),
    **dict.fromkeys(
        (
            "connect",
            "latest_run",
            "read_only_connection",
            "reload_table",
            "table_files",
            "views_sql",
        ),
        "_views",
    ),
    **dict.fromkeys(("not_measured_lines", "sensitivity_lines"), "_withheld"),
    **dict.fromkeys(
        (
            "PairedComparison",
            "PairingRefused",
            "comparison_json",
            "paired_comparison",
            "paired_table",
        ),
        "_paired",
    ),
    **dict.fromkeys(
        (
            "StoryError",
            "UnitStory",
            "load_stories",
            "render_side_by_side",
            "render_story",
            "render_units",
            "unit_list",
        ),
        "_transcript_view",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "FAILURE_RULE",
    "LESSONS_FILE",
    "MIN_CASES",
    "REPORT_VERSION",
    "Acceptance",
    "ArmCurves",
    "ArmSensitivity",
    "ArmSummary",
    "CallCost",
    "CostSummary",
    "EscalatedUnit",
    "FailedUnit",
    "Figure",
    "IterationCurve",
    "McNemarResult",
    "MeanEstimate",
    "MissingUnit",
    "PairedComparison",
    "PairingRefused",
    "Price",
    "PriceFileError",
    "PriceTable",
    "ReductionEstimate",
    "ReportFiles",
    "ReportFormatError",
    "RunCost",
    "RunMeta",
    "RunReport",
    "StoredPrices",
    "StoryError",
    "TokensPoint",
    "UnitStory",
    "acceptance",
    "arm_summaries",
    "artifact_rows",
    "build_report",
    "call_cost",
    "cluster_bootstrap_mean",
    "cluster_bootstrap_reduction",
    "clustered_mcnemar",
    "comparison_json",
    "comparison_table",
    "connect",
    "cost_per_defect_removed",
    "cost_summary",
    "decide_acceptance",
    "figure_svg",
    "html_report",
    "inert",
    "interactive_help",
    "iteration_curve",
    "latest_run",
    "lessons_markdown",
    "load_prices",
    "load_stories",
    "markdown_code",
    "mcnemar_exact",
    "not_measured_lines",
    "paired_bootstrap_reduction",
    "paired_comparison",
    "paired_table",
    "pass_rate_vs_tokens",
    "project_lessons_markdown",
    "query_table",
    "read_only_connection",
    "read_report",
    "reload_table",
    "render_html_report",
    "render_side_by_side",
    "render_story",
    "render_units",
    "report_figures",
    "report_markdown",
    "sensitivity_lines",
    "stored_prices",
    "summary_table",
    "table_files",
    "unit_list",
    "update_project_lessons",
    "verdict_lines",
    "views_sql",
    "with_run_state",
    "write_report_files",
    "write_reports",
]
