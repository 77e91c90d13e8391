"""Reading an attempt's output and the supervisor's report, for every judge in the sandbox.

The output is hostile bytes: only JSON objects tagged with the attempt's nonce are
events, everything else is counted as unreadable. The report says how the attempt
ended; a wall clock that ran out before the CPU budget was used is only a suspicion
(``stalled``), which the proof door settles (``judges/_proof.py``).
"""

from __future__ import annotations

from typing import Any

from critiquebench.judges._failure import Failure
from critiquebench.judges._plain import MalformedValue, parse_json_line
from critiquebench.judges.sandbox._limits import SandboxLimits


def stalled(report: dict[str, Any], halt: str, limits: SandboxLimits) -> str | None:
    """Why the attempt is a suspected infrastructure failure, or None.

    Only CPU time decides a timeout. A wall clock (the attempt's, or a check's) that ran
    out before the CPU budget was used says only that the attempt did not get, or did
    not want, the CPU: the host may have starved it, or the answer slept or hid behind
    its own children. Which one is proved by judging it again beside a control. An
    attempt whose processes used the whole CPU budget is the answer's, stalls or not.
    ``halt`` is ``stalled`` when a check's wall timer fired (or ``stuck``, or "").
    """
    if report.get("cpu_exhausted"):
        return None
    if halt == "stalled":
        return (
            f"a check's wall clock ({limits.check_timeout_s * limits.wall_multiple:g}s) ran "
            f"out before its {limits.check_timeout_s:g} CPU-seconds were used"
        )
    if report.get("timed_out") and not report.get("cpu_exhausted"):
        used = report.get("cpu_s")
        spent = f"{used:.1f}" if isinstance(used, int | float) else "less"
        return (
            f"the attempt's wall clock ({limits.wall_s * limits.wall_multiple:g}s) ran out "
            f"after {spent} of its {limits.wall_s:g} CPU-seconds"
        )
    return None


def read_events(output: bytes, nonce: str) -> tuple[list[dict[str, Any]], int]:
    """The attempt's events (JSON objects tagged with ``nonce``), in order, and how
    many non-blank lines of ``output`` were not such an event."""
    events: list[dict[str, Any]] = []
    unreadable = 0
    for line in output.split(b"\n"):
        if not line.strip():
            continue
        try:
            event = parse_json_line(line)
        except MalformedValue:
            unreadable += 1
            continue
        if isinstance(event, dict) and event.get("n") == nonce:
            events.append(event)
        else:
            unreadable += 1
    return events, unreadable


def unfinished_failure(report: dict[str, Any], limits: SandboxLimits, halt: str = "") -> Failure:
    """The failure for an attempt that never said it was done: why the supervisor's
    ``report`` (or the attempt's own ``halt``) says it stopped (CPU budget, a check
    stuck past its CPU limit, wall clock, results flood, memory, or a signal)."""
    if report.get("cpu_exhausted"):
        message = f"the attempt used its {limits.wall_s:g} CPU-seconds (all its processes together)"
        return Failure(kind="timeout", message=message)
    if halt == "stuck":
        message = (
            f"a check ran on past its {limits.check_timeout_s:g} CPU-seconds inside code "
            "its timer cannot interrupt; the attempt was stopped"
        )
        return Failure(kind="timeout", message=message)
    if report.get("timed_out"):
        wall = limits.wall_s * limits.wall_multiple
        return Failure(kind="timeout", message=f"the attempt exceeded its {wall:g}s wall clock")
    if report.get("flooded"):
        message = (
            f"the results stream exceeded {limits.results_bytes} bytes; the attempt was stopped"
        )
        return Failure(kind="crash", message=message)
    if report.get("memory_exceeded"):
        mib = limits.memory_bytes >> 20
        return Failure(
            kind="crash", message=f"the attempt's processes used more than {mib} MiB together"
        )
    return Failure(
        kind="crash", message="the attempt died before finishing: a resource limit or a signal"
    )
