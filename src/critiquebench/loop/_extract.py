"""Pull the code artifact out of a model's free-form reply."""

from __future__ import annotations

import difflib
import re

from critiquebench.suites import Case

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


def extract_code(case: Case, reply: str) -> str:
    """The code block that defines the entry point, else the first block, else the reply.

    For completion-style prompts (HumanEval), a reply that only holds the body is
    appended to the prompt, as the dataset intends.
    """
    blocks = [body for language, body in _FENCE.findall(reply) if language in ("", "python", "py")]
    definition = f"def {case.entry_point}"
    chosen = next((block for block in blocks if definition in block), None)
    if chosen is None:
        chosen = blocks[0] if blocks else reply
    code = chosen.strip("\n") + "\n"
    if case.prompt_is_code and definition not in code:
        code = case.prompt + code
    return code


def normalise(artifact: str) -> str:
    """The artifact with whitespace differences removed, for repeat detection."""
    return "\n".join(" ".join(line.split()) for line in artifact.splitlines() if line.strip())


def diff_summary(previous: str | None, current: str) -> str:
    """A short description of what changed between two artifacts."""
    if previous is None:
        return ""
    added = removed = 0
    for line in difflib.unified_diff(previous.splitlines(), current.splitlines(), lineterm=""):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    if not added and not removed:
        return "no change"
    return f"+{added} -{removed} lines"
