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


# Units listed per arm; the report lists every one.
_SHOWN = 20


def _cell(value: Any) -> str:
    return "null" if value is None else repr(value)


@dataclass(frozen=True)
class QualityReport:
    """The data-quality verdict on one run."""

    run_id: str
    passed: bool
    """Every expectation was met (the tables are sound)."""
    results: list[ExpectationOutcome] = field(default_factory=list)
    unfinished: tuple[dict[str, Any], ...] = ()
    """Units recorded with an infrastructure error (case_id, arm, rep, error)."""
    missing: int = 0
    """Units of the matrix (latest start) without any cases row."""

    @property
    def complete(self) -> bool:
        """Every unit of the run finished: nothing is left for a rerun to do."""
        return not self.unfinished and not self.missing

    @property
    def not_measured(self) -> int:
        """Units whose results are not in: infrastructure errors and planned units
        without rows. While it is not 0 the run's verdict is inconclusive."""
        return len(self.unfinished) + self.missing

    def _unfinished_markdown(self) -> list[str]:
        if self.complete:
            return []
        # Imported here: the pipeline imports this module, and the analysis imports the pipeline.
        from critiquebench.analysis import markdown_code

        n = self.not_measured
        lines = [
            "",
            f"### Run incomplete: {len(self.unfinished)} unit(s) with an infrastructure "
            f"error, {self.missing} without rows",
            "",
            f"**Verdict: inconclusive: {n} unit{'s' if n != 1 else ''} not measured.** No "
            "arm is met or not met while they are out: they are excluded from the "
            f"statistics; `critiquebench run --run-id {self.run_id}` with the run's settings "
            "retries only them. The report (`critiquebench report`) adds the reduction with "
            "them counted as failures of their arm.",
            "",
        ]
        by_arm: dict[str, list[dict[str, Any]]] = {}
        for row in self.unfinished:
            by_arm.setdefault(str(row["arm"]), []).append(row)
        for arm, rows in sorted(by_arm.items()):
            lines.append(
                f"- arm {markdown_code(arm)}: {len(rows)} unit(s) with an infrastructure error"
            )
            lines += [
                f"  - {markdown_code(str(row['case_id']))} rep {row['rep']}: "
                f"{markdown_code(str(row['error']))}"
                for row in rows[:_SHOWN]
            ]
            if len(rows) > _SHOWN:
                lines.append(f"  - ... and {len(rows) - _SHOWN} more")
        if self.missing:
            lines.append(f"- {self.missing} planned unit(s) without rows (they never finished)")
        return lines

    @property
    def failures(self) -> list[ExpectationOutcome]:
        """The expectations that were not met."""
        return [result for result in self.results if not result.success]

    def markdown(self) -> str:
        """A summary: the verdict, then every failing expectation with a few offending rows."""
        failures = self.failures
        tables = sorted({r.table for r in self.results})
        head = f"## Data quality of run `{self.run_id}`: {'passed' if self.passed else 'FAILED'}"
        if not self.complete:
            head += " (run INCOMPLETE)"
        if not failures:
            met = f"All {len(self.results)} expectations met ({', '.join(tables)})."
            return "\n".join([head, "", met, *self._unfinished_markdown()]) + "\n"
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
        lines += self._unfinished_markdown()
        return "\n".join(lines) + "\n"


class QualityCheckFailed(RuntimeError):
    """A run's tables broke at least one expectation; the message lists each of them."""

    def __init__(self, report: QualityReport) -> None:
        self.report = report
        failures = report.failures
        lines = [f"data quality check failed for run {report.run_id}: {len(failures)} failing"]
        lines += [f"  - {f.label()}: {f.count_text()}" for f in failures]
        super().__init__("\n".join(lines))
