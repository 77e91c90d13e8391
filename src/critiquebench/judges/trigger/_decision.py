"""A routing decision as an artifact: should a skill be used for a user's query?

The model answers TRIGGER or NO_TRIGGER (optionally with one line of reason); the
artifact the loop keeps and the judge reads is the normalised decision,
``"trigger"``, ``"no_trigger"``, or ``""`` when the reply holds none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from critiquebench.judges._artifact import ArtifactFormat

if TYPE_CHECKING:
    from critiquebench.judges._case import Case

Decision = Literal["trigger", "no_trigger", ""]
"""A normalised decision; ``""`` = the reply holds no (unambiguous) decision."""

DECISIONS: tuple[Decision, ...] = ("trigger", "no_trigger")
"""The two decisions a reply can make."""

DECISION_WORDS: dict[str, str] = {"trigger": "TRIGGER", "no_trigger": "NO_TRIGGER"}
"""How a decision is written in prompts and replies."""

MAX_REPLY_CHARS = 4000
"""Only the start of a reply is read: a decision is one word, and a runaway or hostile
reply must cost no more than a short one."""

# "n't" inside a word (\B: a letter precedes it), not "\w+n't": that form retries the
# whole word from each of its letters, quadratic in a long word.
_NOT = r"(?:\b(?:no|not|never|cannot)|\Bn['\u2019]t)"
# "NO_TRIGGER", "no trigger", "should not trigger", "must not be triggered", "don't trigger".
_NEGATIVE = re.compile(_NOT + r"[\s_-]*(?:be\s+)?trigger\w*", re.IGNORECASE)
_POSITIVE = re.compile(r"\btrigger\w*", re.IGNORECASE)
# Small models answer in words rather than the decision word: "The assistant should not
# use this skill", "Use this skill for this query", "This skill is not applicable".
_NEGATIVE_WORDS = re.compile(
    _NOT + r"\s+(?:be\s+)?(?:use|used|using|applicable|relevant|needed)\b", re.IGNORECASE
)
_POSITIVE_WORDS = re.compile(
    r"\b(?:use|using)\s+(?:this|the|that|it)\b(?!\s+(?:other|another))"
    r"|\bbe\s+used\b|\b(?:is|are)\s+(?:applicable|relevant)\b",
    re.IGNORECASE,
)
# "yes"/"no" count only as a line's first word, after an optional label ("Answer: no").
_YES_NO = re.compile(r"^[\W_]*(?:[a-z][a-z ]{0,20}:[\W_]*)?(yes|no)\b", re.IGNORECASE)
_FENCE_MARK = re.compile(r"```[^\n]*")
# A reason often follows on the same line: "NO_TRIGGER. The skill is not used to ...".
_SENTENCE_BREAK = re.compile(r"\n|(?<=[.!?;])\s+")


def _stated(line: str, negative: re.Pattern[str], positive: re.Pattern[str]) -> set[Decision]:
    """The decisions a line states in one vocabulary (a negation is not also read as
    the positive it contains)."""
    found: set[Decision] = set()
    if negative.search(line):
        found.add("no_trigger")
    if positive.search(negative.sub(" ", line)):
        found.add("trigger")
    return found


def _line_decisions(line: str) -> set[Decision]:
    """The decisions one line or sentence states (both = the line is ambiguous): its decision
    words, else its wording; and a leading "yes" or "no"."""
    found = _stated(line, _NEGATIVE, _POSITIVE) or _stated(line, _NEGATIVE_WORDS, _POSITIVE_WORDS)
    weak = _YES_NO.match(line)
    if weak:
        found.add("trigger" if weak.group(1).lower() == "yes" else "no_trigger")
    return found


def parse_decision(reply: str) -> Decision:
    """The decision a reply makes: read from the first line (or sentence) that states one.

    Accepts TRIGGER / NO_TRIGGER in any case and spelling (``NO-TRIGGER``,
    ``no trigger``, "should not trigger", inside a fenced block or bold); on a line
    without them, plain wording ("use this skill", "should not be used", "is not
    applicable") and "yes" / "no" as the line's first word. A decision line that
    states both (``TRIGGER or NO_TRIGGER``) is ambiguous, and a reply without one
    holds none: both give ``""``.
    """
    text = _FENCE_MARK.sub(" ", reply[:MAX_REPLY_CHARS])
    for sentence in _SENTENCE_BREAK.split(text):
        found = _line_decisions(sentence)
        if len(found) == 1:
            return found.pop()
        if found:
            return ""
    return ""


def expected_decision(case: Case) -> Decision:
    """The right decision for a trigger case: from its label (``judge_data.expect``),
    else its reference solution; ``""`` when neither says."""
    expect = case.judge_data.get("expect")
    if expect == "trigger":
        return "trigger"
    if expect in ("near_miss", "clear_miss"):
        return "no_trigger"
    return parse_decision(case.reference_solution)


@dataclass(frozen=True)
class TriggerFormat(ArtifactFormat):
    """A one-word decision, not a fenced block: TRIGGER or NO_TRIGGER."""

    def extract(self, case: Case, reply: str) -> str:
        """The normalised decision: ``trigger``, ``no_trigger`` or ``""``."""
        return parse_decision(reply)

    def fenced(self, artifact: str) -> str:
        """The decision as the model would write it (prompts show it plainly)."""
        decision = parse_decision(artifact)
        return DECISION_WORDS.get(decision, "(no decision: neither TRIGGER nor NO_TRIGGER)")

    def fix_request(self) -> str:
        """Ask for a decision again, not for a code block."""
        return "Reply with the corrected decision, TRIGGER or NO_TRIGGER, then one line saying why."

    def simulated_reply(self, case: Case, correct: bool, attempt: int) -> str:
        """The right decision when ``correct``, else the other one."""
        right = expected_decision(case) or "trigger"
        wrong = "no_trigger" if right == "trigger" else "trigger"
        decision = right if correct else wrong
        return f"{DECISION_WORDS[decision]}\nReason: simulated answer {attempt}."


TRIGGER_FORMAT = TriggerFormat(
    fence="trigger",
    noun="decision",
    system=(
        "You route requests to skills. Given a skill's description and a user's query, "
        "decide whether the skill should be used for that query. Use it only when the "
        "query asks for what the description says the skill does, not for a request "
        "that merely mentions the same kind of file or topic. Reply with one word, "
        "TRIGGER or NO_TRIGGER, optionally followed by one line saying why."
    ),
    review=(
        "You review a candidate routing decision: whether a skill, known by its "
        "description, should be used for a user's query. You did not make it. TRIGGER "
        "means the skill is used, NO_TRIGGER that it is not. Look for: a skill used for a "
        "query that only resembles its description (same file type or topic, different "
        "job); a skill not used for a query its description covers. Name the part of the "
        "query or description that decides it."
    ),
)
"""The trigger judge's format."""
