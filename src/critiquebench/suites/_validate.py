"""Validate a suite: its format, whether its feedback can teach, whether its references pass.

Three kinds of finding, each named with ``file:line`` (or the bundled suite's name)
and the case id:

- ``format`` (error): a line that cannot be used; every bad line is reported.
- ``reference`` (error): a ``reference_solution`` that fails its own checks when
  run through its case's judge (the one the line names: python, sql, json, ...),
  with each failing check's expected and actual values; or that has static findings
  (lint, types, evasions): the rule set is calibrated so a correct answer has none,
  so a reference with one is either wrong or a reason to change the rules.
- ``feedback`` (warning): a Python case whose feedback checks cannot fail for any
  candidate, so a loop shown only feedback stops on a wrong draft. Warnings do
  not make a suite invalid unless the caller asks for strictness.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from critiquebench.judges import (
    Case,
    Failure,
    JudgeResult,
    JudgeSet,
    plan_checks,
    trusted_code,
)
from critiquebench.suites._informative import feedback_cannot_fail
from critiquebench.suites._jsonl import SuiteFormatError, scan_jsonl_suite
from critiquebench.suites._registry import BUNDLED_JSONL, BUNDLED_SUITES

ProblemKind = Literal["format", "reference", "feedback"]
Judge = Callable[[Case, str], JudgeResult]

_SHOWN_FAILURES = 5


@dataclass(frozen=True)
class SuiteProblem:
    """One finding of the validator."""

    kind: ProblemKind
    where: str
    """``file:line`` of the case, or the bundled suite's name."""
    message: str
    case_id: str = ""
    whole_file: bool = False
    """The file as a whole cannot be used (a folder, binary, empty): no line to name."""

    @property
    def severity(self) -> Literal["error", "warning"]:
        """``warning`` for feedback findings; every other kind is an ``error``."""
        return "warning" if self.kind == "feedback" else "error"

    def __str__(self) -> str:
        case = f"{self.case_id}: " if self.case_id else ""
        return f"{self.where}: {self.severity}: {case}{self.message}"


@dataclass(frozen=True)
class SuiteValidation:
    """What :func:`validate_suite` found about one suite."""

    suite: str
    cases: int
    problems: tuple[SuiteProblem, ...]
    references_checked: int | None
    """How many reference solutions ran through the judge (None: check skipped)."""
    references_missing: int
    """Cases without a reference solution (nothing to check)."""
    reference_seconds: float
    checks: int = 0
    """Checks over all cases."""
    checks_inside: int = 0
    """Checks of a shape the judge cannot decide in the trusted parent: they run inside
    the sandbox, where a candidate could interfere with them (see README, judge)."""

    def of_kind(self, kind: ProblemKind) -> tuple[SuiteProblem, ...]:
        """The problems of one kind, in suite order."""
        return tuple(problem for problem in self.problems if problem.kind == kind)

    @property
    def errors(self) -> tuple[SuiteProblem, ...]:
        """Findings that make the suite invalid."""
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def warnings(self) -> tuple[SuiteProblem, ...]:
        """Findings that do not make the suite invalid by default."""
        return tuple(p for p in self.problems if p.severity == "warning")

    def summary(self) -> str:
        """One line: cases, errors, warnings and what the reference check did."""
        text = (
            f"{self.suite}: {self.cases} valid case(s), "
            f"{len(self.errors)} error(s), {len(self.warnings)} warning(s)"
        )
        if self.references_checked is None:
            text += "; references not checked"
        else:
            passing = self.references_checked - len(self.of_kind("reference"))
            text += (
                f"; {passing} of {self.references_checked} reference solution(s) pass "
                f"their own checks with no static finding ({self.reference_seconds:.1f} s)"
            )
            if self.references_missing:
                text += f", {self.references_missing} case(s) have none"
        if self.checks:
            text += (
                f"; {self.checks_inside} of {self.checks} check(s) run inside the sandbox"
                " (not decided by the trusted parent)"
            )
        if self.warnings:
            text += "; warnings do not fail validation (--strict makes them)"
        return text

    @property
    def unusable_file(self) -> bool:
        """The file as a whole could not be used: its one problem says it all."""
        return bool(self.problems) and all(p.whole_file for p in self.problems)

    def ok(self, *, strict: bool = False) -> bool:
        """True without errors (and, when ``strict``, without warnings)."""
        return not self.errors and not (strict and self.warnings)


Located = Sequence[tuple[str, Case]]


def uninformative_feedback(located: Located) -> list[SuiteProblem]:
    """A warning for every Python case whose feedback checks cannot fail for any candidate."""
    problems = []
    for where, case in located:
        if case.judge != "python":  # the test reads Python checks; other judges' are data
            continue
        reasons = feedback_cannot_fail(case)
        if reasons:
            message = (
                "feedback cannot fail any candidate, so a loop shown only feedback "
                f"stops on a wrong draft ({'; '.join(reasons)}): add a feedback test "
                f"that calls {case.entry_point}"
            )
            problems.append(SuiteProblem("feedback", where, message, case.id))
    return problems


def _describe_artifact_failure(failure: Failure) -> str:
    """A defect of a judge other than Python: its kind and sort, where, and which check."""
    text = f"[{failure.kind} {failure.code}]" if failure.code else f"[{failure.kind}]"
    if failure.file:
        text += f" at {failure.file}"
    if failure.source:
        check = f"{failure.origin} check" if failure.origin else "check"
        text += f" {check} `{failure.source}`"
    if failure.expected is not None or failure.actual is not None:
        return text + f" expected {failure.expected}, actual {failure.actual}"
    return text + (f" {failure.message}" if failure.message else "")


def _describe_failure(failure: Failure, case: Case, jsonl_fields: bool) -> str:
    if case.judge != "python":
        return _describe_artifact_failure(failure)
    if not failure.line:
        where = f"[{failure.kind}]"
    elif jsonl_fields and failure.origin:
        # A JSONL check's line is its position in the field, counted from 1.
        where = f"[{failure.origin}_tests[{failure.line - 1}]]"
    else:
        where = f"[{failure.origin} line {failure.line}]".replace("[ ", "[")
    text = f"{where} `{failure.source}`" if failure.source else where
    if failure.expected is not None or failure.actual is not None:
        text += f" expected {failure.expected}, actual {failure.actual}"
    elif failure.message:
        text += f" {failure.message}"
    return text


def _reference_problem(
    where: str, case: Case, result: JudgeResult, jsonl_fields: bool
) -> SuiteProblem | None:
    if result.infrastructure_error:
        message = f"the judge could not run the reference solution: {result.infrastructure_error}"
        return SuiteProblem("reference", where, message, case.id)
    if result.passed and not result.findings:
        return None
    if result.passed:
        return SuiteProblem("reference", where, _static_message(result), case.id)
    shown = [_describe_failure(f, case, jsonl_fields) for f in result.failures[:_SHOWN_FAILURES]]
    hidden = len(result.failures) - len(shown)
    if hidden:
        shown.append(f"... and {hidden} more")
    failed = result.checks_total - result.checks_passed
    message = (
        f"reference_solution fails {failed} of {result.checks_total} check(s):\n    "
        + "\n    ".join(shown)
    )
    if result.findings:
        message += "\n  and " + _static_message(result)
    return SuiteProblem("reference", where, message, case.id)


def _static_message(result: JudgeResult) -> str:
    """The reference's static findings: each a defect of any answer that has it."""
    shown = [f.describe() for f in result.findings[:_SHOWN_FAILURES]]
    hidden = len(result.findings) - len(shown)
    if hidden:
        shown.append(f"... and {hidden} more")
    return (
        f"reference_solution has {len(result.findings)} static finding(s) (lint, types), "
        "which count as defects of any answer that has them:\n    " + "\n    ".join(shown)
    )


def failing_references(
    located: Located, judge: Judge, *, workers: int = 2, jsonl_fields: bool = False
) -> tuple[list[SuiteProblem], int]:
    """Run every reference solution through ``judge``; an error per failing one.

    Returns the problems and how many references were checked. ``judge`` is called
    with each case (a :class:`~critiquebench.judges.JudgeSet` picks the judge the case
    names). The Python judge runs each answer out of process, so threads overlap the
    waiting. ``jsonl_fields``
    names failing checks by their JSONL field (``heldout_tests[2]``) rather than line.
    """
    with_reference = [(where, case) for where, case in located if case.reference_solution]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(
            pool.map(lambda item: judge(item[1], item[1].reference_solution), with_reference)
        )
    problems = [
        problem
        for (where, case), result in zip(with_reference, results, strict=True)
        if (problem := _reference_problem(where, case, result, jsonl_fields)) is not None
    ]
    return problems, len(with_reference)


def _locate(name_or_path: str) -> tuple[list[tuple[str, Case]], list[SuiteProblem], bool]:
    """Cases with their locations, the format problems found, and whether it is JSONL."""
    if name_or_path in BUNDLED_JSONL:
        path = BUNDLED_JSONL[name_or_path]
    elif name_or_path in BUNDLED_SUITES:
        return [(name_or_path, case) for case in BUNDLED_SUITES[name_or_path]()], [], False
    else:
        path = Path(name_or_path)
        if not path.exists():
            known = ", ".join(sorted(BUNDLED_SUITES))
            raise FileNotFoundError(
                f"suite {name_or_path!r} is neither a bundled suite ({known}) nor an existing file"
            )
    try:
        scan = scan_jsonl_suite(path)
    except SuiteFormatError as exc:
        return [], [SuiteProblem("format", exc.location(), exc.reason, whole_file=True)], True
    located = [(f"{path}:{line}", case) for line, case in scan.cases]
    problems = [
        SuiteProblem("format", p.location(), p.reason, whole_file=p.line is None)
        for p in scan.problems
    ]
    return located, problems, True


def validate_suite(
    name_or_path: str,
    *,
    judge: Judge | None = None,
    check_references: bool = True,
    workers: int = 2,
) -> SuiteValidation:
    """Validate a bundled suite (by name) or a JSONL suite file (by path).

    Args:
        name_or_path: ``basic``, ``humaneval`` or a path to a ``.jsonl`` file.
        judge: judges reference solutions; defaults to a
            :class:`~critiquebench.judges.JudgeSet`, so each case is judged by the
            judge it names (python, sql, json, markdown, trigger or a registered one).
        check_references: run every ``reference_solution`` through the judge
            (about 50 ms per case); False skips it.
        workers: reference solutions judged at once.

    Raises:
        FileNotFoundError: ``name_or_path`` is neither a bundled suite nor a file.
        HumanEvalUnavailableError: ``humaneval`` asked for without its package.
    """
    located, problems, jsonl = _locate(name_or_path)
    problems += uninformative_feedback(located)
    plans = [
        plan
        for _, case in located
        if case.judge == "python"  # where a check runs is a question of the Python judge
        for plan in plan_checks(
            case.checks,
            case.entry_point,
            trusted_code(case.setup, case.prompt, case.prompt_is_code),
        )
    ]
    checked: int | None = None
    started = time.perf_counter()
    if check_references and located:
        owned = JudgeSet()  # created lazily, closed here (the Python judge's warm worker)
        try:
            reference_problems, checked = failing_references(
                located, judge or owned, workers=workers, jsonl_fields=jsonl
            )
        finally:
            owned.close()
        problems += reference_problems
    return SuiteValidation(
        suite=name_or_path,
        cases=len(located),
        problems=tuple(problems),
        references_checked=checked,
        references_missing=sum(1 for _, case in located if not case.reference_solution),
        reference_seconds=time.perf_counter() - started if checked is not None else 0.0,
        checks=len(plans),
        checks_inside=sum(1 for plan in plans if plan.mode == "inside"),
    )
