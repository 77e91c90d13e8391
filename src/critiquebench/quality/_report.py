"""What a data-quality check found: one outcome per expectation, and a readable summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ExpectationOutcome:
    """One expectation applied to one table of a run."""

    table: str
    expectation: str
    """GX expectation type, e.g. ``expect_column_values_to_not_be_null``."""
    columns: tuple[str, ...]
    success: bool
    unexpected_count: int | None
    """Offending rows; None for table-level expectations (row counts, distinct values)."""
    offending: tuple[dict[str, Any], ...] = ()
    """Up to five offending rows (identifying columns and the columns checked)."""
    description: str | None = None
    note: str | None = None
    """The error that stopped it, the observed value (table-level), or what is allowed."""

    def label(self) -> str:
        """``table: expectation [columns]``."""
        columns = f" [{', '.join(self.columns)}]" if self.columns else ""
        return f"{self.table}: {self.expectation}{columns}"

    def count_text(self) -> str:
        """How badly it failed, in words."""
        if self.unexpected_count is None:
            return self.note or "failed"
        found = f"{self.unexpected_count} unexpected"
        return f"{found} ({self.note})" if self.note else found


def _cell(value: Any) -> str:
    return "null" if value is None else repr(value)


@dataclass(frozen=True)
class QualityReport:
    """The data-quality verdict on one run."""

    run_id: str
    passed: bool
    results: list[ExpectationOutcome] = field(default_factory=list)

    @property
    def failures(self) -> list[ExpectationOutcome]:
        """The expectations that were not met."""
        return [result for result in self.results if not result.success]

    def markdown(self) -> str:
        """A summary: the verdict, then every failing expectation with a few offending rows."""
        failures = self.failures
        tables = sorted({r.table for r in self.results})
        head = f"## Data quality of run `{self.run_id}`: {'passed' if self.passed else 'FAILED'}"
        if not failures:
            return f"{head}\n\nAll {len(self.results)} expectations met ({', '.join(tables)}).\n"
        lines = [head, "", f"{len(failures)} of {len(self.results)} expectations failed.", ""]
        lines += ["| table | expectation | columns | found |", "|---|---|---|---|"]
        lines += [
            f"| {f.table} | {f.expectation} | {', '.join(f.columns)} | {f.count_text()} |"
            for f in failures
        ]
        for failure in failures:
            lines += ["", f"### {failure.label()}", ""]
            if failure.description:
                lines.append(f"Expected: {failure.description}. ")
            lines.append(f"Found: {failure.count_text()}.")
            if failure.offending:
                lines.append("")
                lines += [
                    "- `" + ", ".join(f"{k}={_cell(v)}" for k, v in row.items()) + "`"
                    for row in failure.offending
                ]
        return "\n".join(lines) + "\n"


class QualityCheckFailed(RuntimeError):
    """A run's tables broke at least one expectation; the message lists each of them."""

    def __init__(self, report: QualityReport) -> None:
        self.report = report
        failures = report.failures
        lines = [f"data quality check failed for run {report.run_id}: {len(failures)} failing"]
        lines += [f"  - {f.label()}: {f.count_text()}" for f in failures]
        super().__init__("\n".join(lines))
