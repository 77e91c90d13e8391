"""Prompt templates of the loop, kept in one place so they can be read and diffed."""

from __future__ import annotations

from critiquebench.judges import PYTHON_FORMAT, ArtifactFormat, Failure, artifact_format
from critiquebench.loop._state import Attempt
from critiquebench.models import Message
from critiquebench.suites import Case

ACTOR_SYSTEM = PYTHON_FORMAT.system
"""The actor's system prompt for Python cases; other judges declare their own."""

TASK_TEMPLATE = "{prompt}"

CODE_TASK_TEMPLATE = (
    "Complete this Python function. Return the whole function, signature included.\n\n"
    "```python\n{prompt}\n```"
)

FIX_TEMPLATE = """{task}

Your previous answer:
{artifact}

{findings_header}
{failures}
{history}
Fix only what the defects above point at; keep everything else unchanged. \
{fix_request}"""

HISTORY_HEADER = "\nEarlier attempts (do not repeat them):\n"


def task_prompt(case: Case) -> str:
    """The original requirement, as the first draft sees it."""
    template = CODE_TASK_TEMPLATE if case.prompt_is_code else TASK_TEMPLATE
    return template.format(prompt=case.prompt.strip("\n"))


def first_draft_messages(case: Case) -> list[Message]:
    """Messages for iteration 0."""
    return [Message("system", _format(case).system), Message("user", task_prompt(case))]


def _format(case: Case) -> ArtifactFormat:
    return artifact_format(case.judge)


def _failure_lines(failures: tuple[Failure, ...], limit: int = 8) -> str:
    lines = [f"{n}. {failure.describe()}" for n, failure in enumerate(failures[:limit], 1)]
    if len(failures) > limit:
        lines.append(f"... and {len(failures) - limit} more")
    return "\n".join(lines)


def _history_lines(earlier: list[Attempt]) -> str:
    if not earlier:
        return ""
    rows = [
        f"- attempt {attempt.iteration}: {attempt.feedback_defects} defect(s)"
        + (f"; {attempt.diff_summary}" if attempt.diff_summary else "")
        + "".join(
            f"\n    {failure.describe().splitlines()[0]}"
            for failure in attempt.feedback_failures[:3]
        )
        for attempt in earlier
    ]
    return HISTORY_HEADER + "\n".join(rows) + "\n"


def fix_messages(case: Case, history: list[Attempt]) -> list[Message]:
    """Messages for a fix round: requirement, last artifact, its failures, earlier attempts."""
    latest = history[-1]
    form = _format(case)
    content = FIX_TEMPLATE.format(
        task=task_prompt(case),
        artifact=form.fenced(latest.artifact),
        fix_request=form.fix_request(),
        findings_header=(
            "A reviewer and the checks found these problems:"
            if any(f.kind == "critic" for f in latest.feedback_failures)
            else "The checks found these defects:"
        ),
        failures=_failure_lines(latest.feedback_failures),
        history=_history_lines(history[:-1]),
    )
    return [Message("system", form.system), Message("user", content)]
