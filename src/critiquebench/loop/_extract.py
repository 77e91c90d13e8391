"""Pull the artifact out of a model's free-form reply, and compare artifacts."""

from __future__ import annotations

import difflib

from critiquebench.judges import artifact_format
from critiquebench.suites import Case


def extract_code(case: Case, reply: str) -> str:
    """The artifact in a model's reply, as the case's judge reads it (see
    :class:`~critiquebench.judges.ArtifactFormat`): for Python, the block that
    defines the entry point, else the first block, else the reply."""
    return artifact_format(case.judge).extract(case, reply)


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
