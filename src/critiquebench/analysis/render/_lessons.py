"""``lessons.md``: recurring failure kinds, what the fix rounds changed, regressions and halts.

Rendered from a RunReport. Failure kinds are counted in the answers kept (one final
attempt per unit), never over every attempt: an arm that tried more would otherwise
look worse for it.
"""

from __future__ import annotations

from critiquebench.analysis.render._format import halt_explanation, markdown_code
from critiquebench.analysis.render._withheld import not_measured_lines
from critiquebench.analysis.report import RunReport

BASELINE = "A"  # the arm with no fix edge: its first draft is its answer


def _kept_lines(report: RunReport, top: int) -> list[str]:
    lines: list[str] = []
    shown: dict[tuple[str, str], int] = {}
    # failure_kinds is ordered by suite, arm, then most frequent in the answers kept.
    for item in report.failure_kinds:
        key = (item.suite, item.arm)
        if item.count and shown.get(key, 0) < top:
            lines.append(
                f"- {item.suite}, arm {item.arm}: {item.kind} x{item.count} "
                f"(in {item.units} unit{'s' if item.units != 1 else ''})"
            )
            shown[key] = shown.get(key, 0) + 1
    return lines or ["- none: no answer kept failed a check"]


def _fixed_lines(report: RunReport) -> list[str]:
    lines = []
    for item in report.failure_kinds:
        if item.arm == BASELINE or not item.first_draft:
            continue
        lines.append(
            f"- {item.suite}, arm {item.arm}: {item.kind}: {item.first_draft} in first drafts, "
            f"{item.fixed} fixed, {item.count} in the answers kept"
        )
    return lines or ["- nothing to fix: no first draft of a looping arm failed"]


def lessons_markdown(report: RunReport, top: int = 5) -> str:
    """The lessons of one run, as Markdown. No model writes any of it.

    Units not measured (infrastructure errors, planned units without rows) are left out,
    as everywhere in the report; the lessons then open with the verdict withheld, those
    units per arm and the sensitivity lines.
    """
    lines = [f"# Lessons of run {report.run_id}", ""]
    withheld = not_measured_lines(report, markdown_code)
    if withheld:
        lines += [withheld[0], "", *(f"- {line.strip()}" for line in withheld[1:]), ""]
    lines += [
        "## Most frequent failure kinds in the answers kept",
        "",
        "Counted in each unit's answer kept (its final attempt), not over every attempt; "
        "checks skipped after a fatal failure (`not_run`) are not a kind of their own.",
        "",
        *_kept_lines(report, top),
        "",
        "## What the fix rounds changed",
        "",
        *_fixed_lines(report),
        "",
        "## Cases that regressed between rounds",
        "",
    ]
    for r in report.regressions:
        lines.append(
            f"- {r.case_id} (arm {r.arm}, rep {r.rep}): round {r.iteration} went "
            f"{r.previous} -> {r.defects}"
        )
    if not report.regressions:
        lines.append("- none: no round made a unit worse")
    lines += ["", "## Halt reasons", ""]
    for arm in report.arms:
        lines += [f"- arm {arm.arm}: {reason} x{units}" for reason, units in arm.halts.items()]
        lines.append(f"  - {halt_explanation(arm)}")
    return "\n".join(lines) + "\n"
