"""One attempt in the sandbox: the request a judge sends, and the one retry it allows.

The Python judge sends a candidate's code; the sql judge sends its trusted harness,
with the query only as plain data of each check. Both speak to the same worker
(``_worker.py`` reads the request) under the same retry policy, so both live here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from critiquebench.judges._plain import encode_argument
from critiquebench.judges.sandbox._limits import SandboxLimits
from critiquebench.judges.sandbox._pool import (
    PendingAttempt,
    RawAttempt,
    Sandbox,
    SandboxUnavailable,
)

if TYPE_CHECKING:
    from critiquebench.judges._case import Case


class CheckRequest(Protocol):
    """A check as the worker receives it (the Python judge's planned checks, the sql
    judge's calls of its harness): never an expected value."""

    def request(self) -> dict[str, Any]:
        """The check's part of the worker's request."""
        ...


@dataclass(frozen=True)
class CandidateCall:
    """One call of the function under test: plain-data arguments, optional wrapper."""

    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()
    wrap: str | None = None

    def request(self) -> dict[str, Any]:
        """The call as the sandbox receives it."""
        return {
            "args": [encode_argument(arg) for arg in self.args],
            "kwargs": {name: encode_argument(value) for name, value in self.kwargs},
            "wrap": self.wrap,
        }


@dataclass(frozen=True)
class ValueCheck:
    """A check whose calls the worker runs and answers with their plain values; the
    parent decides it (mode ``value``)."""

    calls: tuple[CandidateCall, ...]

    def request(self) -> dict[str, Any]:
        """The check as the sandbox receives it."""
        return {"mode": "value", "calls": [call.request() for call in self.calls]}


def attempt_request(
    case: Case, code: str, plans: Sequence[CheckRequest], limits: SandboxLimits, nonce: str
) -> dict[str, Any]:
    """The worker's request for one attempt: define ``code`` after ``case.setup``, then
    run each of ``plans`` against ``case.entry_point`` within ``limits``. The worker tags
    every event it writes with ``nonce``; lines without it are not read as events."""
    return {
        "nonce": nonce,
        "code": code,
        "setup": case.setup,
        "entry_point": case.entry_point,
        "checks": [plan.request() for plan in plans],
        "check_cpu_s": limits.check_timeout_s,
        # CPU time decides (per check, and for the attempt's processes together); the
        # wall clocks are safety nets, long enough that a loaded host rarely reaches
        # them first. Reaching one is a suspicion the parent proves, never a verdict.
        "check_wall_s": limits.check_timeout_s * limits.wall_multiple,
        "cpu_budget_s": limits.wall_s,
        "wall_s": limits.wall_s * limits.wall_multiple,
        "results_bytes": limits.results_bytes,
        "namespaces": limits.namespaces,
        "limits": {
            # Behind the CPU budget, never ahead of it: a process stopped by this limit
            # would read as a crash rather than the timeout it is.
            "cpu_s": max(limits.cpu_s, math.ceil(limits.wall_s) + 1),
            "memory_bytes": limits.memory_bytes,
            "attempt_memory_bytes": limits.memory_bytes,
            "file_bytes": limits.file_bytes,
            "tmp_bytes": limits.tmp_bytes,
            "processes": limits.processes,
        },
    }


def judge_attempt(
    sandbox: Sandbox, request: dict[str, Any], meanwhile: Callable[[], object] | None = None
) -> RawAttempt:
    """Run one attempt; :class:`SandboxUnavailable` only when a fresh worker fails it too.

    A worker can die for reasons of its own (the host killed it): one fresh worker
    decides. Twice in a row is the attempt's doing only if the worker stays healthy
    otherwise, so the second failure is raised as is.

    ``meanwhile`` is called once, on this thread, while the worker judges (the Python
    judge reads the answer's code with ruff and mypy then); an error it raises gives the
    attempt up and is raised. Measured gain against a thread started per attempt for the
    static checks (``bench/judge.py``, fresh answers, one worker, three pairs of three
    rounds alternated, 2 cores at load 12-29, with mypy reading beside ruff too): the
    thread's start had held the attempt back 3.6-5.1 ms (median, load 5-7) before it was
    sent, now 0.1-0.8 ms; the full judge's rate over the tests-only judge's in the same
    round, median 0.81 -> 0.89 (rounds 1-2: 0.84 -> 0.98), its CPU an attempt 21.2 ->
    18.4 ms (every process), the same findings.
    """
    if meanwhile is None:
        try:
            return sandbox.judge(request)
        except SandboxUnavailable:
            return sandbox.judge(request)
    try:
        pending: PendingAttempt | None = sandbox.begin(request)
    except SandboxUnavailable:
        pending = None
    try:
        meanwhile()
    except BaseException:
        if pending is not None:
            pending.discard()
        raise
    if pending is not None:
        try:
            return pending.result()
        except SandboxUnavailable:
            pass
    return sandbox.judge(request)
