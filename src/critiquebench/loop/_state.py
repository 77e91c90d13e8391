"""The explicit state of the critique loop and the records it accumulates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypedDict

from critiquebench.critics import CriticSettings
from critiquebench.judges import Failure, JudgeResult
from critiquebench.models import Completion, Message
from critiquebench.suites import Case

Arm = Literal["A", "B", "C", "D", "E"]
ARMS: tuple[Arm, ...] = ("A", "B", "C", "D", "E")
ARM_DESCRIPTIONS: dict[Arm, str] = {
    "A": "baseline: generate once",
    "B": "tests: generate, run the feedback tests, fix",
    "C": "critic: a separate-context LLM critic, no tests",
    "D": "quorum: critic findings filtered by adversarial reviewers",
    "E": "tests + critic: the fixer gets both",
}
CRITIC_ARMS: frozenset[Arm] = frozenset({"C", "D", "E"})
TEST_FEEDBACK_ARMS: frozenset[Arm] = frozenset({"B", "E"})

HaltReason = Literal[
    "passed",  # the feedback checks are green
    "critic_ok",  # the critic (after the quorum) has nothing left for the fixer
    "single_pass",  # arm A: one draft, no feedback edge
    "budget_exhausted",  # retry_count reached retry_limit
    "no_progress",  # the new artifact equals the previous one
    "loop_detected",  # the new artifact equals an earlier one
    "stagnation",  # `stagnation_patience` rounds in a row without fewer failures
    "token_budget",  # the per-case token budget is spent
    "error",  # infrastructure: a model call failed after retries, or the judge could not judge
]
HALT_REASONS: tuple[HaltReason, ...] = (
    "passed",
    "critic_ok",
    "single_pass",
    "budget_exhausted",
    "no_progress",
    "loop_detected",
    "stagnation",
    "token_budget",
    "error",
)
ESCALATING_REASONS: frozenset[HaltReason] = frozenset(HALT_REASONS) - {
    "passed",
    "critic_ok",
    "single_pass",
}

INFRASTRUCTURE_ERROR_PREFIXES: tuple[str, ...] = ("provider: ", "infrastructure: ")
"""How every ``LoopOutcome.error`` (and ``cases.error``) starts: a model call that failed
after its retries, or ``infrastructure: judge: ...`` when the judge could not judge."""

FeedbackMode = Literal["visible", "all"]
CallRole = Literal["actor", "fixer", "critic", "reviewer"]


@dataclass(frozen=True, kw_only=True)
class LoopSettings:
    """How one loop runs; the same for every case of a run."""

    arm: Arm = "B"
    """A = generate once; B = generate, test, fix until a halt rule fires."""
    retry_limit: int = 3
    """Maximum number of fix rounds after the first draft."""
    token_budget: int | None = 20_000
    """Escalate once a case has used this many tokens (in + out); None = no budget."""
    feedback: FeedbackMode = "visible"
    """visible: the loop sees only feedback checks; all: it sees held-out checks too."""
    temperature: float = 0.7
    """Sampling temperature of every call."""
    max_tokens: int = 256
    """Upper bound on tokens generated per call."""
    critic: CriticSettings = field(default_factory=CriticSettings)
    """Critic policy and quorum (arms C, D, E)."""
    stagnation_patience: int | None = None
    """Fix rounds in a row without fewer visible failures before the loop stops
    (``stagnation``). None = ``retry_limit``: the rule then never ends a loop before
    its budget, so a configured retry limit is never cut short silently."""

    def __post_init__(self) -> None:
        if self.stagnation_patience is not None and self.stagnation_patience < 1:
            raise ValueError(f"stagnation_patience must be >= 1, got {self.stagnation_patience}")

    @property
    def patience(self) -> int:
        """The stagnation patience in force (``retry_limit`` when not set, at least 1)."""
        if self.stagnation_patience is None:
            return max(1, self.retry_limit)
        return self.stagnation_patience

    def feedback_origins(self) -> frozenset[str]:
        """Origins of the failures the loop is shown (none for critic-only arms).

        Tool-grounded arms see lint and type findings (origin ``static``) like the
        failed assertions of their feedback checks: they are the harness's own tools.
        """
        if self.arm not in TEST_FEEDBACK_ARMS:
            return frozenset()
        checks = {"feedback", "heldout"} if self.feedback == "all" else {"feedback"}
        return frozenset({*checks, "static"})

    def recursion_limit(self) -> int:
        """LangGraph step cap: four nodes per round at most, plus escalation and slack."""
        return 4 * (self.retry_limit + 1) + 5


@dataclass(frozen=True)
class CallRecord:
    """One model call made by the loop."""

    iteration: int
    role: CallRole
    model: str
    tokens_in: int
    tokens_out: int
    latency_s: float
    error: str | None = None
    cached: bool = False
    verifier_error: str | None = None
    parse_method: str | None = None

    @property
    def experiment_tokens_in(self) -> int:
        """Prompt tokens the call costs as part of the experiment, cache hit or not."""
        return self.tokens_in if self.original_tokens_in is None else self.original_tokens_in

    @property
    def experiment_tokens_out(self) -> int:
        """Generated tokens the call costs as part of the experiment."""
        return self.tokens_out if self.original_tokens_out is None else self.original_tokens_out

    @property
    def experiment_latency_s(self) -> float:
        """Latency of the call as first made."""
        return self.latency_s if self.original_latency_s is None else self.original_latency_s

    @classmethod
    def of(
        cls,
        iteration: int,
        role: CallRole,
        completion: Completion,
        *,
        verifier_error: str | None = None,
        parse_method: str | None = None,
    ) -> CallRecord:
        """The record of a completed call; cache hits keep their original cost apart."""
        tokens_in, tokens_out = completion.experiment_tokens
        return cls(
            iteration,
            role,
            completion.model,
            completion.tokens_in,
            completion.tokens_out,
            completion.latency_s,
            cached=completion.cached,
            original_tokens_in=tokens_in,
            original_tokens_out=tokens_out,
            original_latency_s=completion.experiment_latency_s,
            verifier_error=verifier_error,
            parse_method=parse_method,
        )

    original_tokens_in: int | None = None
    original_tokens_out: int | None = None
    original_latency_s: float | None = None


@dataclass(frozen=True)
class Attempt:
    """One artifact produced inside a loop and what the judge found."""

    iteration: int
    artifact: str
    result: JudgeResult
    feedback_failures: tuple[Failure, ...]
    diff_summary: str
    critic_verdict: str | None = None
    findings_killed: int = 0

    @property
    def feedback_defects(self) -> int:
        """Defects the loop can see (feedback checks and whole-artifact failures)."""
        return len(self.feedback_failures)

    @property
    def defects(self) -> int:
        """Test defects over every check (failed assertions, errors, ...)."""
        return self.result.defects()

    @property
    def defects_total(self) -> int:
        """Measured defects of every arm: test defects + lint findings + type errors."""
        return self.result.defects_total()


@dataclass(frozen=True)
class Escalation:
    """Why a loop gave up, with a three-line summary for a human."""

    reason: HaltReason
    summary: tuple[str, str, str]


class LoopState(TypedDict):
    """Everything the graph nodes read and write."""

    case: Case
    settings: LoopSettings
    rep: int
    prompt: list[Message]
    artifact: str
    retry_count: int
    failures: tuple[Failure, ...]
    history: list[Attempt]
    calls: list[CallRecord]
    tokens_in: int
    tokens_out: int
    latency_s: float
    best: Attempt | None
    halt: HaltReason | None
    error: str | None
    escalation: Escalation | None
    verifier_errors: int
    findings_killed: int


@dataclass(frozen=True)
class LoopOutcome:
    """The result of running the loop on one case."""

    case_id: str
    final: Attempt
    attempts: tuple[Attempt, ...]
    calls: tuple[CallRecord, ...]
    halt: HaltReason
    retry_count: int
    tokens_in: int
    tokens_out: int
    error: str | None
    """Infrastructure failure that stopped the unit (``provider: ...`` or
    ``infrastructure: judge: ...``); None whenever the outcome measures the model."""
    escalation: Escalation | None = field(default=None)
    verifier_errors: int = 0
    findings_killed: int = 0

    @property
    def escalated(self) -> bool:
        """True when the loop stopped for a reason other than success or arm A's single pass."""
        return self.halt in ESCALATING_REASONS
