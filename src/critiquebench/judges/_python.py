"""The Python judge: run an artifact against a case's checks in a child process."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from critiquebench.judges._failure import Failure, FailureKind, JudgeResult
from critiquebench.suites import Case, Check

_HARNESS = Path(__file__).with_name("_harness.py")

# The child sees only these variables: no API keys, tokens or PREFECT_* settings.
_CHILD_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}


@dataclass(frozen=True, kw_only=True)
class SandboxLimits:
    """Fences around one judged run of untrusted code."""

    wall_s: float = 10.0
    """Wall-clock limit for the whole run; the process group is killed after it."""
    check_timeout_s: float = 3.0
    """Time limit of one check (and of defining the artifact)."""
    cpu_s: int = 10
    """CPU-seconds limit, a second fence behind the wall clock."""
    memory_bytes: int = 1 << 30
    """Address-space limit of the child."""
    file_bytes: int = 8 << 20
    """Largest file the child may write."""
    processes: int = 64
    """Process-count limit (not enforced by the kernel for root)."""


class PythonJudge:
    """Judges Python artifacts by running every check separately, out of process."""

    def __init__(self, limits: SandboxLimits | None = None) -> None:
        self.limits = limits or SandboxLimits()

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        """Run ``artifact`` against all of ``case``'s checks."""
        started = time.perf_counter()
        events, timed_out, exit_code = self._execute(case, artifact)
        failures, passed = _interpret(case.checks, events, timed_out, exit_code, self.limits)
        return JudgeResult(
            failures=tuple(failures),
            checks_total=len(case.checks),
            checks_passed=passed,
            duration_s=time.perf_counter() - started,
        )

    def _payload(self, case: Case, artifact: str) -> bytes:
        limits = self.limits
        payload: dict[str, Any] = {
            "code": artifact,
            "setup": case.setup,
            "entry_point": case.entry_point,
            "checks": [check.source for check in case.checks],
            "check_timeout_s": limits.check_timeout_s,
            "limits": {
                "cpu_s": limits.cpu_s,
                "memory_bytes": limits.memory_bytes,
                "file_bytes": limits.file_bytes,
                "processes": limits.processes,
            },
        }
        return json.dumps(payload).encode()

    def _execute(self, case: Case, artifact: str) -> tuple[list[dict[str, Any]], bool, int]:
        with tempfile.TemporaryDirectory(prefix="cb-judge-") as workdir:
            process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", str(_HARNESS)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=workdir,
                env=_CHILD_ENV,
                start_new_session=True,
            )
            timed_out = False
            try:
                output, _ = process.communicate(
                    self._payload(case, artifact), timeout=self.limits.wall_s
                )
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(process)
                output, _ = process.communicate()
            finally:
                _kill_group(process)  # grandchildren the candidate may have left behind
        return _parse_events(output), timed_out, process.returncode


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _parse_events(output: bytes) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for line in output.decode("utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a truncated last line after a kill
        if isinstance(event, dict):
            events.append(event)
    return events


def _interpret(
    checks: tuple[Check, ...],
    events: list[dict[str, Any]],
    timed_out: bool,
    exit_code: int,
    limits: SandboxLimits,
) -> tuple[list[Failure], int]:
    """Turn the child's result lines into failures; returns (failures, checks passed)."""
    failures: list[Failure] = []
    finished: set[int] = set()
    passed = 0
    done = False
    for event in events:
        kind = event.get("event")
        if kind == "fatal":
            failures.append(
                Failure(
                    kind=_fatal_kind(event.get("kind")),
                    message=str(event.get("message", "")),
                    line=int(event.get("line", 0) or 0),
                )
            )
        elif kind == "check":
            index = int(event["check"])
            finished.add(index)
            if event.get("status") == "pass":
                passed += 1
                continue
            check = checks[index]
            failures.append(
                Failure(
                    kind=_check_kind(event.get("kind")),
                    message=str(event.get("message", "")),
                    line=check.line,
                    source=check.source,
                    expected=event.get("expected"),
                    actual=event.get("actual"),
                    origin=check.origin,
                )
            )
        elif kind == "done":
            done = True
    if not done:
        # The child never finished: the wall clock or a hard limit stopped it.
        reason: FailureKind = "timeout" if timed_out else "crash"
        message = (
            f"run exceeded the {limits.wall_s:.0f}s wall-clock limit"
            if timed_out
            else f"the process died (exit code {exit_code}); a resource limit or a signal"
        )
        failures.append(Failure(kind=reason, message=message))
    for index, check in enumerate(checks):
        if index not in finished:
            failures.append(
                Failure(
                    kind="not_run",
                    message="not run: an earlier failure stopped the checks",
                    line=check.line,
                    source=check.source,
                    origin=check.origin,
                )
            )
    return failures, passed


def _fatal_kind(value: object) -> FailureKind:
    return "syntax" if value == "syntax" else "import"


def _check_kind(value: object) -> FailureKind:
    if value in ("assertion", "timeout"):
        return "assertion" if value == "assertion" else "timeout"
    return "error"
