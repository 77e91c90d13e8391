"""A unit's transcript: what every call was asked and answered, and what each attempt
was shown, as rows of the ``transcripts`` side table."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from critiquebench.loop import Attempt, CallRecord
from critiquebench.pipeline._schema import TRANSCRIPT_CHAR_LIMIT

Row = dict[str, Any]


@dataclass(frozen=True)
class Cut:
    """A text as stored: at most the limit, and how long it was."""

    text: str
    chars: int
    truncated: bool = False


def cut(text: str, limit: int = TRANSCRIPT_CHAR_LIMIT) -> Cut:
    """``text`` cut to ``limit`` characters, keeping its head and its tail.

    The tail is kept because that is where a reply's answer and a prompt's request
    sit; the marker says how much was left out, so nothing is silently lost.
    """
    if len(text) <= limit:
        return Cut(text, len(text))
    marker = f"\n[... {len(text) - limit} characters cut ...]\n"
    keep = max(limit - len(marker), 0)
    head = keep * 2 // 3
    tail = keep - head
    return Cut(text[:head] + marker + (text[-tail:] if tail else ""), len(text), truncated=True)


def _call_row(identity: Row, entry: int, index: int, call: CallRecord) -> Row:
    messages = [(message.role, cut(message.content)) for message in call.messages]
    reply = None if call.reply is None else cut(call.reply)
    cuts = [text for _, text in messages] + ([reply] if reply is not None else [])
    return {
        **identity,
        "entry": entry,
        "kind": "call",
        "call_index": index,
        "iteration": call.iteration,
        "role": call.role,
        "model": call.model,
        "cached": call.cached,
        "messages": json.dumps([{"role": role, "content": text.text} for role, text in messages]),
        "reply": None if reply is None else reply.text,
        "parsed": call.parsed,
        "error": call.error or call.verifier_error,
        "chars": sum(text.chars for text in cuts),
        "truncated": any(text.truncated for text in cuts),
    }


def _feedback_row(identity: Row, entry: int, attempt: Attempt) -> Row:
    failures = attempt.feedback_failures
    texts = [cut(failure.describe()) for failure in failures]
    return {
        **identity,
        "entry": entry,
        "kind": "feedback",
        "call_index": None,
        "iteration": attempt.iteration,
        "role": "feedback",
        "model": None,
        "cached": False,
        "messages": None,
        "reply": None,
        "parsed": json.dumps(
            [
                {"kind": failure.kind, "origin": failure.origin, "text": text.text}
                for failure, text in zip(failures, texts, strict=True)
            ]
        ),
        "error": None,
        "chars": sum(text.chars for text in texts),
        "truncated": any(text.truncated for text in texts),
    }


def transcript_rows(
    identity: Row, calls: tuple[CallRecord, ...], attempts: tuple[Attempt, ...]
) -> list[Row]:
    """The unit's transcript rows: each attempt's calls, then the feedback it was shown.

    Calls are kept in the order made (``call_index`` as in ``calls``); an attempt's
    feedback entry follows the last call of its iteration, so reading the rows by
    ``entry`` tells the unit's story in order.
    """
    rows: list[Row] = []
    feedback = {attempt.iteration: attempt for attempt in attempts}
    for index, call in enumerate(calls):
        if call.role in ("actor", "fixer"):
            # a draft or fix call starts an attempt: the earlier ones' feedback came first
            for iteration in sorted(i for i in feedback if i < call.iteration):
                rows.append(_feedback_row(identity, len(rows), feedback.pop(iteration)))
        rows.append(_call_row(identity, len(rows), index, call))
    for iteration in sorted(feedback):
        rows.append(_feedback_row(identity, len(rows), feedback[iteration]))
    return rows
