"""Reading and validating JSONL suite files.

One JSON object per line::

    {"id": "basic/001_add_two",
     "prompt": "Write a Python function `add_two(a: int, b: int) -> int` ...",
     "entry_point": "add_two",
     "feedback_tests": ["assert add_two(2, 3) == 5"],
     "heldout_tests": ["assert add_two(-1, 1) == 0"],
     "setup": "",                      # optional: test-side code run first
     "reference_solution": "def ...",  # optional: a known-good answer
     "tags": ["arithmetic", "easy"]}   # optional

Blank lines and lines starting with ``#`` are ignored. Every problem is reported
with the file, the line number and what to change.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from critiquebench.suites._case import Case, Check, CheckOrigin


class SuiteFormatError(ValueError):
    """A suite file that cannot be used; the message names file, line and fix."""

    def __init__(self, path: Path, line: int, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}")


class _SuiteLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    entry_point: str = Field(min_length=1)
    feedback_tests: list[str]
    heldout_tests: list[str]
    setup: str = ""
    reference_solution: str = ""
    tags: list[str] = []


def _describe_validation_error(error: ValidationError) -> str:
    parts = []
    for problem in error.errors():
        field = ".".join(str(item) for item in problem["loc"]) or "<line>"
        parts.append(f"field '{field}': {problem['msg']}")
    return "; ".join(parts)


def _check_statement(source: str, field: str, index: int) -> str | None:
    """Return a problem description, or None when ``source`` is one statement."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return f"{field}[{index}] is not valid Python ({exc.msg}): {source!r}"
    if len(tree.body) != 1:
        return f"{field}[{index}] must be exactly one statement, found {len(tree.body)}"
    return None


def _parse_line(raw: dict[str, Any]) -> tuple[Case | None, str | None]:
    try:
        line = _SuiteLine.model_validate(raw)
    except ValidationError as exc:
        return None, _describe_validation_error(exc)
    if not line.entry_point.isidentifier():
        return None, f"field 'entry_point': {line.entry_point!r} is not a Python identifier"
    if not line.feedback_tests and not line.heldout_tests:
        return None, "no tests: give at least one entry in 'feedback_tests' or 'heldout_tests'"
    checks: list[Check] = []
    tests: list[tuple[str, list[str], CheckOrigin]] = [
        ("feedback_tests", line.feedback_tests, "feedback"),
        ("heldout_tests", line.heldout_tests, "heldout"),
    ]
    for field, sources, origin in tests:
        for index, source in enumerate(sources):
            problem = _check_statement(source, field, index)
            if problem:
                return None, problem
            checks.append(Check(source=source, origin=origin, line=index + 1))
    case = Case(
        id=line.id,
        prompt=line.prompt,
        entry_point=line.entry_point,
        setup=line.setup,
        checks=tuple(checks),
        reference_solution=line.reference_solution,
        tags=tuple(line.tags),
    )
    return case, None


def load_jsonl_suite(path: Path) -> list[Case]:
    """Load and validate a JSONL suite file.

    Raises:
        SuiteFormatError: on the first malformed line, naming file, line and reason.
        FileNotFoundError: when ``path`` does not exist.
    """
    cases: list[Case] = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            stripped = text.strip()
            if not stripped or stripped.startswith("#"):
                continue
            try:
                raw = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise SuiteFormatError(
                    path, number, f"not valid JSON ({exc.msg} at column {exc.colno})"
                ) from exc
            if not isinstance(raw, dict):
                raise SuiteFormatError(path, number, "each line must be a JSON object {...}")
            case, problem = _parse_line(raw)
            if case is None:
                raise SuiteFormatError(path, number, problem or "invalid case")
            if case.id in seen:
                raise SuiteFormatError(
                    path, number, f"duplicate id {case.id!r} (first used on line {seen[case.id]})"
                )
            seen[case.id] = number
            cases.append(case)
    if not cases:
        raise SuiteFormatError(path, 0, "the suite has no cases")
    return cases
