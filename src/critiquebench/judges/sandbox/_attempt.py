"""One attempt in the sandbox: the request a judge sends, and the one retry it allows.

The Python judge sends a candidate's code; the sql judge sends its trusted harness,
with the query only as plain data of each check. Both speak to the same worker
(``_worker.py`` reads the request) under the same retry policy, so both live here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from critiquebench.judges.sandbox._pool import RawAttempt, Sandbox, SandboxUnavailable

if TYPE_CHECKING:
    from critiquebench.judges.python._judge import SandboxLimits
    from critiquebench.judges.python._plan import PlannedCheck
    from critiquebench.suites import Case


def attempt_request(
    case: Case, code: str, plans: list[PlannedCheck], limits: SandboxLimits, nonce: str
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


def judge_attempt(sandbox: Sandbox, request: dict[str, Any]) -> RawAttempt:
    """Run one attempt; :class:`SandboxUnavailable` only when a fresh worker fails it too.

    A worker can die for reasons of its own (the host killed it): one fresh worker
    decides. Twice in a row is the attempt's doing only if the worker stays healthy
    otherwise, so the second failure is raised as is.
    """
    try:
        return sandbox.judge(request)
    except SandboxUnavailable:
        return sandbox.judge(request)
