"""How the loop asks for a JSON document, reads it from a reply, and how the sim errs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from critiquebench.judges._artifact import (
    MAX_REPLY_CHARS,
    ArtifactFormat,
    fenced_blocks,
    strip_invisible,
)
from critiquebench.judges.json._checks import EqualsSpec, SpecError, parse_spec
from critiquebench.judges.json._pointer import parse_pointer

if TYPE_CHECKING:
    from critiquebench.judges._case import Case

JSON_SYSTEM = (
    "You write JSON documents. Reply with exactly one ```json code block that holds one "
    "complete, valid JSON document (double-quoted keys and strings, no comments, no "
    "trailing commas) with the fields and values the task asks for, and nothing else."
)


def _bare_json(reply: str) -> str:
    """The first JSON value in the reply (prose or a stray fence may follow it); else
    the reply from its first ``{`` or ``[`` on; else the reply."""
    text = strip_invisible(reply[:MAX_REPLY_CHARS].strip())
    starts = [index for index in (text.find("{"), text.find("[")) if index >= 0]
    if not starts:
        return text
    start = min(starts)
    try:
        _, end = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError, MemoryError):  # the judge reports why it is not JSON
        return text[start:]
    return text[start:end]


def _wrong(value: Any, attempt: int) -> Any:
    """A value of the same JSON type as ``value`` that differs from it (and from the
    wrong values of other attempts, where the type allows)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + attempt + 1
    if isinstance(value, str):
        return f"{value}-{attempt + 1}"
    if isinstance(value, list):
        return [*value, None]
    if isinstance(value, dict):
        return {**value, f"unexpected{attempt + 1}": None}
    return attempt + 1  # null


def _set(document: Any, tokens: tuple[str, ...], value: Any) -> Any:
    """``document`` with the existing location ``tokens`` set to ``value``."""
    if not tokens:
        return value
    parent = document
    for token in tokens[:-1]:
        parent = parent[int(token)] if isinstance(parent, list) else parent[token]
    last = tokens[-1]
    if isinstance(parent, list):
        parent[int(last)] = value
    else:
        parent[last] = value
    return document


@dataclass(frozen=True)
class JsonFormat(ArtifactFormat):
    """One JSON document in a ```json block; bare JSON replies are read as well."""

    def extract(self, case: Case, reply: str) -> str:
        """The first ```json (or unlabelled) block that holds an object or array, else
        the first such block that is not blank, else the first JSON value in the reply.

        Small models open blocks in other languages, forget the opening fence (so a
        stray closing one looks like an empty block), and add prose after the
        document; none of that should hide a document that is there.
        """
        accepted = {"", self.fence, *self.aliases}
        blocks: list[str] = [
            strip_invisible(body.strip()) for language, body in fenced_blocks(reply)
            if language.lower() in accepted and body.strip()
        ]  # fmt: skip
        documents = [body for body in blocks if body.startswith(("{", "["))]
        chosen = (documents or blocks or [_bare_json(reply)])[0]
        return chosen.strip("\n") + "\n"

    def simulated_reply(self, case: Case, correct: bool, attempt: int) -> str:
        """The reference when ``correct``; else the reference with every value an
        ``equals`` check names changed (still valid JSON, and different per attempt,
        so the loop's repeat detection sees a new answer)."""
        reference = case.reference_solution.strip("\n")
        if correct:
            return self.fenced(reference)
        wrong = _wrong_document(case, attempt)
        if wrong is None:
            # No value to change: a cut-off document, which is never valid JSON.
            wrong = reference[: max(1, len(reference) // 2)] + f" /* attempt {attempt} */"
        return self.fenced(wrong)


def _wrong_document(case: Case, attempt: int) -> str | None:
    """The reference with the values of its ``equals`` checks changed, or None when it
    does not parse or has no such check."""
    try:
        document = json.loads(case.reference_solution)
    except ValueError:
        return None
    changed = False
    for check in case.checks:
        try:
            spec = parse_spec(check.spec)
        except SpecError:
            continue
        if isinstance(spec, EqualsSpec):
            try:
                document = _set(document, parse_pointer(spec.pointer), _wrong(spec.value, attempt))
            except (KeyError, IndexError, TypeError, ValueError):
                continue
            changed = True
    return json.dumps(document, indent=2) if changed else None


JSON_FORMAT = JsonFormat(fence="json", noun="JSON document", system=JSON_SYSTEM)
"""The json judge's artifact format."""
