"""Pull the artifact out of a model's free-form reply, and compare artifacts."""

from __future__ import annotations

import difflib
from collections import Counter

from critiquebench.judges import artifact_format
from critiquebench.suites import Case

MAX_DIFF_LINES = 1000
"""Longest artifact (in lines) that is diffed line by line. ``difflib`` can take time
far worse than quadratic on lines that repeat (8,000 such lines: 27 s), and the
artifact is the model's; past this, changes are counted as lines added and removed
regardless of order, in linear time."""


def extract_code(case: Case, reply: str) -> str:
    """The artifact in a model's reply, as the case's judge reads it (see
    :class:`~critiquebench.judges.ArtifactFormat`): for Python, the block that
    defines the entry point, else the first block, else the reply."""
    return artifact_format(case.judge).extract(case, reply)


def normalise(artifact: str) -> str:
    """The artifact with whitespace differences removed, for repeat detection."""
    return "\n".join(" ".join(line.split()) for line in artifact.splitlines() if line.strip())


def line_changes(previous: str, current: str) -> tuple[int, int]:
    """(added, removed) lines from ``previous`` to ``current``: a line diff's counts, or
    past :data:`MAX_DIFF_LINES` the lines each has more of than the other."""
    before, after = previous.splitlines(), current.splitlines()
    if max(len(before), len(after)) > MAX_DIFF_LINES:
        old, new = Counter(before), Counter(after)  # str hashes are randomised: linear
        return sum((new - old).values()), sum((old - new).values())
    added = removed = 0
    for line in difflib.unified_diff(before, after, lineterm=""):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def diff_summary(previous: str | None, current: str) -> str:
    """A short description of what changed between two artifacts."""
    if previous is None:
        return ""
    added, removed = line_changes(previous, current)
    if not added and not removed:
        return "no change"
    return f"+{added} -{removed} lines"
