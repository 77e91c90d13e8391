"""Detect hollow code: functions that only look implemented, and modules of bare imports."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Final

from critiquebench.runtime.ast_turns import parse

# A decorated stub is a declaration, not an unfinished implementation.
_STUB_DECORATORS: Final = frozenset(
    {
        "abstractmethod",
        "abstractproperty",
        "abstractclassmethod",
        "abstractstaticmethod",
        "overload",
    }
)
_PLACEHOLDER: Final = re.compile(
    r"\b(?:TODO|FIXME)\b|implement(?:ation)?\s+(?:goes\s+)?here|your\s+code\s+(?:goes\s+)?here",
    re.IGNORECASE,
)
_Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class HollowFinding:
    """One hollow spot: the function (qualified, or ``<module>``), its line, and why."""

    function: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.function}: {self.reason}"


def find_hollow(code: str) -> list[HollowFinding]:
    """Every hollow function in ``code``, plus the module itself if it is only imports.

    Code that does not parse yields no findings: the judge already reports the syntax
    error, and counting it twice would inflate the defect count.
    """
    try:
        tree = parse(code)
    except (SyntaxError, ValueError):  # ValueError: source with NUL bytes
        return []
    comments = _placeholder_comment_lines(code)
    findings: list[HollowFinding] = []
    _walk(tree, "", None, comments, findings)
    body = _body(tree)
    if body and all(isinstance(stmt, ast.Import | ast.ImportFrom) for stmt in body):
        findings.append(HollowFinding("<module>", body[0].lineno, "imports and no logic"))
    return findings


def _walk(
    node: ast.AST,
    prefix: str,
    owner: ast.ClassDef | None,
    comments: frozenset[int],
    out: list[HollowFinding],
) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef):
            _walk(child, f"{prefix}{child.name}.", child, comments, out)
        elif isinstance(child, _Function):
            reason = None if _exempt(child, owner) else _hollow_reason(child, comments)
            if reason is not None:
                out.append(HollowFinding(prefix + child.name, child.lineno, reason))
            # Functions nested in a function belong to no class.
            _walk(child, f"{prefix}{child.name}.", None, comments, out)
        else:
            _walk(child, prefix, owner, comments, out)


def _exempt(function: _Function, owner: ast.ClassDef | None) -> bool:
    if any(_terminal_name(d) in _STUB_DECORATORS for d in function.decorator_list):
        return True
    if owner is None:
        return False
    bases = {_terminal_name(base) for base in owner.bases}
    if "Protocol" in bases:  # protocol members are interface declarations
        return True
    # `class MyError(Exception): def __init__(self): pass` is an idiom, not a stub.
    is_exception = any(
        name.endswith(("Exception", "Error", "Warning")) for name in bases if name is not None
    )
    return is_exception and function.name == "__init__"


def _hollow_reason(function: _Function, comments: frozenset[int]) -> str | None:
    body = _body(function)
    end = function.end_lineno or function.lineno
    marked = any(function.lineno <= line <= end for line in comments)
    if not body:
        # `def f(): "your code here"` parses as a docstring, yet it is a placeholder.
        docstring = ast.get_docstring(function, clean=False) or ""
        return "placeholder string" if _PLACEHOLDER.search(docstring) else "only a docstring"
    if len(body) != 1:
        return None
    stmt = body[0]
    reason = _trivial_statement(stmt)
    if reason is not None:
        return f"{reason} (with a placeholder comment)" if marked else reason
    # `# TODO` followed by `return 0` is a placeholder; a bare `return 0` may be real code.
    if marked and isinstance(stmt, ast.Return) and _is_literal(stmt.value):
        return "placeholder comment and a constant return"
    return None


def _trivial_statement(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Pass):
        return "body is only pass"
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        if stmt.value.value is Ellipsis:
            return "body is only ..."
        if isinstance(stmt.value.value, str) and _PLACEHOLDER.search(stmt.value.value):
            return "placeholder string"
    if isinstance(stmt, ast.Return):
        if stmt.value is None:
            return "bare return"
        if isinstance(stmt.value, ast.Constant) and stmt.value.value is None:
            return "returns None only"
    if isinstance(stmt, ast.Raise) and stmt.exc is not None:
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        if _terminal_name(exc) == "NotImplementedError":
            return "raises NotImplementedError"
    return None


def _is_literal(node: ast.expr | None) -> bool:
    """``0``, ``""``, ``[]``, ``{}``, ``(0, 0)``: a value that ignores every input."""
    if node is None:
        return False
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _body(node: ast.Module | _Function) -> list[ast.stmt]:
    """The statements after the docstring, if there is one."""
    return node.body[1:] if ast.get_docstring(node, clean=False) is not None else node.body


def _terminal_name(node: ast.expr) -> str | None:
    """``abc.abstractmethod`` -> ``abstractmethod``; ``Protocol[T]`` -> ``Protocol``."""
    if isinstance(node, ast.Subscript | ast.Call):
        node = node.value if isinstance(node, ast.Subscript) else node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _placeholder_comment_lines(code: str) -> frozenset[int]:
    """Lines holding a TODO/FIXME/"your code here" comment (comments are not in the AST)."""
    lines: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.COMMENT and _PLACEHOLDER.search(token.string):
                lines.add(token.start[0])
    except (tokenize.TokenError, SyntaxError):
        pass  # comments are a hint; the AST checks still stand without them
    return frozenset(lines)
