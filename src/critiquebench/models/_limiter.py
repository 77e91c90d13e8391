"""One rate limiter per provider, shared by every task of a run in a process.

It bounds calls in flight, and optionally requests and tokens per rolling minute,
so a matrix of hundreds of units stays inside an API key's quota instead of
collecting 429s.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from critiquebench.models._provider import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ModelProvider,
)

_WINDOW_S = 60.0


@dataclass(frozen=True, kw_only=True)
class RateLimits:
    """Limits of one provider; None means unlimited."""

    max_in_flight: int = 4
    """Calls running at once."""
    requests_per_minute: int | None = None
    """Calls started in any rolling 60 s."""
    tokens_per_minute: int | None = None
    """Tokens (in + out) used in any rolling 60 s."""


class RateLimiter:
    """Thread-safe gate in front of a provider."""

    def __init__(
        self,
        limits: RateLimits,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if limits.max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self.limits = limits
        self._slots = threading.BoundedSemaphore(limits.max_in_flight)
        self._lock = threading.Lock()
        self._starts: deque[float] = deque()
        self._tokens: deque[tuple[float, int]] = deque()
        self._clock = clock
        self._sleep = sleep

    def _wait_for_window(self) -> None:
        while True:
            with self._lock:
                now = self._clock()
                while self._starts and now - self._starts[0] >= _WINDOW_S:
                    self._starts.popleft()
                while self._tokens and now - self._tokens[0][0] >= _WINDOW_S:
                    self._tokens.popleft()
                waits = [0.0]
                rpm, tpm = self.limits.requests_per_minute, self.limits.tokens_per_minute
                if rpm is not None and len(self._starts) >= rpm:
                    waits.append(self._starts[0] + _WINDOW_S - now)
                if tpm is not None and sum(n for _, n in self._tokens) >= tpm and self._tokens:
                    waits.append(self._tokens[0][0] + _WINDOW_S - now)
                wait = max(waits)
                if wait <= 0:
                    self._starts.append(now)
                    return
            self._sleep(min(wait, 1.0))

    def call(self, action: Callable[[], Completion]) -> Completion:
        """Run ``action`` once a slot and the rolling windows allow it."""
        with self._slots:
            self._wait_for_window()
            completion = action()
        if not completion.cached:
            with self._lock:
                spent = completion.tokens_in + completion.tokens_out
                self._tokens.append((self._clock(), spent))
        return completion


class LimitedProvider:
    """A provider whose calls pass through a :class:`RateLimiter`."""

    def __init__(self, inner: ModelProvider, limiter: RateLimiter) -> None:
        self.inner = inner
        self.limiter = limiter

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def complete(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, Any] | None = None,
        context: CallContext | None = None,
    ) -> Completion:
        return self.limiter.call(lambda: self.inner.complete(messages, params, schema, context))
