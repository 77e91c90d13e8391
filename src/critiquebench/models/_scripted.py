"""A provider that answers from a script: for tests and demonstrations."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from critiquebench.models._provider import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ModelError,
)

Responder = Callable[[Sequence[Message]], str]


class ScriptedProvider:
    """Returns queued answers in order, or computes them with a function.

    ``ScriptedProvider(["a", "b"])`` answers "a" then "b" then raises;
    ``ScriptedProvider(responder=fn)`` answers ``fn(messages)`` every time.
    Token counts are word counts, so cost arithmetic can be tested.
    """

    def __init__(
        self,
        answers: Sequence[str] = (),
        *,
        responder: Responder | None = None,
        name: str = "scripted",
    ) -> None:
        self._answers = list(answers)
        self._responder = responder
        self._name = name
        self._lock = threading.Lock()
        self.requests: list[list[Message]] = []

    @property
    def model_name(self) -> str:
        return self._name

    def complete(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, Any] | None = None,
        context: CallContext | None = None,
    ) -> Completion:
        with self._lock:
            self.requests.append(list(messages))
            if self._responder is None:
                if not self._answers:
                    raise ModelError("scripted provider has no answers left")
                text = self._answers.pop(0)
        # A responder runs outside the lock, so concurrency tests can observe overlap.
        if self._responder is not None:
            text = self._responder(messages)
        tokens_in = sum(len(message.content.split()) for message in messages)
        return Completion(
            text=text,
            tokens_in=tokens_in,
            tokens_out=len(text.split()),
            latency_s=0.001,
            model=self._name,
        )
