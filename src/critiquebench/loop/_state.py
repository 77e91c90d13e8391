"""The explicit state of the critique loop and the records it accumulates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, TypedDict

from critiquebench.critics import CriticSettings
from critiquebench.judges import Failure, JudgeResult
from critiquebench.loop._arms import BUILTIN_ARMS, ArmSpec
from critiquebench.loop._resolve import resolve_arm
from critiquebench.models import Completion, Message, Role, Usage
from critiquebench.suites import Case

ARMS: tuple[str, ...] = tuple(BUILTIN_ARMS)
"""Names of the built-in arms (the registry is ``BUILTIN_ARMS``)."""

HaltReason = Literal[
    "visible_clean",  # what the loop is shown (feedback checks, lint, types) is clean
    "critic_ok",  # the critic (after the quorum) has nothing left for the fixer
    "single_draft",  # arm A: one draft, no feedback edge
    "retry_limit",  # retry_count reached retry_limit
    "draw_limit",  # arm R drew its most fresh drafts (DRAWS_PER_CALL x the loops' calls)
    "no_progress",  # the new artifact equals the previous one
    "loop_detected",  # the new artifact equals an earlier one
    "stagnation",  # `stagnation_patience` rounds in a row without fewer failures
    "token_budget",  # the per-case token budget is spent
    "own_loop",  # a user's own loop returned its attempts (it decided when to stop)
    "error",  # infrastructure: a model call failed after retries, or the judge could not judge
]
HALT_REASONS: tuple[HaltReason, ...] = (
    "visible_clean",
    "critic_ok",
    "single_draft",
    "retry_limit",
    "draw_limit",
    "no_progress",
    "loop_detected",
    "stagnation",
    "token_budget",
    "own_loop",
    "error",
)
ESCALATING_REASONS: frozenset[HaltReason] = frozenset(HALT_REASONS) - {
    "visible_clean",
    "critic_ok",
    "single_draft",
    "own_loop",
}

RENAMED_HALTS: dict[str, HaltReason] = {
    "passed": "visible_clean",
    "budget_exhausted": "retry_limit",
    "single_pass": "single_draft",
}
"""Halt reasons as runs before schema version 8 wrote them, by their name now. ``passed`` said
the answer passed when only what the loop could see was clean (a held-out check or
the measurement may still fail it); ``budget_exhausted`` was the retry limit, not the
token budget (that is ``token_budget``); ``single_pass`` read as "passed" beside a
pass rate. Readers of stored runs map these names on read (``analysis`` views)."""


def current_halt(name: str) -> str:
    """``name`` as this version calls it: a halt reason of an older run renamed, any
    other name unchanged."""
    return RENAMED_HALTS.get(name, name)


INFRASTRUCTURE_ERROR_PREFIXES: tuple[str, ...] = ("provider: ", "infrastructure: ")
"""How every ``LoopOutcome.error`` (and ``cases.error``) starts: a model call that failed
after its retries, or ``infrastructure: judge: ...`` when the judge could not judge."""

FeedbackMode = Literal["visible", "all"]


@dataclass(frozen=True, kw_only=True)
class LoopSettings:
    """How one loop runs; the same for every case of a run."""

    arm: str | ArmSpec = "B"
    """The arm: a name or reference ``--arms`` accepts, or a spec (see ``BUILTIN_ARMS``)."""
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
        _ = self.spec  # an arm that cannot be found fails here, not mid-loop

    @property
    def patience(self) -> int:
        """The stagnation patience in force (``retry_limit`` when not set, at least 1)."""
        if self.stagnation_patience is None:
            return max(1, self.retry_limit)
        return self.stagnation_patience

    @cached_property
    def spec(self) -> ArmSpec:
        """The arm's declaration."""
        return self.arm if isinstance(self.arm, ArmSpec) else resolve_arm(self.arm)

    def feedback_origins(self) -> frozenset[str]:
        """Origins of the failures the loop is shown (none for critic-only arms).

        Tool-grounded arms see lint and type findings (origin ``static``) like the
        failed assertions of their feedback checks: they are the harness's own tools.
        """
        if not self.spec.tests:
            return frozenset()
        checks = {"feedback", "heldout"} if self.feedback == "all" else {"feedback"}
        return frozenset({*checks, "static"})

    def visible_failures(self, result: JudgeResult) -> tuple[Failure, ...]:
        """The judge's failures the fixer is shown: failing checks of the visible origins
        (arms fed by tests), and errors of code that does not run (arms fed by them)."""
        visible = result.visible_to(self.feedback_origins())
        if self.spec.run_errors:
            return visible
        return tuple(failure for failure in visible if failure.origin)

    def recursion_limit(self) -> int:
        """LangGraph step cap: four nodes per round at most, plus escalation and slack."""
        return 4 * (self.retry_limit + 1) + 5


@dataclass(frozen=True, kw_only=True)
class CallRecord(Usage):
    """One model call made by the loop: where it belongs, and (as a ``Usage``) its cost."""

    iteration: int
    role: Role
    model: str
    error: str | None = None
    verifier_error: str | None = None
    parse_method: str | None = None
    messages: tuple[Message, ...] = ()
    """What the call was asked, for the run's transcripts."""
    reply: str | None = None
    """What the call answered (a cache hit's cached answer); None if it failed."""
    parsed: str | None = None
    """JSON of what was read from a critic's or reviewer's reply; None otherwise."""

    @classmethod
    def of(
        cls,
        iteration: int,
        role: Role,
        completion: Completion,
        *,
        messages: Sequence[Message] = (),
        verifier_error: str | None = None,
        parse_method: str | None = None,
        parsed: str | None = None,
    ) -> CallRecord:
        """The record of a completed call, with the completion's cost as it came."""
        return cls(
            iteration=iteration,
            role=role,
            model=completion.model,
            verifier_error=verifier_error,
            parse_method=parse_method,
            messages=tuple(messages),
            reply=completion.text,
            parsed=parsed,
            **vars(completion.usage()),
        )

    @classmethod
    def failed(
        cls,
        iteration: int,
        role: Role,
        model: str,
        error: str | None,
        messages: Sequence[Message] = (),
    ) -> CallRecord:
        """The record of a call that failed after its retries: it cost nothing."""
        return cls(
            iteration=iteration, role=role, model=model, tokens_in=0, tokens_out=0,
            latency_s=0.0, error=error, messages=tuple(messages),
        )  # fmt: skip


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


def empty_attempt(case: Case) -> Attempt:
    """The placeholder of a unit that produced no artifact (its first call failed)."""
    nothing = JudgeResult(
        failures=(),
        checks_total=len(case.checks),
        checks_passed=0,
        duration_s=0.0,
        notes=("no artifact was produced",),
    )
    return Attempt(0, "", nothing, (), "")


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
