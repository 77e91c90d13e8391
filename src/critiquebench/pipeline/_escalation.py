"""Markdown records of escalated units, for the human who reads why a loop gave up.

Everything in a record that a candidate could have written (artifacts, diffs, failure
messages, error texts) is inert: blocks are fenced with a fence longer than any run of
backticks inside them, prose is escaped, and control characters and ANSI sequences are
shown or dropped, so no answer can close a fence, forge a heading, inject HTML or a
link, or colour the terminal that prints the record.
"""

from __future__ import annotations

import difflib

from critiquebench.judges import Failure, markdown_fence, markdown_text
from critiquebench.loop import MAX_DIFF_LINES, Attempt, LoopOutcome, line_changes

# An artifact is model text: bounded, and valid UTF-8 before it reaches a file.
_MAX_ARTIFACT = 20_000
# Checks number their lines within their own test text, so "test line 1" can be a
# feedback check and a held-out check at once; the origin tells them apart.
_ORIGIN = {
    "feedback": "feedback check",
    "heldout": "held-out check",
    "": "whole artifact",
}


def unified_diff(before: str, after: str, *, before_name: str, after_name: str) -> str:
    """The unified diff of two artifacts; empty when they are equal. Past
    :data:`~critiquebench.loop.MAX_DIFF_LINES` lines the diff's cost is unbounded, so
    only the counts of lines added and removed are given."""
    old, new = before.splitlines(), after.splitlines()
    if max(len(old), len(new)) > MAX_DIFF_LINES:
        if old == new:
            return ""
        added, removed = line_changes(before, after)
        return (
            f"(not diffed line by line: {len(old)} and {len(new)} lines, more than "
            f"{MAX_DIFF_LINES}; {added} line(s) added, {removed} removed)"
        )
    lines = difflib.unified_diff(old, new, before_name, after_name, lineterm="")
    return "\n".join(lines)


def _diff_block(before: Attempt, after: Attempt) -> list[str]:
    diff = unified_diff(
        before.artifact,
        after.artifact,
        before_name=f"attempt {before.iteration}",
        after_name=f"attempt {after.iteration}",
    )
    if not diff:
        return [f"No change versus attempt {before.iteration}.", ""]
    return [markdown_fence(diff, "diff", limit=_MAX_ARTIFACT), ""]


def _failure_lines(attempt: Attempt) -> list[str]:
    """The attempt's failures, split into those the loop saw and those held out from it."""
    visible = set(attempt.feedback_failures)
    measured = (*attempt.result.failures, *attempt.result.findings)  # tests, lint, types
    judged = set(measured)
    seen = [f for f in measured if f in visible]
    hidden = [f for f in measured if f not in visible]
    # Critic findings reach the fixer but are never measured defects.
    critic = [f for f in attempt.feedback_failures if f not in judged]
    lines: list[str] = []
    for title, failures in (
        ("Seen by the loop (fed back to the fixer)", seen),
        ("Held out from the loop (measured only)", hidden),
        ("Critic findings (fed back, not measured)", critic),
    ):
        if failures:
            described = "\n".join(_describe(f) for f in failures)
            lines += [f"{title}:", "", markdown_fence(described, "text", limit=_MAX_ARTIFACT), ""]
    return lines


def _describe(failure: Failure) -> str:
    origin = "critic" if failure.kind == "critic" else _ORIGIN.get(failure.origin, failure.origin)
    return f"- ({origin}) {failure.describe()}"


def escalation_markdown(title: str, outcome: LoopOutcome) -> str:
    """Three-line summary first, then the diff from the first draft to the final attempt,
    every attempt's failures and diff, then the final state."""
    escalation = outcome.escalation
    summary = escalation.summary if escalation else ("", f"stopped: {outcome.halt}", "")
    lines = [
        f"# Escalation: {markdown_text(title)}",
        "",
        *(f"- {markdown_text(line)}" for line in summary),
        "",
    ]
    attempts = outcome.attempts
    if len(attempts) > 1:
        lines += [
            f"## Diff: first draft to final attempt (attempt {attempts[-1].iteration})",
            "",
            *_diff_block(attempts[0], attempts[-1]),
        ]
    for previous, attempt in zip((None, *attempts), attempts, strict=False):
        lines += [
            f"## Attempt {attempt.iteration}: {attempt.defects_total} defect(s) "
            f"({attempt.defects} of the tests), {attempt.feedback_defects} visible to the loop",
            "",
        ]
        if previous is None:
            lines += ["First draft.", ""]
        else:
            lines += [
                f"Diff versus attempt {previous.iteration}:",
                "",
                *_diff_block(previous, attempt),
            ]
        lines += [
            markdown_fence(attempt.artifact.rstrip("\n"), "python", limit=_MAX_ARTIFACT),
            "",
            *_failure_lines(attempt),
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
        lines.append(f"- error: {markdown_text(outcome.error)}")
    return "\n".join(lines) + "\n"
