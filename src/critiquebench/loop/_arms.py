"""The arm registry: every arm is one ``ArmSpec``, declared once, read everywhere.

The graph builder, the run configuration, the data-quality suites and the reports
all read an arm's spec; nothing else says what an arm is. A spec's *feedback
sources* are its wiring: what reaches the fixer decides which nodes the graph has
(no source: one draft, no fix edge; ``critic``: a critique node; ``quorum``: reviewers
vote on the critic's findings). A spec with ``loop`` set is a user's own loop
(see ``_own.py``): it produces the attempts, the pipeline judges and stores them.
A spec with ``resamples`` set draws fresh first drafts instead of fixing (see
``_resample.py``): its feedback sources are what judges the drafts, never a fixer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, get_args

from critiquebench.models import ROLES, ModelProvider, Role
from critiquebench.suites import Case

FeedbackSource = Literal["tests", "run_errors", "critic", "quorum"]
"""What can reach the fixer: failing feedback tests; the judge's errors of code that
does not run (syntax, import, crash: failures of the artifact as a whole); the
critic's findings; the critic's findings after the reviewers' quorum vote."""
FEEDBACK_SOURCES: tuple[FeedbackSource, ...] = get_args(FeedbackSource)

BASELINE = "A"
"""The arm every defect reduction is measured against."""

RESAMPLE = "R"
"""The fair baseline: fresh drafts at a loop's tokens; every loop is also measured
against it (matched per unit, ``analysis/report/_resample.py``)."""


class OwnLoop(Protocol):
    """A user's own loop: given a case and the model, return the attempts it made.

    Each attempt is the code of one artifact, first draft first; the last one is the
    loop's answer. Calls made through ``provider`` are recorded like the built-in
    arms' calls.
    """

    def __call__(self, case: Case, provider: ModelProvider) -> Sequence[str]: ...


@dataclass(frozen=True, kw_only=True)
class ArmSpec:
    """One arm, declared once: what reaches the fixer, or a loop of its own."""

    name: str
    """How the arm is named in ``--arms``, the tables and the reports."""
    description: str
    """One line for reports and ``--help``."""
    feedback: frozenset[FeedbackSource] = frozenset()
    """What reaches the fixer; empty = one draft, no fix round (the baseline)."""
    loop: OwnLoop | None = field(default=None, compare=False)
    """A user's own loop that replaces the built-in graph (``feedback`` is then unused)."""
    resamples: bool = False
    """Fresh first drafts instead of fix rounds, the best by ``feedback`` kept, until a
    draft is clean or the unit's token budget is spent (the fair baseline, R)."""

    def __post_init__(self) -> None:
        if self.resamples and (self.loop is not None or {"critic", "quorum"} & self.feedback):
            raise ValueError(
                f"arm {self.name}: a resampling arm judges its drafts with the judge's "
                "feedback only (tests, run_errors); it takes no critic, quorum or own loop"
            )
        unknown = set(self.feedback) - set(FEEDBACK_SOURCES)
        if unknown:
            raise ValueError(
                f"arm {self.name}: unknown feedback source(s) {sorted(unknown)}; "
                f"known: {', '.join(FEEDBACK_SOURCES)}"
            )

    @property
    def own_loop(self) -> bool:
        """True for a user's loop, which the built-in graph does not run."""
        return self.loop is not None

    @property
    def runs_graph(self) -> bool:
        """The built-in LangGraph graph runs this arm (not a user's loop, not resampling)."""
        return not self.own_loop and not self.resamples

    @property
    def fixes(self) -> bool:
        """The built-in graph has a fix edge: something reaches the fixer."""
        return not self.own_loop and not self.resamples and bool(self.feedback)

    @property
    def tests(self) -> bool:
        """Failing feedback tests reach the fixer."""
        return "tests" in self.feedback

    @property
    def run_errors(self) -> bool:
        """Errors of code that does not run (syntax, import, crash) reach the fixer."""
        return "run_errors" in self.feedback

    @property
    def critic(self) -> bool:
        """A critique node reviews each attempt (a quorum needs a critic to vote on)."""
        return not self.own_loop and bool({"critic", "quorum"} & self.feedback)

    @property
    def quorum(self) -> bool:
        """Reviewers vote on the critic's findings; killed ones never reach the fixer."""
        return not self.own_loop and "quorum" in self.feedback

    @property
    def success(self) -> Literal["visible_clean", "critic_ok"]:
        """The halt reason when nothing visible is left for the fixer: ``critic_ok`` when
        only a critic decided (no judge feedback of tests), else ``visible_clean``."""
        return "critic_ok" if self.critic and not self.tests else "visible_clean"

    @property
    def nodes(self) -> tuple[str, ...]:
        """The graph's nodes for this arm, in the order a round visits them."""
        if self.own_loop:
            return ("own_loop", "judge")
        if self.resamples:
            return ("sample", "judge", "escalate")
        middle = ("critique",) if self.critic else ()
        tail = ("fix", "escalate") if self.fixes else ("escalate",)
        return ("generate", "judge", *middle, *tail)

    @property
    def roles(self) -> tuple[Role, ...]:
        """Call roles the arm may record (a user's loop may use any)."""
        if self.own_loop:
            return ROLES
        used = {"actor"} | ({"fixer"} if self.fixes else set())
        used |= {"critic"} if self.critic else set()
        used |= {"reviewer"} if self.quorum else set()
        return tuple(role for role in ROLES if role in used)

    @property
    def halts(self) -> tuple[str, ...]:
        """Halt reasons the arm's units may record (a data-quality expectation)."""
        if self.own_loop:
            return ("own_loop", "error")
        if self.resamples:
            return ("visible_clean", "draw_limit", "token_budget", "error")
        if not self.fixes:
            return ("single_draft", "error")
        escalations = ("retry_limit", "no_progress", "loop_detected", "stagnation")
        return (self.success, *escalations, "token_budget", "error")

    @property
    def loops_bounded(self) -> bool:
        """Fix rounds never exceed the run's retry limit (a user's loop sets its own; a
        resampling arm's extra drafts, counted as its loops, follow the token budget)."""
        return not self.own_loop and not self.resamples

    def with_run_errors(self) -> ArmSpec:
        """The same arm with run errors reaching the fixer too (if it fixes at all)."""
        if not self.fixes or self.run_errors:
            return self
        return ArmSpec(
            name=self.name,
            description=self.description + "; run errors reach the fixer",
            feedback=self.feedback | {"run_errors"},
        )


BUILTIN_ARMS: dict[str, ArmSpec] = {
    spec.name: spec
    for spec in (
        ArmSpec(name="A", description="baseline: generate once"),
        ArmSpec(
            name="B",
            description="tests: generate, run the feedback tests, fix",
            feedback=frozenset({"tests", "run_errors"}),
        ),
        ArmSpec(
            name="C",
            description="critic: a separate-context LLM critic, no tests, no run errors",
            feedback=frozenset({"critic"}),
        ),
        ArmSpec(
            name="D",
            description="quorum: critic findings filtered by adversarial reviewers",
            feedback=frozenset({"quorum"}),
        ),
        ArmSpec(
            name="E",
            description="tests + critic: the fixer gets both",
            feedback=frozenset({"tests", "run_errors", "critic"}),
        ),
        ArmSpec(
            name="R",
            description=(
                "resample: fresh drafts until one passes the feedback tests or the token "
                "budget is spent, the best kept; compared with each loop at its tokens"
            ),
            feedback=frozenset({"tests", "run_errors"}),
            resamples=True,
        ),
    )
}
"""The built-in arms. R is the fair baseline a loop must beat: more samples at the
same tokens (``analysis/report/_resample.py`` matches it to each loop per unit). C and D are
critic-only: the judge's failures, run errors included, never reach their fixer
(``RunConfig.run_error_feedback`` adds run errors)."""
