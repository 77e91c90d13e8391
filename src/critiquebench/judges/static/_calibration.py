"""Findings that are not the answer's defects: the task's own lines, and invariants
mypy cannot prove.

Both rules were calibrated on the reference solutions of the bundled suites (every one
must score 0 findings; see ``judges/static/_checker.py`` for the rule set itself):

- **The task's own findings.** A prompt that is code (HumanEval's) is checked like an
  answer; a finding of the answer is the task's when the prompt's text has the same
  finding (kind, code, message) on a line of the same text, each prompt finding
  excusing at most one answer finding. HumanEval/9's prompt imports ``Tuple`` and never
  uses it: the answer that keeps the prompt's line is not charged for it. An answer
  cannot hide anything this way: only a finding the prompt itself produces is excused,
  as many times as the prompt produces it, on a line that reads exactly as the prompt's.
- **Invariants mypy cannot prove.** A type mismatch that disappears once ``None`` is
  taken out of the value's type and a fixed-length tuple of one element type is read
  as a tuple of that type (``tuple[float, ...] | None`` returned as
  ``tuple[float, float]``, HumanEval/20) says the code relies on an invariant (the
  value is set, the tuple has two items) that mypy cannot see; whether it holds is
  what the tests measure. So is "Missing return statement" for a function that does
  return a value on some path (a loop that returns from inside, HumanEval/12 and /24):
  a path that really falls through returns None, which the tests see. A function
  declared to return a value that never returns one is still a finding. Every other
  mismatch stands.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable

from critiquebench.judges._failure import Failure
from critiquebench.judges.static._tree import child_nodes

_MOST_TYPE_TEXT = 600
"""Longer type texts are never excused (and never parsed): bounded work per finding."""

_MISMATCH = (
    re.compile(r'^Incompatible return value type \(got "(?P<got>.+)", expected "(?P<want>.+)"\)'),
    re.compile(
        r'^Incompatible types in assignment \(expression has type "(?P<got>.+)", '
        r'variable has type "(?P<want>.+)"\)'
    ),
    re.compile(
        r'^Argument \d+ to ".+" has incompatible type "(?P<got>.+)"; expected "(?P<want>.+)"'
    ),
)
_MISMATCH_CODES = frozenset({"return-value", "assignment", "arg-type"})


def _line(text_lines: list[str], line: int) -> str:
    return text_lines[line - 1].rstrip() if 0 < line <= len(text_lines) else ""


def _key(finding: Failure, text_lines: list[str]) -> tuple[str, str, str, str]:
    return (finding.kind, finding.code, finding.message, _line(text_lines, finding.line))


def without_task_findings(
    code: str, findings: Iterable[Failure], prompt: str, prompt_findings: Iterable[Failure]
) -> tuple[Failure, ...]:
    """``findings`` of the answer ``code`` less those its ``prompt`` text has too."""
    prompt_lines = prompt.splitlines()
    owned = Counter(_key(finding, prompt_lines) for finding in prompt_findings)
    code_lines = code.splitlines()
    kept: list[Failure] = []
    for finding in findings:
        key = _key(finding, code_lines)
        if owned[key] > 0 and key[3]:
            owned[key] -= 1
            continue
        kept.append(finding)
    return tuple(kept)


def returning_functions(tree: ast.Module) -> frozenset[int]:
    """The lines (``def`` and decorators) of every function that returns a value
    somewhere in its own body (not in a function nested in it)."""
    lines: set[int] = set()
    # (node, nearest enclosing function); an explicit stack, so no recursion limit.
    stack: list[tuple[ast.AST, ast.FunctionDef | ast.AsyncFunctionDef | None]] = [(tree, None)]
    while stack:
        node, function = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None and function is not None:
            lines.add(function.lineno)
            lines.update(decorator.lineno for decorator in function.decorator_list)
        inner = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
        if isinstance(node, ast.Lambda):
            inner = None  # a lambda's value is not its enclosing function's return
        stack.extend((child, inner) for child in child_nodes(node))
    return frozenset(lines)


def unproven_invariant(finding: Failure, returning: frozenset[int] = frozenset()) -> bool:
    """True for a mypy finding that only says an invariant (not None, tuple length,
    a loop returns before it ends) is unproven: see the module's docstring.
    ``returning`` is :func:`returning_functions` of the answer."""
    if finding.kind != "types":
        return False
    if finding.code == "return" and finding.message.startswith("Missing return statement"):
        return finding.line in returning
    if finding.code not in _MISMATCH_CODES:
        return False
    for pattern in _MISMATCH:
        match = pattern.match(finding.message)
        if match is None:
            continue
        got, want = match["got"], match["want"]
        if max(len(got), len(want)) > _MOST_TYPE_TEXT:
            return False
        return _members(got) <= _members(want)
    return False


def _members(text: str) -> frozenset[str]:
    """The members of a union type's text, ``None`` dropped, tuples read loosely."""
    parts = [_loose(part) for part in _split_top(text, " | ")]
    kept = frozenset(part for part in parts if part != "None")
    return kept or frozenset({"None"})


def _loose(text: str) -> str:
    """``tuple[X, X]`` (any length, one element type) as ``tuple[X, ...]``."""
    if not (text.startswith("tuple[") and text.endswith("]")):
        return text
    items = [item for item in _split_top(text[6:-1], ", ") if item != "..."]
    if items and all(item == items[0] for item in items):
        return f"tuple[{items[0]}, ...]"
    return text


def _split_top(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside brackets (one pass over the text)."""
    parts: list[str] = []
    depth = start = index = 0
    while index < len(text):
        char = text[index]
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif depth == 0 and text.startswith(separator, index):
            parts.append(text[start:index])
            index += len(separator)
            start = index
            continue
        index += 1
    parts.append(text[start:])
    return parts
