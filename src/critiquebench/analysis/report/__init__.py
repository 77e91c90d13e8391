"""The run report: :class:`RunReport` (the one model every output renders, stored as
``report.json``), the SQL and the rows that fill it from the views, and the numbers it
holds: per-arm summaries, the iteration and cost-matched curves, cost from a price
table, loops against resampling, trigger metrics, units not measured, and the paired
comparison of two runs.

``build_report`` computes it once per run; renderers (:mod:`critiquebench.analysis.render`)
read only a ``RunReport``.
"""

from typing import TYPE_CHECKING

from critiquebench.runtime.lazy import lazy_exports

if TYPE_CHECKING:
    from critiquebench.analysis.report._cost import (
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
    from critiquebench.analysis.report._cost_curve import (
        CostPoint,
        cost_curve_line,
    )
    from critiquebench.analysis.report._curve import (
        IterationCurve,
        TokensPoint,
        iteration_curve,
        pass_rate_vs_tokens,
    )
    from critiquebench.analysis.report._paired import (
        PairedComparison,
        PairingRefused,
        comparison_json,
        paired_comparison,
        paired_table,
    )
    from critiquebench.analysis.report._report import (
        arm_summaries,
        build_report,
        with_run_state,
    )
    from critiquebench.analysis.report._report_types import (
        FAILURE_RULE,
        REPORT_JSON,
        REPORT_VERSION,
        ArmCurves,
        ArmSensitivity,
        ArmSummary,
        EscalatedUnit,
        FailedUnit,
        FailureKindCount,
        MissingUnit,
        ReportFormatError,
        RunCost,
        RunMeta,
        RunReport,
        read_report,
    )
    from critiquebench.analysis.report._resample import (
        ResampleComparison,
        reduction_against_text,
        resample_lines,
    )
    from critiquebench.analysis.report._trigger_metrics import (
        TriggerMetrics,
        TriggerRates,
        trigger_metrics,
        trigger_rates,
    )

_LAZY = {
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
            "CostPoint",
            "cost_curve_line",
        ),
        "_cost_curve",
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
            "arm_summaries",
            "build_report",
            "with_run_state",
        ),
        "_report",
    ),
    **dict.fromkeys(
        (
            "FAILURE_RULE",
            "REPORT_JSON",
            "REPORT_VERSION",
            "ArmCurves",
            "ArmSensitivity",
            "ArmSummary",
            "EscalatedUnit",
            "FailedUnit",
            "FailureKindCount",
            "MissingUnit",
            "ReportFormatError",
            "RunCost",
            "RunMeta",
            "RunReport",
            "read_report",
        ),
        "_report_types",
    ),
    **dict.fromkeys(
        (
            "ResampleComparison",
            "reduction_against_text",
            "resample_lines",
        ),
        "_resample",
    ),
    **dict.fromkeys(
        (
            "TriggerMetrics",
            "TriggerRates",
            "trigger_metrics",
            "trigger_rates",
        ),
        "_trigger_metrics",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "FAILURE_RULE",
    "REPORT_JSON",
    "REPORT_VERSION",
    "ArmCurves",
    "ArmSensitivity",
    "ArmSummary",
    "CallCost",
    "CostPoint",
    "CostSummary",
    "EscalatedUnit",
    "FailedUnit",
    "FailureKindCount",
    "IterationCurve",
    "MissingUnit",
    "PairedComparison",
    "PairingRefused",
    "Price",
    "PriceFileError",
    "PriceTable",
    "ReportFormatError",
    "ResampleComparison",
    "RunCost",
    "RunMeta",
    "RunReport",
    "StoredPrices",
    "TokensPoint",
    "TriggerMetrics",
    "TriggerRates",
    "arm_summaries",
    "build_report",
    "call_cost",
    "comparison_json",
    "cost_curve_line",
    "cost_per_defect_removed",
    "cost_summary",
    "iteration_curve",
    "load_prices",
    "paired_comparison",
    "paired_table",
    "pass_rate_vs_tokens",
    "read_report",
    "reduction_against_text",
    "resample_lines",
    "stored_prices",
    "trigger_metrics",
    "trigger_rates",
    "with_run_state",
]
