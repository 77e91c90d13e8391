"""Child-process side of the Python judge. Runs as a script, stdlib only.

Reads one JSON payload from stdin, fences itself in (resource limits, a private
network namespace and an unprivileged user where the OS allows), runs the
candidate and then each check separately, and writes one JSON object per line to
the results channel: a private duplicate of the stdout pipe the parent gave it.
The candidate's own stdin/stdout/stderr are /dev/null, so its prints can neither
forge results nor flood the parent. Every result line carries the parent's nonce.

This file must not import critiquebench: it runs with ``python -I -S``.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import functools
import json
import os
import resource
import signal
import sys
from collections.abc import Callable
from typing import Any

_MAX_REPR = 300
_CLONE_NEWNET = 0x40000000
_PR_SET_PDEATHSIG = 1
_NOBODY = 65534

# Imported before privileges are dropped: after the drop the interpreter's own
# library may be unreadable (e.g. a Python installed under root's home).
_PRELOAD = (
    "abc",
    "array",
    "bisect",
    "cmath",
    "collections",
    "collections.abc",
    "copy",
    "dataclasses",
    "datetime",
    "decimal",
    "enum",
    "fractions",
    "functools",
    "hashlib",
    "heapq",
    "itertools",
    "json",
    "math",
    "numbers",
    "operator",
    "random",
    "re",
    "statistics",
    "string",
    "struct",
    "textwrap",
    "time",
    "typing",
    "unicodedata",
)

Emit = Callable[..., None]


class _CheckTimeout(BaseException):
    # BaseException so a candidate's bare ``except Exception`` cannot swallow it.
    pass


def _short(value: object) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # a candidate object with a broken __repr__
        text = f"<unrepresentable: {type(exc).__name__}>"
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


def _describe(exc: BaseException) -> str:
    return _short_text(f"{type(exc).__name__}: {exc}")


def _short_text(text: str) -> str:
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


def _isolate(options: dict[str, Any]) -> dict[str, Any]:
    """Apply the OS-level fences; return what was achieved, for the parent to record."""
    achieved: dict[str, Any] = {"network": False, "user": "unchanged", "notes": []}
    for name in _PRELOAD:
        with contextlib.suppress(ImportError):
            __import__(name)
    libc = ctypes.CDLL(None, use_errno=True)
    # Die with the harness parent: a candidate cannot outlive the judge that ran it.
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if options.get("network", True):
        if libc.unshare(_CLONE_NEWNET) == 0:
            achieved["network"] = True
        else:
            achieved["notes"].append(
                f"network isolation unavailable ({os.strerror(ctypes.get_errno())})"
            )
    if options.get("drop_privileges", True) and os.geteuid() == 0:
        try:
            os.chown(".", _NOBODY, _NOBODY)  # the fresh temp dir stays writable
            os.setgroups([])
            os.setgid(_NOBODY)
            os.setuid(_NOBODY)
            achieved["user"] = "nobody"
        except OSError as exc:
            achieved["notes"].append(f"could not drop root privileges ({exc})")
    return achieved


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


def _eval(node: ast.expr, namespace: dict[str, Any]) -> Any:
    return eval(compile(ast.Expression(body=node), "<check>", "eval"), namespace)


def _run_check(source: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Run one check; a single comparison is split so expected/actual can be reported."""
    module = ast.parse(source)
    statement = module.body[0] if len(module.body) == 1 else None
    test = statement.test if isinstance(statement, ast.Assert) else None
    if (
        isinstance(statement, ast.Assert)
        and isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and type(test.ops[0]) in _COMPARATORS
    ):
        actual = _eval(test.left, namespace)
        expected = _eval(test.comparators[0], namespace)
        if _COMPARATORS[type(test.ops[0])](actual, expected):
            return {"status": "pass"}
        message = str(_eval(statement.msg, namespace)) if statement.msg is not None else ""
        return {
            "status": "fail",
            "kind": "assertion",
            "expected": _short(expected),
            "actual": _short(actual),
            "message": message or "assertion failed",
        }
    exec(compile(module, "<check>", "exec"), namespace)
    return {"status": "pass"}


def _guarded(per_check: float, action: Callable[[], dict[str, Any] | None]) -> dict[str, Any]:
    """Run ``action`` under the per-check timer, mapping exceptions to result fields.

    ``action`` returns its result fields, or None for a plain pass.
    """
    try:
        signal.setitimer(signal.ITIMER_REAL, per_check)
        return action() or {"status": "pass"}
    except _CheckTimeout:
        return {"status": "fail", "kind": "timeout", "message": f"exceeded {per_check:.1f}s"}
    except AssertionError as exc:
        return {"status": "fail", "kind": "assertion", "message": str(exc) or "assertion failed"}
    except BaseException as exc:
        return {"status": "fail", "kind": "error", "message": _describe(exc), "exc": exc}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _candidate_line(exc: BaseException | None) -> int:
    tb = exc.__traceback__ if exc is not None else None
    line = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<candidate>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _exec(code: Any, namespace: dict[str, Any]) -> None:
    exec(code, namespace)


def _load(payload: dict[str, Any], namespace: dict[str, Any], emit: Emit) -> bool:
    """Define the candidate and the test setup; emit a fatal event and return False on failure."""
    per_check = float(payload.get("check_timeout_s", 3.0))
    try:
        code = compile(payload["code"], "<candidate>", "exec")
    except SyntaxError as exc:
        emit(event="fatal", kind="syntax", line=exc.lineno or 0, message=str(exc.msg))
        return False
    defined = _guarded(per_check, lambda: _exec(code, namespace))
    if defined["status"] != "pass":
        line = _candidate_line(defined.get("exc"))
        emit(event="fatal", kind="import", line=line, message=defined["message"])
        return False
    entry_point = payload["entry_point"]
    if not callable(namespace.get(entry_point)):
        message = f"the code does not define a function named {entry_point!r}"
        emit(event="fatal", kind="import", line=0, message=message)
        return False
    setup = compile(payload.get("setup", ""), "<setup>", "exec")
    prepared = _guarded(per_check, lambda: _exec(setup, namespace))
    if prepared["status"] != "pass":
        emit(event="fatal", kind="import", line=0, message="test setup: " + prepared["message"])
        return False
    namespace["candidate"] = namespace[entry_point]
    return True


def main() -> None:
    payload = json.loads(sys.stdin.read())
    nonce = payload["nonce"]
    results = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)

    def emit(**fields: Any) -> None:
        fields.pop("exc", None)
        results.write(json.dumps({"nonce": nonce, **fields}) + "\n")

    emit(event="isolation", **_isolate(payload.get("isolation", {})))
    _apply_limits(payload.get("limits", {}))
    signal.signal(signal.SIGALRM, _on_alarm)
    per_check = float(payload.get("check_timeout_s", 3.0))
    namespace: dict[str, Any] = {"__name__": "__candidate__"}
    if _load(payload, namespace, emit):
        for index, source in enumerate(payload["checks"]):
            emit(event="start", check=index)
            outcome = _guarded(per_check, functools.partial(_run_check, source, namespace))
            emit(event="check", check=index, **outcome)
    emit(event="done")


if __name__ == "__main__":
    main()
