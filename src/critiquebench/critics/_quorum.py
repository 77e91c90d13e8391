"""Adversarial quorum: tally reviewers' per-finding votes into KEEP/DOWNGRADE/KILL/UNVERIFIED."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from critiquebench.critics._blocks import BlockParse, parse_verdict_blocks

Decision = Literal["KEEP", "DOWNGRADE", "KILL", "UNVERIFIED"]

# Decisions that do not count as passed: uncertainty refutes, it does not pass.
FAILING_DECISIONS: Final[frozenset[Decision]] = frozenset({"KILL", "UNVERIFIED"})
# The separator eats its own newline so line numbers in errors count from the chunk's top.
_SEPARATOR: Final = re.compile(r"^[ \t]*---[ \t]*(?:\n|\Z)", re.MULTILINE)
_COLUMNS: Final = ("finding", "keep", "downgrade", "reject", "abstain", "decision")


@dataclass(frozen=True)
class FindingDecision:
    """The vote count and the decision for one finding."""

    finding: str
    keep: int
    downgrade: int
    reject: int
    abstain: int
    decision: Decision


def tally(
    finding_ids: Iterable[str] | None, votes: list[BlockParse], threshold: int = 2
) -> list[FindingDecision]:
    """Decide every finding from the reviewers' votes.

    A reviewer abstains on a finding it omits, and on every finding when its block is
    missing or malformed: an abstention never counts as KEEP. In order, REJECT >=
    threshold -> KILL; REJECT + DOWNGRADE >= threshold -> DOWNGRADE; KEEP >= threshold
    -> KEEP; otherwise UNVERIFIED. ``finding_ids=None`` tallies every id any block names.
    """
    if threshold < 1:
        raise ValueError(f"threshold must be at least 1, got {threshold}")
    if finding_ids is None:
        # Ids from malformed blocks too: they can only add UNVERIFIED rows, never hide one.
        finding_ids = [finding for vote in votes for finding in vote.findings]
    decisions = []
    for finding in dict.fromkeys(finding_ids):  # dedupe, keep first-seen order
        actions = [vote.findings.get(finding) if vote.valid else None for vote in votes]
        keep, downgrade, reject = (actions.count(a) for a in ("KEEP", "DOWNGRADE", "REJECT"))
        decision: Decision
        if reject >= threshold:
            decision = "KILL"
        elif reject + downgrade >= threshold:
            decision = "DOWNGRADE"
        elif keep >= threshold:
            decision = "KEEP"
        else:
            decision = "UNVERIFIED"
        abstain = actions.count(None)
        decisions.append(FindingDecision(finding, keep, downgrade, reject, abstain, decision))
    return decisions


def quorum_exit_code(decisions: Iterable[FindingDecision]) -> int:
    """1 if any finding is KILL or UNVERIFIED, else 0."""
    return int(any(d.decision in FAILING_DECISIONS for d in decisions))


def run_quorum_cli(
    paths: list[Path] | None, stdin_text: str | None, threshold: int
) -> tuple[str, int]:
    """The quorum command without I/O of its own: returns (text to print, exit code).

    Each vote file is one reviewer; ``stdin_text`` holds reviewers separated by lines of
    ``---``. Exit 2 for unusable input (a missing file, no votes, a bad threshold), else
    ``quorum_exit_code``; when no valid block names any finding, exit 1 (nothing verified).
    """
    if threshold < 1:
        return f"error: threshold must be at least 1, got {threshold}", 2
    sources: list[tuple[str, str]] = []
    missing = [path for path in paths or [] if not path.exists()]
    if missing:
        return "\n".join(f"error: vote file not found: {path}" for path in missing), 2
    for path in paths or []:
        try:
            sources.append((str(path), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            return f"error: cannot read vote file {path}: {exc}", 2
    chunks = [chunk for chunk in _SEPARATOR.split(stdin_text or "") if chunk.strip()]
    sources += [(f"stdin #{n}", chunk) for n, chunk in enumerate(chunks, 1)]
    if not sources:
        return "error: no votes given (pass vote files or blocks on stdin)", 2
    votes = [parse_verdict_blocks(text) for _, text in sources]
    decisions = tally(None, votes, threshold)
    lines = [_format_table(decisions)] if decisions else ["no findings in any vote"]
    for (name, _), vote in zip(sources, votes, strict=True):
        if not vote.is_judge:
            lines.append(f"{name}: abstains: no verdict block")
        elif vote.errors:
            lines.append(f"{name}: abstains: {'; '.join(vote.errors)}")
    code = quorum_exit_code(decisions) if decisions else 1
    counts = ", ".join(
        f"{kind}={sum(d.decision == kind for d in decisions)}"
        for kind in ("KEEP", "DOWNGRADE", "KILL", "UNVERIFIED")
    )
    malformed = sum(not vote.valid for vote in votes)  # they abstain on every finding
    lines.append(
        f"{len(decisions)} findings, {len(votes)} reviewers ({malformed} without a valid block), "
        f"threshold {threshold}: {counts} -> exit {code}"
    )
    return "\n".join(lines), code


def _format_table(decisions: Sequence[FindingDecision]) -> str:
    rows = [_COLUMNS] + [
        (d.finding, str(d.keep), str(d.downgrade), str(d.reject), str(d.abstain), d.decision)
        for d in decisions
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )
