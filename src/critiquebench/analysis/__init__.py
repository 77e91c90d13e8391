"""Analysis of landed runs: DuckDB views and the per-arm report."""

from critiquebench.analysis._report import ArmSummary, arm_summaries, summary_table
from critiquebench.analysis._views import connect

__all__ = ["ArmSummary", "arm_summaries", "connect", "summary_table"]
