"""Replay saved outputs of any system: answers read from a JSONL file.

Each line is ``{"case_id": "...", "answers": ["first draft", "after fix 1", ...]}``,
optionally with ``"rep": N`` (from 0): such a line answers only that repetition of
the case, and a line without ``rep`` answers every repetition that has no line of
its own. Attempt ``n`` gets ``answers[n]``; when a case runs out of answers the last
one is repeated (which the loop then sees as no progress).

A line may also say what each answer cost where it was made: ``"tokens_in"``,
``"tokens_out"`` (whole numbers) and ``"latency_s"`` (seconds), each a list with one
value per answer or a single value for every answer. The run then reports those
tokens, costs and latencies for the replayed system, as if it had made the calls;
without them a replayed answer costs nothing and takes no time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from critiquebench.models._provider import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ModelError,
)

_USAGE_KEYS = ("tokens_in", "tokens_out", "latency_s")
_KEYS = frozenset({"case_id", "rep", "answers", *_USAGE_KEYS})
_SHAPE = '{"case_id": "<id>", "rep": <optional int>, "answers": ["...", ...]}'


@dataclass(frozen=True)
class AnswerCost:
    """What one replayed answer cost where it was made (zero when the file does not say)."""

    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0


class ReplayFormatError(ValueError):
    """A malformed replay file; the message names file, line and reason."""


@dataclass(frozen=True)
class ReplayFile:
    """The answers of a replay file, by case id and repetition (None: every repetition)."""

    path: Path
    answers: dict[tuple[str, int | None], list[str]]
    costs: dict[tuple[str, int | None], list[AnswerCost]] = field(default_factory=dict)
    """Per (case, rep) line, what each answer cost (lines without costs are absent)."""

    def cost_for(self, case_id: str, rep: int, attempt: int) -> AnswerCost:
        """The cost of the answer ``answers_for(case_id, rep)[attempt]`` (clamped as it is)."""
        key = (case_id, rep) if (case_id, rep) in self.answers else (case_id, None)
        costs = self.costs.get(key)
        if not costs:
            return AnswerCost()
        return costs[min(attempt, len(costs) - 1)]

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


def _usage_values(where: str, record: dict[str, Any], key: str, count: int) -> list[float] | None:
    """The per-answer values of ``key`` (one per answer), or None when the line has none."""
    value = record.get(key)
    if value is None:
        return None
    values = value if isinstance(value, list) else [value] * count
    if len(values) != count:
        raise ReplayFormatError(
            f"{where}: {key} has {len(values)} value(s) for {count} answer(s); give one per "
            "answer or a single number for all"
        )
    for item in values:
        if isinstance(item, bool) or not isinstance(item, int | float) or item < 0:
            raise ReplayFormatError(f"{where}: {key} values must be numbers >= 0, got {item!r}")
        if key != "latency_s" and not float(item).is_integer():
            raise ReplayFormatError(f"{where}: {key} values must be whole numbers, got {item!r}")
    return [float(item) for item in values]


def _costs(where: str, record: dict[str, Any], count: int) -> list[AnswerCost] | None:
    found = {key: _usage_values(where, record, key, count) for key in _USAGE_KEYS}
    if all(values is None for values in found.values()):
        return None
    zeros = [0.0] * count
    tokens_in = found["tokens_in"] or zeros
    tokens_out = found["tokens_out"] or zeros
    latency = found["latency_s"] or zeros
    return [AnswerCost(int(tokens_in[i]), int(tokens_out[i]), latency[i]) for i in range(count)]


def _parse_line(
    path: Path, number: int, line: str
) -> tuple[str, int | None, list[str], list[AnswerCost] | None]:
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
            f"{where}: unknown field(s) {', '.join(unknown)}; allowed: case_id, rep, answers, "
            "tokens_in, tokens_out, latency_s"
        )
    case_id, texts, rep = record.get("case_id"), record.get("answers"), record.get("rep")
    if not isinstance(case_id, str) or not isinstance(texts, list) or not texts:
        raise ReplayFormatError(f"{where}: expected {_SHAPE}")
    if not all(isinstance(text, str) for text in texts):
        raise ReplayFormatError(f"{where}: every answer must be a string")
    if rep is not None and (isinstance(rep, bool) or not isinstance(rep, int) or rep < 0):
        raise ReplayFormatError(f"{where}: rep must be a whole number >= 0, got {rep!r}")
    return case_id, rep, texts, _costs(where, record, len(texts))


def load_replay_file(path: Path) -> ReplayFile:
    """Read and validate a replay file; a (case, rep) given twice is an error."""
    answers: dict[tuple[str, int | None], list[str]] = {}
    costs: dict[tuple[str, int | None], list[AnswerCost]] = {}
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
        case_id, rep, texts, cost = _parse_line(path, number, line)
        key = (case_id, rep)
        if key in lines:
            which = "every rep" if rep is None else f"rep {rep}"
            raise ReplayFormatError(
                f"{path}:{number}: case {case_id!r} ({which}) was already given "
                f"at line {lines[key]}"
            )
        answers[key], lines[key] = texts, number
        if cost is not None:
            costs[key] = cost
    return ReplayFile(path, answers, costs)


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
        # The costs are the replayed system's answers'; a critic asking here is not it.
        cost = (
            self._file.cost_for(context.case_id, context.rep, context.attempt)
            if context.role in ("actor", "fixer")
            else AnswerCost()
        )
        return Completion(
            text=text,
            tokens_in=cost.tokens_in,
            tokens_out=cost.tokens_out,
            latency_s=cost.latency_s,
            model=self.model_name,
        )


@dataclass(frozen=True)
class ReplayLine:
    """One line of a replay file: a (case, rep)'s answers and what each cost."""

    case_id: str
    answers: tuple[str, ...]
    rep: int | None = None
    costs: tuple[AnswerCost, ...] | None = None

    def as_json(self) -> dict[str, Any]:
        """The line as the replay format writes it."""
        record: dict[str, Any] = {"case_id": self.case_id}
        if self.rep is not None:
            record["rep"] = self.rep
        record["answers"] = list(self.answers)
        if self.costs is not None:
            record["tokens_in"] = [cost.tokens_in for cost in self.costs]
            record["tokens_out"] = [cost.tokens_out for cost in self.costs]
            record["latency_s"] = [cost.latency_s for cost in self.costs]
        return record


def write_replay_file(path: Path, lines: Sequence[ReplayLine]) -> ReplayFile:
    """Write ``lines`` as a replay file and read it back (the format's own check)."""
    text = "".join(json.dumps(line.as_json(), ensure_ascii=False) + "\n" for line in lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return load_replay_file(path)
