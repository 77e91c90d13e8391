"""Parsing and compiling Python trees from several threads at once, safely.

CPython 3.11 keeps one recursion counter per interpreter while it converts a parsed
tree to Python objects and back; two threads doing so at once can trip it and get
``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905,
fixed in 3.13). In a run, every worker thread judges and plans checks, so the error
surfaced as a judge infrastructure error on 1 of 984 units at 4 workers. The
conversions are short; they take turns behind one lock.

A text nested deeper than CPython can build (about 3,000 levels of operators, or a few
thousand unary operators or lambdas in a row) makes ``ast.parse`` raise RecursionError or
MemoryError rather than SyntaxError; :func:`parse` raises :class:`TooComplex` instead, a
SyntaxError, so every caller that treats a text that does not parse as a defect of the
text does so here too, and the lock is released as for any other error.
"""

from __future__ import annotations

import ast
import threading
from types import CodeType

_TURNS = threading.Lock()


class TooComplex(SyntaxError):
    """The text is nested too deeply for CPython's parser (a defect of the text)."""


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``, one thread at a time; :class:`TooComplex` if too deep."""
    with _TURNS:
        try:
            return ast.parse(source)
        except (RecursionError, MemoryError) as exc:
            # Raised before any tree is returned, by a check of the parser's own depth
            # (quickly: 0.3 s for 100,000 terms), so the interpreter is fine afterwards.
            raise TooComplex(f"too deeply nested to parse ({type(exc).__name__})") from None


def parse_expression(source: str) -> ast.Expression:
    """``ast.parse(source, mode="eval")``, one thread at a time."""
    with _TURNS:
        return ast.parse(source, mode="eval")


def compile_expression(tree: ast.Expression, filename: str) -> CodeType:
    """``compile(tree, filename, "eval")``, one thread at a time."""
    with _TURNS:
        return compile(tree, filename, "eval")
