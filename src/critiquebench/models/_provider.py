"""The one interface every model provider implements."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

MessageRole = Literal["system", "user", "assistant"]
"""Who speaks in a chat message (the provider's notion, not the loop's)."""

Role = Literal["actor", "fixer", "critic", "reviewer"]
"""What a model call does in a loop: first draft, fix round, critic verdict, quorum vote.
The one vocabulary of call roles: the call context, the loop's records, the calls table."""
ROLES: tuple[Role, ...] = get_args(Role)


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: MessageRole
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
class Usage:
    """What one model call cost: the one token/latency record of providers and the loop.

    ``original_*`` are None unless the call was answered from the call cache; then they
    hold what the call cost when it was first made. ``experiment_*`` is the cost the
    experiment is charged either way (SPEC 8: cache hits priced at their original tokens).
    """

    tokens_in: int
    """Prompt tokens paid by this run (0 for a cache hit)."""
    tokens_out: int
    """Generated tokens paid by this run."""
    latency_s: float
    """Latency of the call in this run, seconds."""
    cached: bool = False
    """Served from the call cache: the three fields above are what this run paid."""
    original_tokens_in: int | None = None
    """For a cache hit, the prompt tokens of the call as first made; None otherwise."""
    original_tokens_out: int | None = None
    """For a cache hit, the generated tokens of the call as first made; None otherwise."""
    original_latency_s: float | None = None
    """For a cache hit, the latency of the call as first made; None otherwise."""

    @property
    def experiment_tokens_in(self) -> int:
        """Prompt tokens the call costs as part of the experiment, cache hit or not."""
        return self.tokens_in if self.original_tokens_in is None else self.original_tokens_in

    @property
    def experiment_tokens_out(self) -> int:
        """Generated tokens the call costs as part of the experiment, cache hit or not."""
        return self.tokens_out if self.original_tokens_out is None else self.original_tokens_out

    @property
    def experiment_tokens(self) -> tuple[int, int]:
        """(in, out) tokens the call costs as part of the experiment, cache hit or not."""
        return self.experiment_tokens_in, self.experiment_tokens_out

    @property
    def experiment_latency_s(self) -> float:
        """Latency of the call as first made, cache hit or not."""
        return self.latency_s if self.original_latency_s is None else self.original_latency_s

    def usage(self) -> Usage:
        """Only the cost fields, as a plain ``Usage`` (drops what a subclass adds)."""
        return Usage(
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            latency_s=self.latency_s,
            cached=self.cached,
            original_tokens_in=self.original_tokens_in,
            original_tokens_out=self.original_tokens_out,
            original_latency_s=self.original_latency_s,
        )


@dataclass(frozen=True, kw_only=True)
class Completion(Usage):
    """What one model call returned, and (as a ``Usage``) what it cost."""

    text: str
    model: str
    schema_mismatch: bool = False
    """A JSON schema was requested but the text does not parse as JSON."""


@dataclass(frozen=True, kw_only=True)
class CallContext:
    """Where a call belongs: lets replay pick an answer and caches keep reps apart."""

    case_id: str = ""
    attempt: int = 0
    rep: int = 0
    role: Role = "actor"


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
