"""Errors as one line: what went wrong, where, and what to do."""

from __future__ import annotations

_HINTS = ("Candidate bindings", "Did you mean")
"""Lines of a DuckDB message that say how to fix the query: kept on the one line."""

_DAMAGED = ("parquet", "magic bytes", "arrow")


def first_line_and_hints(error: BaseException) -> str:
    """The first line of ``error``'s message, and its hint lines (DuckDB's "Candidate
    bindings: ..."), on one line; the exception's name when it has no message."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    hints = [line for line in lines[1:] if line.startswith(_HINTS)]
    return " ".join([lines[0], *hints])


def one_line(error: BaseException, debug_variable: str) -> str:
    """An unexpected error as one line: its message, and for a file that cannot be read
    as Parquet, that it is damaged and how to redo it."""
    message = first_line_and_hints(error)
    module = type(error).__module__
    if module.startswith(("duckdb", "_duckdb", "pyarrow")) and any(
        word in message.lower() for word in _DAMAGED
    ):
        return (
            f"{message} (a damaged or foreign file in the run's folder: move it out; a "
            "unit whose file is moved out runs again on `critiquebench resume RUN`)"
        )
    return f"{type(error).__name__}: {message} (set {debug_variable}=1 to see the traceback)"
