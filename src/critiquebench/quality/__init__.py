"""Data quality of a run's tables, checked with Great Expectations (SPEC 7).

Great Expectations is imported only when a check runs, so importing this package
(for ``QualityCheckFailed``, say) stays cheap.
"""

from critiquebench.quality._check import check_command, check_run
from critiquebench.quality._report import ExpectationOutcome, QualityCheckFailed, QualityReport

__all__ = [
    "ExpectationOutcome",
    "QualityCheckFailed",
    "QualityReport",
    "check_command",
    "check_run",
]
