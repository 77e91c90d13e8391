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
)
from critiquebench.analysis._curve import IterationCurve, iteration_curve
from critiquebench.analysis._report import ArmSummary, arm_summaries, summary_table
from critiquebench.analysis._stats import (
    McNemarResult,
    ReductionEstimate,
    acceptance,
    mcnemar_exact,
    paired_bootstrap_reduction,
)
from critiquebench.analysis._views import connect

__all__ = [
    "ArmSummary",
    "CallCost",
    "CostSummary",
    "IterationCurve",
    "McNemarResult",
    "Price",
    "PriceFileError",
    "PriceTable",
    "ReductionEstimate",
    "acceptance",
    "arm_summaries",
    "call_cost",
    "connect",
    "cost_per_defect_removed",
    "cost_summary",
    "iteration_curve",
    "mcnemar_exact",
    "paired_bootstrap_reduction",
    "summary_table",
]
