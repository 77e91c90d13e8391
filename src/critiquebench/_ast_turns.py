"""Parsing and compiling Python trees from several threads at once, safely.

CPython 3.11 keeps one recursion counter per interpreter while it converts a parsed
tree to Python objects and back; two threads doing so at once can trip it and get
``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905,
fixed in 3.13). In a run, every worker thread judges and plans checks, so the error
surfaced as a judge infrastructure error on 1 of 984 units at 4 workers. The
conversions are short; they take turns behind one lock.
"""

from __future__ import annotations

import ast
import threading
from types import CodeType

_TURNS = threading.Lock()


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``, one thread at a time."""
    with _TURNS:
        return ast.parse(source)


def compile_expression(tree: ast.Expression, filename: str) -> CodeType:
    """``compile(tree, filename, "eval")``, one thread at a time."""
    with _TURNS:
        return compile(tree, filename, "eval")
