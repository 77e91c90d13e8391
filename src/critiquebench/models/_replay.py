"""Replay saved outputs of any system: answers read from a JSONL file.

Each line is ``{"case_id": "...", "answers": ["first draft", "after fix 1", ...]}``.
Attempt ``n`` of a case gets ``answers[n]``; when a case runs out of answers the
last one is repeated (which the loop then sees as no progress).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from critiquebench.models._provider import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ModelError,
)


class ReplayFormatError(ValueError):
    """A malformed replay file; the message names file, line and reason."""


def load_replay_file(path: Path) -> dict[str, list[str]]:
    """Read and validate a replay file into ``{case_id: answers}``."""
    answers: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ReplayFormatError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            case_id = record.get("case_id") if isinstance(record, dict) else None
            texts = record.get("answers") if isinstance(record, dict) else None
            if not isinstance(case_id, str) or not isinstance(texts, list) or not texts:
                raise ReplayFormatError(
                    f'{path}:{number}: expected {{"case_id": "<id>", "answers": ["...", ...]}}'
                )
            if not all(isinstance(text, str) for text in texts):
                raise ReplayFormatError(f"{path}:{number}: every answer must be a string")
            answers[case_id] = texts
    return answers


class ReplayProvider:
    """Answers by case id and attempt number from a replay file."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._answers = load_replay_file(path)

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
        texts = self._answers.get(context.case_id)
        if texts is None:
            raise ModelError(f"{self._path}: no answers for case {context.case_id!r}")
        text = texts[min(context.attempt, len(texts) - 1)]
        return Completion(
            text=text, tokens_in=0, tokens_out=0, latency_s=0.0, model=self.model_name
        )
