"""Markdown records of escalated units, for the human who reads why a loop gave up."""

from __future__ import annotations

from critiquebench.judges._plain import clean_text
from critiquebench.loop import LoopOutcome

# An artifact is model text: bounded, and valid UTF-8 before it reaches a file.
_MAX_ARTIFACT = 20_000


def escalation_markdown(title: str, outcome: LoopOutcome) -> str:
    """Three-line summary first, then every attempt's failures and diff, then the final state."""
    escalation = outcome.escalation
    summary = escalation.summary if escalation else ("", f"stopped: {outcome.halt}", "")
    lines = [
        f"# Escalation: {title}",
        "",
        *(f"- {line}" for line in summary),
        "",
    ]
    for attempt in outcome.attempts:
        lines += [
            f"## Attempt {attempt.iteration}: {attempt.defects_total} defect(s) "
            f"({attempt.defects} of the tests), {attempt.feedback_defects} visible to the loop",
            "",
            f"Diff versus previous: {attempt.diff_summary or 'first draft'}",
            "",
            "```python",
            clean_text(attempt.artifact.rstrip("\n"), _MAX_ARTIFACT),
            "```",
            "",
            *(f"- {failure.describe()}" for failure in attempt.result.failures),
            *(f"- {finding.describe()}" for finding in attempt.result.findings),
            "",
        ]
    lines += [
        "## Final state",
        "",
        f"- halt reason: {outcome.halt}",
        f"- fix rounds: {outcome.retry_count}",
        f"- answer kept: attempt {outcome.final.iteration} "
        f"({outcome.final.defects_total} defect(s), {outcome.final.defects} of the tests)",
        f"- tokens in/out: {outcome.tokens_in}/{outcome.tokens_out}",
    ]
    if outcome.error:
        lines.append(f"- error: {outcome.error}")
    return "\n".join(lines) + "\n"
