"""The one interface every model provider implements."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    content: str


@dataclass(frozen=True, kw_only=True)
class GenerationParams:
    """Sampling settings for one call."""

    temperature: float = 0.7
    """Sampling temperature; 0 is greedy."""
    max_tokens: int = 384
    """Upper bound on generated tokens."""
    seed: int = 0
    """Sampling seed; the loop derives it from (case, rep) so reps are independent."""


@dataclass(frozen=True, kw_only=True)
class Completion:
    """What one model call returned and what it cost."""

    text: str
    tokens_in: int
    tokens_out: int
    latency_s: float
    model: str
    schema_mismatch: bool = False
    """A JSON schema was requested but the text does not parse as JSON."""
    cached: bool = False
    """Served from the call cache: tokens and latency above are what this run paid."""
    original_tokens_in: int | None = None
    """For a cache hit, the prompt tokens of the call as first made."""
    original_tokens_out: int | None = None
    """For a cache hit, the generated tokens of the call as first made."""
    original_latency_s: float | None = None
    """For a cache hit, the latency of the call as first made."""

    @property
    def experiment_tokens(self) -> tuple[int, int]:
        """(in, out) tokens the call costs as part of the experiment, cache or not."""
        tokens_in = self.tokens_in if self.original_tokens_in is None else self.original_tokens_in
        out = self.tokens_out if self.original_tokens_out is None else self.original_tokens_out
        return tokens_in, out

    @property
    def experiment_latency_s(self) -> float:
        """Latency of the call as first made, cache or not."""
        return self.latency_s if self.original_latency_s is None else self.original_latency_s


@dataclass(frozen=True, kw_only=True)
class CallContext:
    """Where a call belongs: lets replay pick an answer and caches keep reps apart."""

    case_id: str = ""
    attempt: int = 0
    rep: int = 0
    role: Literal["actor", "fixer", "critic"] = "actor"


class ModelError(RuntimeError):
    """A model call failed; the message says why and whether retrying may help."""


class ModelProvider(Protocol):
    """Messages (and optionally a JSON schema) in, a completion out."""

    @property
    def model_name(self) -> str:
        """Identifies the model in logs and tables, e.g. ``local:SmolLM2-135M``."""
        ...

    def complete(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, Any] | None = None,
        context: CallContext | None = None,
    ) -> Completion:
        """Run one call. Raises :class:`ModelError` on failure."""
        ...
