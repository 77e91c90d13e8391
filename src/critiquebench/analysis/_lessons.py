"""``lessons.md``: recurring failure kinds, regressions and halts, rendered from a RunReport."""

from __future__ import annotations

from critiquebench.analysis._report_types import RunReport


def lessons_markdown(report: RunReport, top: int = 5) -> str:
    """The lessons of one run, as Markdown. No model writes any of it.

    Units that failed for infrastructure reasons are left out, as everywhere in the report.
    """
    lines = [f"# Lessons of run {report.run_id}", ""]
    if report.headline:
        lines += [report.headline, ""]
    lines += ["## Most frequent failure kinds", ""]
    shown: dict[tuple[str, str], int] = {}
    # failure_kinds is ordered by suite, arm, then most frequent first.
    for item in report.failure_kinds:
        key = (item.suite, item.arm)
        if shown.get(key, 0) < top:
            lines.append(f"- {item.suite}, arm {item.arm}: {item.kind} x{item.count}")
            shown[key] = shown.get(key, 0) + 1
    if not shown:
        lines.append("- no failures recorded")
    lines += ["", "## Cases that regressed between rounds", ""]
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
    return "\n".join(lines) + "\n"
