"""Structured judge findings: what failed, where, expected versus actual."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from critiquebench.judges._plain import clean_text

FailureKind = Literal[
    "assertion",  # an assert evaluated to false
    "error",  # a check raised an exception other than AssertionError
    "timeout",  # a check, or the whole run, exceeded its time limit
    "syntax",  # the artifact does not parse
    "import",  # the artifact raised while being defined, or lacks the entry point
    "crash",  # the child process died (memory limit, signal) mid-run
    "not_run",  # a check that could not run because of a fatal failure before it
    "critic",  # a finding of an LLM critic: shown to the fixer, never a measured defect
    "lint",  # a ruff finding (judges/static/_checker.py RUFF_RULES)
    "types",  # a mypy error (judges/static/_checker.py MYPY_FLAGS)
    "sql",  # the sql judge: the query errs, or its rows differ from the expected ones
    "json",  # the json judge: a JSON Schema violation or a wrong field value, by JSON pointer
    "markdown",  # the markdown judge: a missing section, broken link, bad code block, misspelling
    "trigger",  # the trigger judge: a skill triggered where it must not, or did not where it must
]

FAILURE_KINDS: tuple[FailureKind, ...] = (
    "assertion",
    "error",
    "timeout",
    "syntax",
    "import",
    "crash",
    "not_run",
    "lint",
    "types",
    "sql",
    "json",
    "markdown",
    "trigger",
)

TEST_KINDS: tuple[FailureKind, ...] = FAILURE_KINDS[:7]
"""Kinds found by running the tests; ``defects()`` and ``passed`` count only these."""
STATIC_KINDS: tuple[FailureKind, ...] = ("lint", "types")
"""Kinds found by reading the code (ruff, mypy); kept in ``JudgeResult.findings``."""

ARTIFACT_KINDS: tuple[FailureKind, ...] = ("sql", "json", "markdown", "trigger")
"""Kinds of the judges of artifacts other than Python code; like test failures they
are ``failures`` (counted by ``defects()`` and ``passed``), with ``code`` naming the
defect's sort (e.g. ``missing_row``, ``false_trigger``)."""


def defect_group(kind: FailureKind) -> str:
    """The column a kind is reported under: ``tests`` for the Python judge's test
    kinds, else the kind itself (``lint``, ``types``, ``sql``, ...)."""
    return "tests" if kind in TEST_KINDS else kind


DEFECT_GROUPS: tuple[str, ...] = ("tests", *STATIC_KINDS, *ARTIFACT_KINDS)
"""Every reporting group, in display order."""

# Kinds that stop the run of the remaining checks; each counts one defect of its own.
FATAL_KINDS: frozenset[FailureKind] = frozenset({"syntax", "import", "crash"})

COUNT_BOUND = 20
"""At most this many defects of one kind count per attempt, for every kind but the
test kinds (README "Bounded counts"). One answer with 3,004 lint findings or 5,500
broken links would otherwise outweigh a hundred answers in an arm's mean; 20 is well
above what a plainly wrong answer scores (a bundled suite's first drafts stay below
it) while a flood counts as a bad answer, not as a hundred of them."""


def counted(kind: FailureKind, found: tuple[Failure, ...]) -> int:
    """How many of ``found`` (all of kind ``kind``) count as defects: the bounding rule.

    Test kinds count every failure: there is at most one per check (or one fatal
    failure), so the case's checks bound them already. Lint and type findings count
    distinct (file, line, rule) triples, so a tool that repeats itself on one line
    counts once. Every kind but the test kinds then counts at most ``COUNT_BOUND``.
    The raw count (``len(found)``) is kept beside it in the tables.
    """
    if kind in TEST_KINDS:
        return len(found)
    if kind in STATIC_KINDS:
        distinct = len({(f.file, f.line, f.code) for f in found})
    else:
        distinct = len(found)
    return min(distinct, COUNT_BOUND)


@dataclass(frozen=True)
class Failure:
    """One defect found by a judge, phrased so a fixer can act on it."""

    kind: FailureKind
    message: str
    line: int = 0
    source: str = ""
    expected: str | None = None
    actual: str | None = None
    origin: str = ""  # "feedback", "heldout", "static" (lint, types) or "" (the whole artifact)
    inside: bool = False  # decided inside the sandbox (a check of an unusual shape)
    code: str = ""  # the tool's rule or error code (lint, types), e.g. F401; or a defect's sort
    file: str = ""  # the file a lint or type finding is in; a JSON pointer or a heading

    def __post_init__(self) -> None:
        # Whatever the candidate wrote reaches tables, prompts and Markdown: bounded, valid
        # UTF-8 text only, however long or malformed the original was.
        object.__setattr__(self, "message", clean_text(self.message))
        for name in ("expected", "actual"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, clean_text(value, 300))

    def describe(self) -> str:
        """A one-paragraph human/LLM-readable description."""
        code = f" {self.code}" if self.code else ""
        if self.kind in STATIC_KINDS:
            return f"[{self.kind}{code}] {self.file or 'artifact'} line {self.line}: {self.message}"
        if self.kind in ARTIFACT_KINDS:
            where = f" at {self.file}" if self.file else ""
            where += f" line {self.line}" if self.line else ""
            text = f"[{self.kind}{code}]{where}"
        else:
            where = f"test line {self.line}" if self.line else "artifact"
            text = f"[{self.kind}] {where}"
        if self.source:
            text += f": `{self.source}`"
        if self.expected is not None or self.actual is not None:
            text += f"\n    expected: {self.expected}\n    actual:   {self.actual}"
        if self.message:
            text += f"\n    message:  {self.message}"
        return text


@dataclass(frozen=True)
class JudgeResult:
    """Everything a judge found about one artifact."""

    failures: tuple[Failure, ...]
    checks_total: int
    checks_passed: int
    duration_s: float
    notes: tuple[str, ...] = field(default=())
    checks_inside: int = 0
    """Checks decided inside the sandbox (unusual shapes) rather than by the parent."""
    infrastructure_error: str | None = None
    """Set when the judge could not judge (the sandbox did not start, a wall clock ran
    out with the CPU budget unused): the failures then say nothing about the artifact.
    Through ``JudgeSet`` it is set only once a control failed too, and the unit is then
    excluded from the statistics, never counted as defects."""
    owned_kind: FailureKind = "crash"
    """With ``infrastructure_error``: the kind of defect it becomes when a healthy control
    proves the answer, not the judge, caused it (``timeout`` for a wall clock that ran
    out; see ``judges/_proof.py``)."""
    findings: tuple[Failure, ...] = ()
    """Lint and type findings (kinds ``lint``, ``types``; origin ``static``), kept apart
    from ``failures`` so the test-only numbers keep their meaning."""

    def visible_to(self, origins: frozenset[str]) -> tuple[Failure, ...]:
        """What the loop may see: failures and findings whose origin is in ``origins``,
        plus whole-artifact failures (syntax, import, crash)."""
        everything = (*self.failures, *self.findings)
        return tuple(f for f in everything if f.origin in origins or not f.origin)

    def defects(self, origins: frozenset[str] | None = None) -> int:
        """Test defects (and other judges' ``failures``), bounded per kind by
        :func:`counted`, over all checks; or, with ``origins``, the number of failures
        and findings the loop sees (``visible_to``), unbounded: what it is shown."""
        if origins is None:
            counts = self.defects_by_kind()
            return sum(counts[kind] for kind in {f.kind for f in self.failures})
        return len(self.visible_to(origins))

    def defects_total(self) -> int:
        """The harness's measured defects: failed tests + lint findings + type errors,
        each kind bounded by :func:`counted` (the headline numbers use this)."""
        return sum(self.defects_by_kind().values())

    def defects_total_raw(self) -> int:
        """Every failure and finding, unbounded: what :func:`counted` started from."""
        return len(self.failures) + len(self.findings)

    def of_kind(self, kind: FailureKind) -> tuple[Failure, ...]:
        """Failures or findings of one kind."""
        return tuple(f for f in (*self.failures, *self.findings) if f.kind == kind)

    def defects_by_kind_raw(self) -> dict[FailureKind, int]:
        """Failure and finding counts for every kind (zeros included), unbounded."""
        counts: dict[FailureKind, int] = dict.fromkeys(FAILURE_KINDS, 0)
        for failure in (*self.failures, *self.findings):
            counts[failure.kind] += 1
        return counts

    def defects_by_kind(self) -> dict[FailureKind, int]:
        """Defect counts for every kind (zeros included), each bounded by :func:`counted`."""
        counts: dict[FailureKind, int] = dict.fromkeys(FAILURE_KINDS, 0)
        for kind, n in self.defects_by_kind_raw().items():
            if n:
                counts[kind] = counted(kind, self.of_kind(kind))
        return counts

    def bounded_kinds(self) -> dict[FailureKind, int]:
        """The raw count of each kind the bounding rule lowered (empty: none was)."""
        bounded = self.defects_by_kind()
        return {kind: n for kind, n in self.defects_by_kind_raw().items() if n > bounded[kind]}

    @property
    def passed(self) -> bool:
        """True when no check failed (never when the judge itself failed); tests only."""
        return not self.failures and self.infrastructure_error is None

    @property
    def clean(self) -> bool:
        """True when nothing of any kind was found: tests pass, no lint, no type error."""
        return self.passed and not self.findings
