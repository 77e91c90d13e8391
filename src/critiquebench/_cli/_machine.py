"""Output for machines: the CI gate's outcome and exit code, JUnit XML, JSON."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from xml.etree import ElementTree as ET

if TYPE_CHECKING:
    from critiquebench.analysis import RunReport
    from critiquebench.quality import QualityReport

GateOutcome = Literal["met", "not met", "inconclusive", "incomplete"]

GATE_EXIT: dict[GateOutcome, int] = {
    "met": 0,
    "incomplete": 3,
    "not met": 4,
    "inconclusive": 5,
}
"""Exit code of ``run --require met`` per outcome (3 is also ``run``'s incomplete)."""


@dataclass(frozen=True)
class Gate:
    """The gate's outcome for a run and why, in one line."""

    outcome: GateOutcome
    reason: str

    @property
    def exit_code(self) -> int:
        """The process exit code of this outcome (``GATE_EXIT``)."""
        return GATE_EXIT[self.outcome]

    def line(self) -> str:
        """``gate met: B met`` and the like."""
        return f"gate {self.outcome}: {self.reason}"


def gate(report: RunReport) -> Gate:
    """Whether every arm compared with the baseline met the target.

    ``incomplete`` while units are not measured (whatever the arms say), else ``not
    met`` if any arm is not met, else ``inconclusive`` if any arm has no decided
    verdict (or no arm is compared), else ``met``.
    """
    if report.unmeasured:
        return Gate("incomplete", report.not_measured_text or "units not measured")
    compared = [arm for arm in report.arms if arm.reduction is not None]
    if not compared:
        return Gate("inconclusive", "no arm is compared with the baseline")
    said = ", ".join(f"{arm.arm} {arm.verdict or 'no verdict'}" for arm in compared)
    verdicts = {arm.verdict for arm in compared}
    if "not met" in verdicts:
        return Gate("not met", said)
    if verdicts != {"met"}:
        return Gate("inconclusive", said)
    return Gate("met", said)


def junit_xml(report: RunReport) -> str:
    """A JUnit XML summary: a test per compared arm (failed when not met, skipped when
    inconclusive) and one that the run measured every unit."""
    suite = ET.Element("testsuite", name=f"critiquebench {report.run_id}")
    cases: list[ET.Element] = []
    measured = ET.Element("testcase", classname=report.run_id, name="every unit measured")
    if report.unmeasured:
        ET.SubElement(measured, "failure", message=report.not_measured_text or "").text = (
            report.headline or ""
        )
    cases.append(measured)
    for arm in report.arms:
        if arm.reduction is None:
            continue
        name = f"arm {arm.arm} reduces defects by the target {report.target:.0%}"
        case = ET.Element("testcase", classname=report.run_id, name=name)
        reason = arm.verdict_reason or ""
        if arm.verdict == "not met":
            ET.SubElement(case, "failure", message=f"not met: {reason}")
        elif arm.verdict != "met":
            ET.SubElement(case, "skipped", message=f"{arm.verdict or 'no verdict'}: {reason}")
        cases.append(case)
    suite.extend(cases)
    counts = {
        "tests": len(cases),
        "failures": sum(1 for c in cases if c.find("failure") is not None),
        "skipped": sum(1 for c in cases if c.find("skipped") is not None),
        "errors": 0,
    }
    for key, value in counts.items():
        suite.set(key, str(value))
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, "unicode") + "\n"


def compare_json(first: RunReport, second: RunReport, paired: dict[str, Any]) -> str:
    """Two runs' reports (each its report.json content) and their paired comparison as
    one JSON document."""
    runs = [json.loads(report.to_json()) for report in (first, second)]
    return json.dumps({"runs": runs, "paired": paired}, indent=2, ensure_ascii=False) + "\n"


def check_json(found: QualityReport) -> str:
    """A data-quality check as JSON: verdict, counts and every expectation's outcome."""
    data = {
        "run_id": found.run_id,
        "passed": found.passed,
        "complete": found.complete,
        "not_measured": found.not_measured,
        "missing": found.missing,
        "unfinished": list(found.unfinished),
        "expectations": [dataclasses.asdict(result) for result in found.results],
    }
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
