"""Reading and validating JSONL suite files.

One JSON object per line::

    {"id": "basic/001_add_two",
     "prompt": "Write a Python function `add_two(a: int, b: int) -> int` ...",
     "entry_point": "add_two",
     "feedback_tests": ["assert add_two(2, 3) == 5"],
     "heldout_tests": ["assert add_two(-1, 1) == 0"],
     "setup": "",                      # optional: test-side code run first
     "reference_solution": "def ...",  # optional: a known-good answer
     "tags": ["arithmetic", "easy"],   # optional
     "judge": "python"}                # optional: a registered judge's name

A case for another judge (``sql``, ``json``, ``markdown``, ``trigger`` or one a
package registers) gives its checks as objects, each with a ``name`` and the
parameters that judge reads, and the judge's material in ``judge_data``::

    {"id": "sql/001_top_customer", "judge": "sql",
     "prompt": "Write a DuckDB query ...",
     "judge_data": {"schema": "CREATE TABLE ..."},
     "feedback_checks": [{"name": "sample data", "data": "INSERT ...", "expected": [[1]]}],
     "heldout_checks": [{"name": "ties", "data": "INSERT ...", "expected": [[2]]}]}

docs/suites.md documents each built-in judge's fields. Blank lines and lines
starting with ``#`` are ignored. Every problem is reported with the file, the line
number and what to change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from critiquebench.judges import Case, Check, CheckOrigin, case_problems, judge_names
from critiquebench.runtime.ast_turns import parse


class SuiteFormatError(ValueError):
    """A suite file that cannot be used; the message names file, line and fix.

    ``line`` is None when the problem is the file as a whole (a folder, not UTF-8,
    no cases). ``more`` holds the file's further problems, in line order.
    """

    def __init__(
        self,
        path: Path,
        line: int | None,
        reason: str,
        more: tuple[SuiteFormatError, ...] = (),
    ) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        self.more = more
        where = f"{path}:{line}" if line is not None else f"{path}"
        extra = f" (and {len(more)} more problem(s): see critiquebench validate-suite)"
        super().__init__(f"{where}: {reason}" + (extra if more else ""))

    def location(self) -> str:
        """``file:line``, or ``file`` for a problem of the whole file."""
        return f"{self.path}:{self.line}" if self.line is not None else str(self.path)


@dataclass(frozen=True)
class SuiteScan:
    """Everything read from a suite file: its cases with their lines, and every problem."""

    path: Path
    cases: tuple[tuple[int, Case], ...]
    problems: tuple[SuiteFormatError, ...]


class _CheckLine(BaseModel):
    """A check of a judge other than Python: a name and that judge's parameters."""

    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1)


class _SuiteLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    entry_point: str = ""
    feedback_tests: list[str] = []
    heldout_tests: list[str] = []
    feedback_checks: list[_CheckLine] = []
    heldout_checks: list[_CheckLine] = []
    judge_data: dict[str, Any] = {}
    setup: str = ""
    reference_solution: str = ""
    tags: list[str] = []
    judge: str = Field(default="python", min_length=1)


def _describe_validation_error(error: ValidationError) -> str:
    parts = []
    for problem in error.errors():
        field = ".".join(str(item) for item in problem["loc"]) or "<line>"
        parts.append(f"field '{field}': {problem['msg']}")
    return "; ".join(parts)


def _check_statement(source: str, field: str, index: int) -> str | None:
    """Return a problem description, or None when ``source`` is one statement."""
    try:
        tree = parse(source)
    except SyntaxError as exc:
        return f"{field}[{index}] is not valid Python ({exc.msg}): {source!r}"
    if len(tree.body) != 1:
        return f"{field}[{index}] must be exactly one statement, found {len(tree.body)}"
    return None


def _line_problem(line: _SuiteLine) -> str | None:
    """What is wrong with a line's fields, before its judge reads it."""
    if line.judge not in judge_names():
        known = ", ".join(judge_names())
        return (
            f"field 'judge': unknown judge {line.judge!r}; registered judges are {known} "
            "(a package registers one in the entry-point group 'critiquebench.judges')"
        )
    tests = line.feedback_tests or line.heldout_tests
    objects = line.feedback_checks or line.heldout_checks
    if line.judge == "python":
        if objects:
            return (
                "the python judge reads 'feedback_tests' and 'heldout_tests' (Python "
                "statements), not 'feedback_checks'/'heldout_checks'"
            )
        if not line.entry_point:
            return "field 'entry_point': required by the python judge (the function's name)"
    if line.entry_point and not line.entry_point.isidentifier():
        return f"field 'entry_point': {line.entry_point!r} is not a Python identifier"
    if not tests and not objects:
        return (
            "no checks: give at least one entry in 'feedback_tests' or 'heldout_tests' "
            "(Python statements) or in 'feedback_checks' or 'heldout_checks' (objects)"
        )
    return None


def _line_checks(line: _SuiteLine) -> tuple[list[Check], str | None]:
    """The line's checks in order (tests, then check objects), or the first problem."""
    checks: list[Check] = []
    tests: list[tuple[str, list[str], CheckOrigin]] = [
        ("feedback_tests", line.feedback_tests, "feedback"),
        ("heldout_tests", line.heldout_tests, "heldout"),
    ]
    for field, sources, origin in tests:
        for index, source in enumerate(sources):
            problem = _check_statement(source, field, index)
            if problem:
                return [], problem
            checks.append(Check(source=source, origin=origin, line=index + 1))
    objects: list[tuple[list[_CheckLine], CheckOrigin]] = [
        (line.feedback_checks, "feedback"),
        (line.heldout_checks, "heldout"),
    ]
    for entries, origin in objects:
        for index, entry in enumerate(entries):
            spec = dict(entry.model_extra or {})
            checks.append(Check(source=entry.name, origin=origin, line=index + 1, spec=spec))
    return checks, None


def _parse_line(raw: dict[str, Any]) -> tuple[Case | None, str | None]:
    try:
        line = _SuiteLine.model_validate(raw)
    except ValidationError as exc:
        return None, _describe_validation_error(exc)
    problem = _line_problem(line)
    if problem:
        return None, problem
    checks, problem = _line_checks(line)
    if problem:
        return None, problem
    case = Case(
        id=line.id,
        prompt=line.prompt,
        entry_point=line.entry_point,
        setup=line.setup,
        checks=tuple(checks),
        reference_solution=line.reference_solution,
        tags=tuple(line.tags),
        judge=line.judge,
        judge_data=line.judge_data,
    )
    problems = case_problems(case)
    if problems:
        return None, f"judge {line.judge!r}: " + "; ".join(problems)
    return case, None


def _read_bytes(path: Path) -> bytes:
    """The file's bytes; a missing, folder, unreadable or binary file is one clear error."""
    if not path.exists():
        raise SuiteFormatError(path, None, "no such file")
    if path.is_dir():
        raise SuiteFormatError(path, None, "is a folder: give a .jsonl suite file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SuiteFormatError(path, None, f"cannot be read ({exc.strerror})") from None
    if b"\0" in data:
        raise SuiteFormatError(path, None, "is a binary file, not JSONL text")
    return data


def _decode_line(path: Path, number: int, raw: bytes) -> str | SuiteFormatError:
    """One line as text, or the problem saying where it is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = (
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x}) at column {exc.start + 1}: "
            "save the file as UTF-8"
        )
        return SuiteFormatError(path, number, reason)


def _check_case(
    path: Path, number: int, text: str, seen: dict[str, int]
) -> Case | SuiteFormatError:
    """The case on one line, or the line's problem; ``seen`` maps ids to their lines."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        return SuiteFormatError(path, number, f"not valid JSON ({exc.msg} at column {exc.colno})")
    if not isinstance(raw, dict):
        return SuiteFormatError(path, number, "each line must be a JSON object {...}")
    case, problem = _parse_line(raw)
    if case is None:
        return SuiteFormatError(path, number, problem or "invalid case")
    if case.id in seen:
        reason = f"duplicate id {case.id!r} (first used on line {seen[case.id]})"
        return SuiteFormatError(path, number, reason)
    seen[case.id] = number
    return case


def scan_jsonl_suite(path: Path) -> SuiteScan:
    """Read a suite file and collect every problem, not only the first.

    Each line is decoded on its own, so a line that is not UTF-8 is one problem
    among the others rather than the end of the scan. A UTF-8 byte-order mark
    (as some editors write) is ignored.

    Raises:
        SuiteFormatError: when the file as a whole cannot be read (missing, a
            folder, binary); problems of single lines are returned, not raised.
    """
    data = _read_bytes(path).removeprefix(b"\xef\xbb\xbf")
    cases: list[tuple[int, Case]] = []
    problems: list[SuiteFormatError] = []
    seen: dict[str, int] = {}
    for number, raw_line in enumerate(data.split(b"\n"), start=1):
        text = _decode_line(path, number, raw_line)
        if isinstance(text, SuiteFormatError):
            problems.append(text)
            continue
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        found = _check_case(path, number, stripped, seen)
        if isinstance(found, SuiteFormatError):
            problems.append(found)
        else:
            cases.append((number, found))
    if not cases and not problems:
        reason = "the file is empty" if not data.strip() else "the suite has no cases"
        problems.append(SuiteFormatError(path, None, reason + ": add one JSON object per line"))
    return SuiteScan(path, tuple(cases), tuple(problems))


def load_jsonl_suite(path: Path) -> list[Case]:
    """Load and validate a JSONL suite file.

    Raises:
        SuiteFormatError: naming file, line and reason of the first problem; the
            others are in its ``more`` attribute.
    """
    scan = scan_jsonl_suite(path)
    if scan.problems:
        first, *rest = scan.problems
        raise SuiteFormatError(first.path, first.line, first.reason, tuple(rest))
    return [case for _, case in scan.cases]
