"""The Python judge: run an artifact against a case's checks in a child process."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
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
    """Process-count limit (the kernel ignores it for root, hence ``drop_privileges``)."""
    results_bytes: int = 1 << 20
    """Largest results stream read from the child; more is treated as a crash."""
    isolate_network: bool = True
    """Give the child a private network namespace with no interfaces (needs root)."""
    drop_privileges: bool = True
    """When running as root, run the candidate as ``nobody``."""

    def unconfined(self) -> SandboxLimits:
        """The same limits with the OS-level fences off (for measuring their price)."""
        return SandboxLimits(
            wall_s=self.wall_s,
            check_timeout_s=self.check_timeout_s,
            cpu_s=self.cpu_s,
            memory_bytes=self.memory_bytes,
            file_bytes=self.file_bytes,
            processes=self.processes,
            results_bytes=self.results_bytes,
            isolate_network=False,
            drop_privileges=False,
        )


@dataclass(frozen=True)
class _ChildRun:
    events: list[dict[str, Any]]
    timed_out: bool
    flooded: bool
    exit_code: int


class PythonJudge:
    """Judges Python artifacts by running every check separately, out of process."""

    def __init__(self, limits: SandboxLimits | None = None) -> None:
        self.limits = limits or SandboxLimits()

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        """Run ``artifact`` against all of ``case``'s checks."""
        started = time.perf_counter()
        run = self._execute(case, artifact)
        failures, passed = _interpret(case.checks, run, self.limits)
        return JudgeResult(
            failures=tuple(failures),
            checks_total=len(case.checks),
            checks_passed=passed,
            duration_s=time.perf_counter() - started,
            notes=_isolation_notes(run.events),
        )

    def _payload(self, case: Case, artifact: str, nonce: str) -> bytes:
        limits = self.limits
        payload: dict[str, Any] = {
            "nonce": nonce,
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
            "isolation": {
                "network": limits.isolate_network,
                "drop_privileges": limits.drop_privileges,
            },
        }
        return json.dumps(payload).encode()

    def _execute(self, case: Case, artifact: str) -> _ChildRun:
        nonce = secrets.token_hex(16)
        with tempfile.TemporaryDirectory(prefix="cb-judge-") as workdir:
            # argv is fixed: model text only ever travels through stdin, never a shell.
            process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", str(_HARNESS)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=workdir,
                env=_CHILD_ENV,
                start_new_session=True,
            )
            try:
                output, timed_out, flooded = self._collect(
                    process, self._payload(case, artifact, nonce)
                )
            finally:
                _kill_group(process)  # grandchildren the candidate may have left behind
                process.wait()
        events = [e for e in _parse_events(output) if e.get("nonce") == nonce]
        return _ChildRun(events, timed_out, flooded, process.returncode)

    def _collect(
        self, process: subprocess.Popen[bytes], payload: bytes
    ) -> tuple[bytes, bool, bool]:
        """Send the payload, then read results until EOF, the wall clock, or the size cap."""
        assert process.stdin is not None and process.stdout is not None
        with contextlib.suppress(BrokenPipeError):
            process.stdin.write(payload)
            process.stdin.close()
        deadline = time.monotonic() + self.limits.wall_s
        chunks: list[bytes] = []
        size = 0
        stream = process.stdout.fileno()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return b"".join(chunks), True, False
            ready, _, _ = select.select([stream], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(stream, 65536)
            if not chunk:
                return b"".join(chunks), False, False
            size += len(chunk)
            if size > self.limits.results_bytes:
                return b"".join(chunks), False, True
            chunks.append(chunk)


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


def _isolation_notes(events: list[dict[str, Any]]) -> tuple[str, ...]:
    for event in events:
        if event.get("event") == "isolation":
            notes = [str(note) for note in event.get("notes", [])]
            return (f"network={event.get('network')} user={event.get('user')}", *notes)
    return ()


def _unfinished(run: _ChildRun, limits: SandboxLimits) -> Failure:
    """The failure for a child that never said it was done."""
    if run.timed_out:
        return Failure(kind="timeout", message=f"run exceeded the {limits.wall_s:g}s wall clock")
    if run.flooded:
        message = f"the results stream exceeded {limits.results_bytes} bytes; the run was stopped"
        return Failure(kind="crash", message=message)
    return Failure(
        kind="crash",
        message=f"the process died (exit code {run.exit_code}): a resource limit or a signal",
    )


def _interpret(
    checks: tuple[Check, ...], run: _ChildRun, limits: SandboxLimits
) -> tuple[list[Failure], int]:
    """Turn the child's result lines into failures; returns (failures, checks passed)."""
    failures: list[Failure] = []
    finished: set[int] = set()
    passed = 0
    done = False
    for event in run.events:
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
            if index in finished or not 0 <= index < len(checks):
                continue  # a duplicate or out-of-range line cannot add passes
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
        failures.append(_unfinished(run, limits))
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
    if value == "assertion":
        return "assertion"
    if value == "timeout":
        return "timeout"
    return "error"


def probe_sandbox(limits: SandboxLimits | None = None) -> str:
    """Run a trivial artifact once and say which fences the OS granted.

    Called once per run so a missing fence (no network namespace, no user switch)
    is stated in the log and the runs table instead of silently assumed.
    """
    probe = Case(
        id="sandbox-probe",
        prompt="",
        entry_point="probe",
        checks=(Check(source="assert probe() == 1", origin="feedback"),),
    )
    result = PythonJudge(limits)(probe, "def probe():\n    return 1\n")
    return "; ".join(result.notes) or "no isolation report from the judge"
