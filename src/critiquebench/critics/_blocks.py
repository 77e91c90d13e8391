"""Verdict blocks: the fenced machine-readable tail a prose-writing judge appends (SPEC §5)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal, get_args

JudgeVerdict = Literal["ready", "not-ready", "blocked"]
FindingAction = Literal["KEEP", "DOWNGRADE", "REJECT"]

JUDGE_VERDICTS: Final[tuple[JudgeVerdict, ...]] = get_args(JudgeVerdict)
FINDING_ACTIONS: Final[tuple[FindingAction, ...]] = get_args(FindingAction)
COUNT_KEYS: Final = ("blocking", "should_fix", "advisory")
_STANDARD_KEYS: Final = ("verdict", *COUNT_KEYS)

# An unterminated block runs to the end of the text: a truncated reply still votes.
_BLOCK = re.compile(
    r"^[ \t]*```[ \t]*(?:verdict|wiki-verdict)[ \t]*\n(.*?)(?:^[ \t]*```|\Z)",
    re.DOTALL | re.MULTILINE,
)
# Lookups rather than `in` tests, so the narrowed Literal type comes for free.
_VERDICT_OF: Final[dict[str, JudgeVerdict]] = {v: v for v in JUDGE_VERDICTS}
_ACTION_OF: Final[dict[str, FindingAction]] = {a: a for a in FINDING_ACTIONS}
_FINDING = re.compile(r"finding:\s*(\S+)\s+action:\s*(\S+)")


@dataclass(frozen=True)
class BlockParse:
    """Everything read from the verdict blocks of one judge reply.

    ``is_judge`` is False when the reply holds no block: it is not a judge and passes
    through. A block with ``errors`` is malformed and must not be trusted as a vote.
    """

    is_judge: bool
    agent: str | None = None
    verdict: JudgeVerdict | None = None
    blocking: int | None = None
    should_fix: int | None = None
    advisory: int | None = None
    findings: dict[str, FindingAction] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        """A judge block without errors: the only kind whose votes count."""
        return self.is_judge and not self.errors


def parse_verdict_blocks(text: str) -> BlockParse:
    """Parse every ``verdict``/``wiki-verdict`` block in ``text`` as one judge's output.

    Lines are ``key: value`` (standard form: agent, verdict, blocking, should_fix,
    advisory) or ``finding: <id> action: KEEP|DOWNGRADE|REJECT``. Each error names
    the offending key and its line number in ``text``.
    """
    blocks = list(_BLOCK.finditer(text))
    if not blocks:
        return BlockParse(is_judge=False)
    values: dict[str, tuple[str, int]] = {}
    findings: dict[str, FindingAction] = {}
    errors: list[str] = []
    saw_finding = False
    for block in blocks:
        first_line = text.count("\n", 0, block.start(1)) + 1
        for offset, raw in enumerate(block.group(1).splitlines()):
            line_no, line = first_line + offset, raw.strip()
            if not line or line.startswith("#"):
                continue
            key, sep, value = (part.strip() for part in line.partition(":"))
            if not sep:
                errors.append(f"line {line_no}: expected 'key: value', got {line!r}")
            elif key == "finding":
                saw_finding = True
                _read_finding(line, line_no, findings, errors)
            elif key not in ("agent", *_STANDARD_KEYS):
                errors.append(f"line {line_no}: unknown key {key!r}")
            elif key in values:
                errors.append(f"line {line_no}: duplicate key {key!r}")
            else:
                values[key] = (value, line_no)
    return _assemble(values, findings, errors, saw_finding)


def _read_finding(
    line: str, line_no: int, findings: dict[str, FindingAction], errors: list[str]
) -> None:
    match = _FINDING.fullmatch(line)
    if match is None:
        errors.append(
            f"line {line_no}: key 'finding' must read 'finding: <id> action: "
            f"KEEP|DOWNGRADE|REJECT', got {line!r}"
        )
        return
    finding, raw_action = match.groups()
    action = _ACTION_OF.get(raw_action)
    if action is None:
        errors.append(f"line {line_no}: unknown action {raw_action!r} for finding {finding!r}")
    elif findings.get(finding, action) != action:
        errors.append(f"line {line_no}: conflicting actions for finding {finding!r}")
    else:
        findings[finding] = action


def _assemble(
    values: dict[str, tuple[str, int]],
    findings: dict[str, FindingAction],
    errors: list[str],
    saw_finding: bool,
) -> BlockParse:
    agent = values.get("agent", ("", 0))[0] or None
    if agent is None:
        errors.append("key 'agent': missing (every block must name its agent)")
    verdict: JudgeVerdict | None = None
    counts: dict[str, int | None] = dict.fromkeys(COUNT_KEYS)
    standard = any(key in values for key in _STANDARD_KEYS)
    if standard:
        for key in _STANDARD_KEYS:
            if key not in values:
                errors.append(
                    f"key {key!r}: missing (standard form needs {', '.join(_STANDARD_KEYS)})"
                )
        raw_verdict, verdict_line = values.get("verdict", ("", 0))
        verdict = _VERDICT_OF.get(raw_verdict)
        if verdict is None and "verdict" in values:
            errors.append(
                f"line {verdict_line}: unknown verdict {raw_verdict!r} "
                f"(expected one of {', '.join(JUDGE_VERDICTS)})"
            )
        for key in COUNT_KEYS:
            if key not in values:
                continue
            raw, line_no = values[key]
            if raw.isascii() and raw.isdigit():  # isascii: int() would accept "٣"
                counts[key] = int(raw)
            else:
                errors.append(f"line {line_no}: {key} must be a non-negative integer, got {raw!r}")
        blocking = counts["blocking"]
        # Contradictions: a ready verdict cannot carry blockers; not-ready needs one.
        if verdict == "ready" and blocking is not None and blocking != 0:
            errors.append(f"line {verdict_line}: verdict 'ready' but blocking={blocking} (not 0)")
        if verdict == "not-ready" and blocking is not None and blocking < 1:
            errors.append(f"line {verdict_line}: verdict 'not-ready' but blocking={blocking} (<1)")
    elif not saw_finding:  # a malformed finding line is already reported on its own
        errors.append("key 'finding': per-finding block has no 'finding: <id> action: ...' lines")
    return BlockParse(
        is_judge=True,
        agent=agent,
        verdict=verdict,
        blocking=counts["blocking"],
        should_fix=counts["should_fix"],
        advisory=counts["advisory"],
        findings=findings,
        errors=errors,
    )
