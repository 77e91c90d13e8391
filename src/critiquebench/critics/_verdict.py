"""The critic output contract: a bounded schema, a tolerant parser and a failure policy."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

Verdict = Literal["pass", "warn", "fail"]
ParseMethod = Literal["json", "fenced", "balanced", "bare_field", "no_defects", "unparseable"]
VerifierPolicy = Literal["fail_open", "fail_closed"]

VERDICTS: Final[tuple[Verdict, ...]] = get_args(Verdict)
NO_DEFECTS: Final = "NO_DEFECTS"
MAX_ISSUES: Final = 5
MAX_ISSUE_CHARS: Final = 160
MAX_SUMMARY_CHARS: Final = 200

# Every bound is explicit so a grammar-constrained decoder (llama.cpp) or a structured
# output API (Gemini) cannot produce an unbounded reply.
CRITIC_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": list(VERDICTS)},
        "issues": {
            "type": "array",
            "items": {"type": "string", "maxLength": MAX_ISSUE_CHARS},
            "maxItems": MAX_ISSUES,
        },
        "summary": {"type": "string", "maxLength": MAX_SUMMARY_CHARS},
    },
    "required": ["verdict", "issues", "summary"],
    "additionalProperties": False,
}

# Fences are paired in order whatever their language, so the closing fence of a python
# block is never mistaken for the opening of a JSON one.
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_BARE = re.compile(r"""["']?\bverdict\b["']?\s*[:=]\s*["']?([\w-]+)""", re.IGNORECASE)


@dataclass(frozen=True)
class CriticVerdict:
    """What a critic concluded about one candidate."""

    verdict: Verdict
    issues: tuple[str, ...]
    summary: str


@dataclass(frozen=True)
class ParseOutcome:
    """A parsed critic reply: the verdict (None when unusable), how it was found, and why not."""

    verdict: CriticVerdict | None
    method: ParseMethod
    error: str | None = None


def parse_critic_output(text: str) -> ParseOutcome:
    """Read a critic reply, trying the strict form first and looser forms after.

    Order: the literal ``NO_DEFECTS``; the whole text as JSON; a fenced block; the first
    balanced ``{...}`` object; a bare ``verdict: ...`` field. The first object that holds
    a ``verdict`` key decides: if it is invalid the reply is unparseable, rather than
    letting a later, looser match override what the critic plainly wrote.
    """
    stripped = text.strip()
    if stripped == NO_DEFECTS:
        return ParseOutcome(CriticVerdict("pass", (), "no defects"), "no_defects")
    stages: tuple[tuple[ParseMethod, Iterator[str]], ...] = (
        ("json", iter((stripped,))),
        (
            "fenced",
            (m.group(2) for m in _FENCE.finditer(text) if m.group(1).lower() in ("", "json")),
        ),
        ("balanced", _balanced_objects(text)),
    )
    for method, candidates in stages:
        for candidate in candidates:
            obj = _load_object(candidate)
            if obj is not None and "verdict" in obj:
                return _validate(obj, method)
    bare = _BARE.search(text)
    if bare is not None:
        return _validate({"verdict": bare.group(1)}, "bare_field")
    return ParseOutcome(None, "unparseable", "no verdict found in critic output")


def apply_policy(outcome: ParseOutcome, policy: VerifierPolicy) -> CriticVerdict:
    """The verdict to act on; an unusable reply becomes pass or fail by policy, never silently.

    ``fail_open`` treats a verifier error as pass (keep the original answer);
    ``fail_closed`` treats it as fail. Either way the summary starts ``verifier_error:``.
    """
    if outcome.verdict is not None:
        return outcome.verdict
    summary = f"verifier_error: {outcome.error or 'unparseable critic output'}"
    verdict: Verdict = "pass" if policy == "fail_open" else "fail"
    return CriticVerdict(verdict, (), summary[:MAX_SUMMARY_CHARS])


def _load_object(candidate: str) -> dict[str, Any] | None:
    try:
        # strict=False: small models put raw newlines and tabs inside JSON strings.
        value = json.loads(candidate, strict=False)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _balanced_objects(text: str) -> Iterator[str]:
    """Every balanced ``{...}`` substring, by start position; braces inside strings ignored."""
    start = text.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for index in range(start, len(text)):
            char = text[index]
            if in_string:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    yield text[start : index + 1]
                    break
        # Restart just after this brace, so an object nested in a non-matching one is found.
        start = text.find("{", start + 1)


def _validate(obj: dict[str, Any], method: ParseMethod) -> ParseOutcome:
    raw = obj.get("verdict")
    verdict = raw.strip().lower() if isinstance(raw, str) else raw
    if verdict not in VERDICTS:
        return ParseOutcome(None, "unparseable", f"unknown verdict {raw!r} (via {method})")
    issues_raw = obj.get("issues") or []
    if not isinstance(issues_raw, list):
        issues_raw = [issues_raw]  # a lone string is one issue, not a list of characters
    issues = tuple(str(issue)[:MAX_ISSUE_CHARS] for issue in issues_raw[:MAX_ISSUES])
    summary = obj.get("summary")
    summary_text = "" if summary is None else str(summary)[:MAX_SUMMARY_CHARS]
    return ParseOutcome(CriticVerdict(verdict, issues, summary_text), method)
