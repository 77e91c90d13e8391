"""What every output says while units of a run are not measured (SPEC 8).

The verdict is "inconclusive: N units not measured", never met or not met; the units
are named per arm with their reasons (made inert: an error can quote the candidate);
and a sensitivity line per arm gives the reduction with every unit not measured
counted as a failure of its arm (``FAILURE_RULE``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from critiquebench.analysis.render._format import inert, pct
from critiquebench.analysis.report import ArmSensitivity, RunReport

Quote = Callable[[str], str]
_MISSING_REASON = "no rows: the unit never finished (the run was stopped, killed or raised)"
_SHOWN_PER_ARM = 10


@dataclass(frozen=True)
class ExcludedArm:
    """One arm's units not measured: how many, and each one named with its reason."""

    arm: str
    errors: int
    missing: int
    units: list[tuple[str, int, str]]
    """(case id, rep, reason) of each unit that can be named, in case and rep order."""

    @property
    def count(self) -> int:
        """Units of the arm not measured."""
        return self.errors + self.missing


def excluded_by_arm(report: RunReport) -> list[ExcludedArm]:
    """The units not measured grouped by arm (arms in name order), with their reasons:
    the recorded error, or that the planned unit has no rows."""
    named: dict[str, list[tuple[str, int, str]]] = {}
    for failed in report.failed_units:
        named.setdefault(failed.arm, []).append((failed.case_id, failed.rep, failed.error))
    for unit in report.missing_units:
        named.setdefault(unit.arm, []).append((unit.case_id, unit.rep, _MISSING_REASON))
    counts = {s.arm: s for s in report.sensitivity}
    result = []
    for arm in sorted(set(named) | {s.arm for s in report.sensitivity if s.not_measured}):
        units = sorted(named.get(arm, []))
        errors = sum(1 for failed in report.failed_units if failed.arm == arm)
        known = counts.get(arm)
        result.append(
            ExcludedArm(arm, errors, known.missing if known else len(units) - errors, units)
        )
    return result


def excluded_summary(excluded: ExcludedArm) -> str:
    """``arm B: 12 units not measured (10 with an infrastructure error, 2 without rows)``."""
    parts = []
    if excluded.errors:
        parts.append(f"{excluded.errors} with an infrastructure error")
    if excluded.missing:
        parts.append(f"{excluded.missing} without rows")
    n = excluded.count
    return f"arm {excluded.arm}: {n} unit{'s' if n != 1 else ''} not measured ({', '.join(parts)})"


def excluded_lines(
    report: RunReport, quote: Quote = inert, shown: int = _SHOWN_PER_ARM
) -> list[str]:
    """Per arm, its units not measured and each one's reason (the first ``shown``;
    report.json and report.html list every one). ``quote`` makes the case ids and the
    reasons inert for the output (:func:`inert`, :func:`markdown_code`)."""
    lines = []
    for excluded in excluded_by_arm(report):
        lines.append(f"  {excluded_summary(excluded)}")
        for case_id, rep, reason in excluded.units[:shown]:
            lines.append(f"    {quote(case_id)} rep {rep}: {quote(reason)}")
        hidden = len(excluded.units) - shown
        if hidden > 0:
            lines.append(f"    ... and {hidden} more (every one in report.json and report.html)")
    if report.missing_unnamed:
        lines.append(
            f"  and {report.missing_unnamed} planned unit(s) of cases with no row at all "
            "(every arm of them)"
        )
    return lines


def _interval(estimate_text: str, low: float | None, high: float | None) -> str:
    return (
        estimate_text
        if low is None or high is None
        else f"{estimate_text} [{pct(low)}, {pct(high)}]"
    )


def sensitivity_text(report: RunReport, arm: str) -> str | None:
    """What arm ``arm``'s reduction becomes with every unit not measured counted as a
    failure of its arm; None while every unit was measured or for arm A."""
    if not report.unmeasured or arm == "A":
        return None
    if not report.sensitivity:  # a report written before version 4
        return (
            "sensitivity: not in this report (written by an older critiquebench); rebuild it "
            f"with `critiquebench report {report.run_id}`"
        )
    by_arm: dict[str, ArmSensitivity] = {s.arm: s for s in report.sensitivity}
    treated, baseline = by_arm.get(arm), by_arm.get("A")
    if treated is None or baseline is None or treated.reduction is None:
        return None
    estimate = treated.reduction
    reduction = _interval(pct(estimate.estimate), estimate.low, estimate.high)
    if estimate.estimate is None and estimate.note:
        reduction += f" ({estimate.note})"
    return (
        f"sensitivity, counting every unit not measured as a failure of its arm (A "
        f"{baseline.not_measured}, {arm} {treated.not_measured}): reduction {reduction}; "
        f"mean defects A {baseline.mean_defects:.2f} -> {arm} {treated.mean_defects:.2f}; "
        f"pass rate A {pct(baseline.pass_rate)} -> {arm} {pct(treated.pass_rate)}"
    )


def withheld_arms(report: RunReport) -> list[str]:
    """The arms other than A whose verdict is withheld while units are not measured,
    those without any measured unit (no summary) included, in name order."""
    if not report.unmeasured:
        return []
    arms = {s.arm for s in report.arms if s.reduction is not None}
    arms |= {s.arm for s in report.sensitivity}
    return sorted(arm for arm in arms if arm != "A")


def not_measured_lines(
    report: RunReport, quote: Quote = inert, *, sensitivity: bool = True
) -> list[str]:
    """The verdict of a run with units not measured: ``inconclusive: N units not
    measured`` and why, the units per arm with their reasons, and (``sensitivity``)
    per arm the reduction with them counted as failures of their arm. Empty when
    every unit was measured. ``quote`` makes candidate-derived text inert."""
    if not report.headline:
        return []
    lines = [report.headline, *excluded_lines(report, quote)]
    return lines + sensitivity_lines(report) if sensitivity else lines


def sensitivity_lines(report: RunReport) -> list[str]:
    """``arm B: sensitivity, ...`` for each arm whose verdict is withheld (see
    :func:`sensitivity_text`); empty when every unit was measured."""
    found = ((arm, sensitivity_text(report, arm)) for arm in withheld_arms(report))
    return [f"arm {arm}: {text}" for arm, text in found if text]
