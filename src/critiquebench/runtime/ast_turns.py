"""Parsing and compiling Python trees from several threads at once, safely.

CPython 3.11 keeps one recursion counter per interpreter while it converts a parsed
tree to Python objects and back; two threads doing so at once can trip it and get
``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905,
fixed in 3.13). In a run, every worker thread judges and plans checks, so the error
surfaced as a judge infrastructure error on 1 of 984 units at 4 workers. The
conversions are short; they take turns behind one lock.

The lock orders only this project's threads. Code of others in the same process
converts trees too (on 3.11, ``traceback`` parses a source line to place its ``^^^``
marks; a library's thread may log an exception while a suite is read), and a CI run
failed that way: ``critiquebench run`` stopped on the mismatch while reading its
suite. A conversion is a pure function of its input, so one that trips the counter is
simply made again (:data:`ATTEMPTS` times at most).

A text nested deeper than CPython can build (about 3,000 levels of operators, or a few
thousand unary operators or lambdas in a row) makes ``ast.parse`` raise RecursionError or
MemoryError rather than SyntaxError; :func:`parse` raises :class:`TooComplex` instead, a
SyntaxError, so every caller that treats a text that does not parse as a defect of the
text does so here too, and the lock is released as for any other error.
"""

from __future__ import annotations

import ast
import threading
import time
from collections.abc import Callable
from types import CodeType
from typing import TypeVar

_TURNS = threading.Lock()
_Converted = TypeVar("_Converted")

ATTEMPTS = 200
"""Conversions tried before a mismatch is raised: each trip needs another thread
converting a tree at that moment. Twenty in a row did happen, beside two threads that
parsed without a pause under a busy collector (1 fresh-clone suite run in 4), so the
bound is far above that, and each retry first yields the interpreter for a moment."""


class TooComplex(SyntaxError):
    """The text is nested too deeply for CPython's parser (a defect of the text)."""


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``, one thread at a time; :class:`TooComplex` if too deep."""
    try:
        return _in_turn(lambda: ast.parse(source))
    except (RecursionError, MemoryError) as exc:
        # Raised before any tree is returned, by a check of the parser's own depth
        # (quickly: 0.3 s for 100,000 terms), so the interpreter is fine afterwards.
        raise TooComplex(f"too deeply nested to parse ({type(exc).__name__})") from None


def parse_expression(source: str) -> ast.Expression:
    """``ast.parse(source, mode="eval")``, one thread at a time."""
    return _in_turn(lambda: ast.parse(source, mode="eval"))


def compile_expression(tree: ast.Expression, filename: str) -> CodeType:
    """``compile(tree, filename, "eval")``, one thread at a time."""
    return _in_turn(lambda: compile(tree, filename, "eval"))


def _in_turn(convert: Callable[[], _Converted]) -> _Converted:
    """``convert()`` behind the lock, made again when a thread outside it tripped the
    counter (CPython's message says "recursion depth mismatch")."""
    with _TURNS:
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return convert()
            except SystemError as error:
                if "recursion depth mismatch" not in str(error) or attempt == ATTEMPTS:
                    raise
            time.sleep(0.0001)  # the other thread's conversion goes on, likely to its end
    raise AssertionError("unreachable: the last attempt returns or raises")
