"""Child-process side of the Python judge. Runs as a script, stdlib only.

Reads one JSON payload from stdin, applies its own resource limits, runs the
candidate and then each check separately, and writes one JSON object per line to
the results channel (the stdout the parent gave it). The candidate's own prints
go to /dev/null so they cannot be mistaken for results or flood the parent.

This file must not import critiquebench: it runs with ``python -I -S``.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import resource
import signal
import sys
from collections.abc import Callable
from typing import Any

_MAX_REPR = 300


class _CheckTimeout(BaseException):
    # BaseException so a candidate's bare ``except Exception`` cannot swallow it.
    pass


def _short(value: object) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # a candidate object with a broken __repr__
        text = f"<unrepresentable: {type(exc).__name__}>"
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


def _apply_limits(limits: dict[str, int | None]) -> None:
    pairs = (
        (resource.RLIMIT_CPU, limits.get("cpu_s")),
        (resource.RLIMIT_AS, limits.get("memory_bytes")),
        (resource.RLIMIT_FSIZE, limits.get("file_bytes")),
        (resource.RLIMIT_NPROC, limits.get("processes")),
        (resource.RLIMIT_CORE, 0),
    )
    for kind, value in pairs:
        if value is None:
            continue
        # A limit the OS refuses leaves the parent's wall clock as the fence.
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(kind, (value, value))


def _on_alarm(signum: int, frame: object) -> None:
    raise _CheckTimeout()


_COMPARATORS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _comparison(statement: ast.Assert) -> tuple[ast.expr, ast.cmpop, ast.expr] | None:
    """(left, op, right) when ``statement`` is ``assert <a> <op> <b>``, else None."""
    test = statement.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _COMPARATORS:
        return test.left, test.ops[0], test.comparators[0]
    return None


def _eval(node: ast.expr, namespace: dict[str, Any]) -> Any:
    code = compile(ast.Expression(body=node), "<check>", "eval")
    return eval(code, namespace)


def _run_check(source: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Run one check; return the fields of its result line."""
    module = ast.parse(source)
    statement = module.body[0] if len(module.body) == 1 else None
    parts = _comparison(statement) if isinstance(statement, ast.Assert) else None
    if isinstance(statement, ast.Assert) and parts is not None:
        left_node, op, right_node = parts
        actual = _eval(left_node, namespace)
        expected = _eval(right_node, namespace)
        if _COMPARATORS[type(op)](actual, expected):
            return {"status": "pass"}
        message = ""
        if statement.msg is not None:
            message = str(_eval(statement.msg, namespace))
        return {
            "status": "fail",
            "kind": "assertion",
            "expected": _short(expected),
            "actual": _short(actual),
            "message": message or "assertion failed",
        }
    exec(compile(module, "<check>", "exec"), namespace)
    return {"status": "pass"}


def main() -> None:
    payload = json.loads(sys.stdin.read())
    # Keep the results channel private, then point the candidate's stdio at /dev/null.
    results = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)

    def emit(**fields: Any) -> None:
        results.write(json.dumps(fields) + "\n")

    _apply_limits(payload.get("limits", {}))
    signal.signal(signal.SIGALRM, _on_alarm)
    per_check = float(payload.get("check_timeout_s", 3.0))
    namespace: dict[str, Any] = {"__name__": "__candidate__"}

    try:
        code = compile(payload["code"], "<candidate>", "exec")
    except SyntaxError as exc:
        emit(event="fatal", kind="syntax", line=exc.lineno or 0, message=str(exc.msg))
        emit(event="done")
        return
    try:
        signal.setitimer(signal.ITIMER_REAL, per_check)
        exec(code, namespace)
        signal.setitimer(signal.ITIMER_REAL, 0)
    except _CheckTimeout:
        emit(event="fatal", kind="import", line=0, message="defining the code timed out")
        emit(event="done")
        return
    except BaseException as exc:
        signal.setitimer(signal.ITIMER_REAL, 0)
        emit(event="fatal", kind="import", line=_candidate_line(exc), message=_describe(exc))
        emit(event="done")
        return
    entry_point = payload["entry_point"]
    if not callable(namespace.get(entry_point)):
        emit(
            event="fatal",
            kind="import",
            line=0,
            message=f"the code does not define a function named {entry_point!r}",
        )
        emit(event="done")
        return
    try:
        exec(compile(payload.get("setup", ""), "<setup>", "exec"), namespace)
    except BaseException as exc:
        emit(event="fatal", kind="import", line=0, message="test setup failed: " + _describe(exc))
        emit(event="done")
        return
    namespace["candidate"] = namespace[entry_point]

    for index, source in enumerate(payload["checks"]):
        emit(event="start", check=index)
        try:
            signal.setitimer(signal.ITIMER_REAL, per_check)
            outcome = _run_check(source, namespace)
        except _CheckTimeout:
            outcome = {
                "status": "fail",
                "kind": "timeout",
                "message": f"check exceeded {per_check:.1f}s",
            }
        except AssertionError as exc:
            outcome = {
                "status": "fail",
                "kind": "assertion",
                "message": str(exc) or "assertion failed",
            }
        except BaseException as exc:
            outcome = {"status": "fail", "kind": "error", "message": _describe(exc)}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        emit(event="check", check=index, **outcome)
    emit(event="done")


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


def _candidate_line(exc: BaseException) -> int:
    tb = exc.__traceback__
    line = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<candidate>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


if __name__ == "__main__":
    main()
