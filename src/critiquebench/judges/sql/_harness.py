"""Trusted code the sql judge runs in the sandbox: build the fixture, run the query, return rows.

The sandbox worker executes this source as an attempt's code and calls
:func:`sql_check` once per check with one plain-data argument (the DuckDB location,
the fixture's DDL and INSERTs, the candidate's query and the limits). The query is
only ever data here: it is handed to DuckDB on a connection that cannot reach files,
extensions or Python objects, and whose configuration is locked before any text of
the case or the candidate runs. The expected rows never enter the sandbox; the
result comes back as plain values (dates as text, decimals as floats) and the parent
compares.

Stdlib and DuckDB only; this file must not import critiquebench.
"""

from __future__ import annotations

import datetime
import decimal
import sys
import threading
import time
import uuid
from typing import Any

_CONFIG = {
    "enable_external_access": False,  # no files, no ATTACH, COPY, INSTALL or LOAD
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "python_enable_replacements": False,  # a table name never resolves to a Python object
    "threads": 1,
    "memory_limit": "256MB",
    "lock_configuration": True,  # last: SET cannot undo any of the above
}
_MAX_CELL_TEXT = 500
_STOPPED_SHARE = 0.8


def sql_check(job: dict[str, Any]) -> list[Any]:
    """One check: ``[tag, ...]`` where tag is ``rows`` (columns, rows, truncated),
    ``error`` (the query failed), ``timeout`` (it used its CPU time limit),
    ``not_a_query``, ``fixture`` (the case's own schema or data failed) or
    ``unavailable`` (DuckDB could not start)."""
    # The worker's CPU timer for this check starts just before this call.
    started = time.process_time()
    try:
        duckdb = _import_duckdb(str(job["path"]))
        connection = duckdb.connect(":memory:", config=_CONFIG)
    except Exception as exc:
        return ["unavailable", _describe(exc)]
    try:
        return _run(duckdb, connection, job, started)
    finally:
        connection.close()


def _import_duckdb(path: str) -> Any:
    # The worker runs with -I -S: site-packages are not on the path, only DuckDB's
    # own folder is visible there (bound read-only by the judge).
    if path and path not in sys.path:
        sys.path.append(path)
    import duckdb

    return duckdb


def _run(duckdb: Any, connection: Any, job: dict[str, Any], started: float) -> list[Any]:
    query = str(job["query"])
    problem = _not_a_query(duckdb, connection, query)
    if problem:
        return ["not_a_query", problem]
    for part in ("schema", "data"):
        text = str(job.get(part) or "")
        if text.strip():
            try:
                connection.execute(text)
            except Exception as exc:
                return ["fixture", f"{part}: {_describe(exc)}"]
    # DuckDB runs the query in C++ where the worker's signal timers cannot reach it;
    # interrupting the connection from a thread stops it cleanly. The thread counts
    # CPU time, not wall time, so a loaded host cannot make a query time out. A function
    # that never looks at the interrupt is stopped by the worker's watchdog instead.
    finished, interrupted = threading.Event(), threading.Event()
    limit = float(job["timeout_s"])
    watcher = threading.Thread(
        target=_interrupt_after, args=(connection, limit, finished, interrupted), daemon=True
    )
    watcher.start()
    try:
        cursor = connection.execute(query)
        columns = [str(column[0]) for column in cursor.description or []]
        rows = cursor.fetchmany(int(job["max_rows"]) + 1)
    except Exception as exc:
        # DuckDB reports an interrupt as InterruptException or as a RuntimeError, and
        # the worker's CPU timer interrupts it too (DuckDB checks for signals; the
        # timer's ticks count a little ahead of this clock): a query that failed once
        # the check had used nearly all its CPU limit was stopped by the limit.
        spent = time.process_time() - started
        stopped = interrupted.is_set() or spent >= _STOPPED_SHARE * limit
        if stopped or isinstance(exc, duckdb.InterruptException):
            return ["timeout", f"the query exceeded its time limit of {limit:g} CPU-seconds"]
        return ["error", _describe(exc)]
    finally:
        finished.set()
    return ["rows", columns, *_bounded(rows, int(job["max_rows"]), int(job["max_chars"]))]


def _interrupt_after(
    connection: Any, limit: float, finished: threading.Event, interrupted: threading.Event
) -> None:
    """Interrupt ``connection`` once this process has used ``limit`` CPU-seconds more."""
    start = time.process_time()
    while not finished.wait(0.01):
        if time.process_time() - start >= limit:
            interrupted.set()
            connection.interrupt()
            return


def _not_a_query(duckdb: Any, connection: Any, query: str) -> str:
    """Why the text is not one SELECT (or WITH ... SELECT), or "" when it is one."""
    try:
        statements = connection.extract_statements(query)
    except Exception:
        return ""  # a syntax error: the query errs, reported per check
    if not statements:
        return "the answer holds no SQL statement"
    if len(statements) > 1:
        return f"the answer holds {len(statements)} statements; give exactly one SELECT query"
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        name = str(getattr(kind, "name", kind))
        return f"the answer is a {name} statement; give one SELECT query (WITH ... allowed)"
    return ""


def _bounded(rows: list[tuple[Any, ...]], max_rows: int, max_chars: int) -> list[Any]:
    """``[rows, truncated]``: at most ``max_rows`` rows and about ``max_chars`` of text."""
    kept: list[list[Any]] = []
    spent = 0
    for row in rows[:max_rows]:
        plain = [_plain(value) for value in row]
        spent += len(repr(plain))
        if spent > max_chars:
            return [kept, True]
        kept.append(plain)
    return [kept, len(rows) > max_rows]


def _plain(value: Any) -> Any:
    """A DuckDB value as plain data the parent can compare with a suite's JSON."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value[:_MAX_CELL_TEXT]
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, datetime.date | datetime.time | datetime.timedelta | uuid.UUID):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)[:_MAX_CELL_TEXT]
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    return str(value)[:_MAX_CELL_TEXT]


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]
