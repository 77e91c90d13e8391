"""Replay saved outputs of any system: answers read from a JSONL file.

Each line is ``{"case_id": "...", "answers": ["first draft", "after fix 1", ...]}``,
optionally with ``"rep": N`` (from 0): such a line answers only that repetition of
the case, and a line without ``rep`` answers every repetition that has no line of
its own. Attempt ``n`` gets ``answers[n]``; when a case runs out of answers the last
one is repeated (which the loop then sees as no progress).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from critiquebench.models._provider import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ModelError,
)

_KEYS = frozenset({"case_id", "rep", "answers"})
_SHAPE = '{"case_id": "<id>", "rep": <optional int>, "answers": ["...", ...]}'


class ReplayFormatError(ValueError):
    """A malformed replay file; the message names file, line and reason."""


@dataclass(frozen=True)
class ReplayFile:
    """The answers of a replay file, by case id and repetition (None: every repetition)."""

    path: Path
    answers: dict[tuple[str, int | None], list[str]]

    def answers_for(self, case_id: str, rep: int) -> list[str] | None:
        """The answers of one (case, rep): its own line, else the case's rep-less line."""
        return self.answers.get((case_id, rep)) or self.answers.get((case_id, None))

    def missing(self, case_ids: Iterable[str], reps: int) -> list[str]:
        """Cases (or ``case (rep N)``) among ``case_ids`` x ``range(reps)`` with no answers."""
        found: list[str] = []
        for case_id in case_ids:
            lacking = [rep for rep in range(reps) if self.answers_for(case_id, rep) is None]
            if len(lacking) == reps:
                found.append(case_id)
            else:
                found += [f"{case_id} (rep {rep})" for rep in lacking]
        return found


def _parse_line(path: Path, number: int, line: str) -> tuple[str, int | None, list[str]]:
    where = f"{path}:{number}"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ReplayFormatError(f"{where}: not valid JSON ({exc.msg})") from exc
    if not isinstance(record, dict):
        raise ReplayFormatError(f"{where}: expected {_SHAPE}")
    unknown = sorted(set(record) - _KEYS)
    if unknown:
        raise ReplayFormatError(
            f"{where}: unknown field(s) {', '.join(unknown)}; allowed: case_id, rep, answers"
        )
    case_id, texts, rep = record.get("case_id"), record.get("answers"), record.get("rep")
    if not isinstance(case_id, str) or not isinstance(texts, list) or not texts:
        raise ReplayFormatError(f"{where}: expected {_SHAPE}")
    if not all(isinstance(text, str) for text in texts):
        raise ReplayFormatError(f"{where}: every answer must be a string")
    if rep is not None and (isinstance(rep, bool) or not isinstance(rep, int) or rep < 0):
        raise ReplayFormatError(f"{where}: rep must be a whole number >= 0, got {rep!r}")
    return case_id, rep, texts


def load_replay_file(path: Path) -> ReplayFile:
    """Read and validate a replay file; a (case, rep) given twice is an error."""
    answers: dict[tuple[str, int | None], list[str]] = {}
    lines: dict[tuple[str, int | None], int] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        message = f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8"
        raise ReplayFormatError(message) from None
    # Split on newlines only, as reading line by line did: a raw U+2028 may sit in a string.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        case_id, rep, texts = _parse_line(path, number, line)
        key = (case_id, rep)
        if key in lines:
            which = "every rep" if rep is None else f"rep {rep}"
            raise ReplayFormatError(
                f"{path}:{number}: case {case_id!r} ({which}) was already given "
                f"at line {lines[key]}"
            )
        answers[key], lines[key] = texts, number
    return ReplayFile(path, answers)


class ReplayProvider:
    """Answers by case id, repetition and attempt number from a replay file."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._file = load_replay_file(path)

    @property
    def model_name(self) -> str:
        return f"replay:{self._path.name}"

    def complete(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, Any] | None = None,
        context: CallContext | None = None,
    ) -> Completion:
        if context is None or not context.case_id:
            raise ModelError("the replay provider needs the case id of each call")
        texts = self._file.answers_for(context.case_id, context.rep)
        if texts is None:
            raise ModelError(
                f"{self._path}: no answers for case {context.case_id!r} (rep {context.rep})"
            )
        text = texts[min(context.attempt, len(texts) - 1)]
        return Completion(
            text=text, tokens_in=0, tokens_out=0, latency_s=0.0, model=self.model_name
        )
