"""Turning a sandboxed attempt's report and hostile output into failures, in the parent.

Everything here treats the attempt's output as adversarial bytes: every field is
type-checked, every value is decoded as plain data only, and any parse problem
becomes a defect of the attempt (never an exception, never a silent pass).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from critiquebench.judges._failure import Failure, FailureKind
from critiquebench.judges._plain import MalformedValue, clean_text, decode, parse_json_line
from critiquebench.judges._plan import PlannedCheck
from critiquebench.judges._sandbox import RawAttempt

if TYPE_CHECKING:
    from critiquebench.judges._python import SandboxLimits

# A timed-out attempt that waited this share of its wall clock for a CPU was starved by
# the host: the timeout is the machine's doing, not the candidate's.
_STARVED_SHARE = 0.5


@dataclass(frozen=True)
class Interpretation:
    """What one attempt amounted to."""

    failures: list[Failure]
    passed: int
    infrastructure_error: str | None
    times: dict[int, float]


def interpret(
    plans: list[PlannedCheck], raw: RawAttempt, nonce: str, limits: SandboxLimits
) -> Interpretation:
    """Failures and passes of an attempt, from its supervisor's report and its output."""
    report = raw.report
    if report.get("supervisor_error"):
        message = f"sandbox supervisor failed: {clean_text(report['supervisor_error'])}"
        return Interpretation([], 0, message, {})
    if report.get("timed_out") and host_starved(report, limits):
        waited = float(report.get("run_queue_wait_s", 0.0))
        message = (
            f"the host was too loaded: the attempt waited {waited:.1f}s of its "
            f"{limits.wall_s:g}s wall clock for a CPU"
        )
        return Interpretation([], 0, message, {})
    events, unreadable = read_events(raw.output, nonce)
    state = _Reading(plans)
    for event in events:
        state.take(event)
    failures = state.failures
    if unreadable:
        failures.append(
            Failure(kind="crash", message=f"{unreadable} unreadable line(s) on the results channel")
        )
    if not state.done:
        failures.append(unfinished_failure(report, limits))
    for index, plan in enumerate(plans):
        if index not in state.finished:
            failures.append(
                _check_failure(plan, "not_run", "not run: an earlier failure stopped the checks")
            )
    return Interpretation(failures, state.passed, None, state.times)


def host_starved(report: dict[str, Any], limits: SandboxLimits) -> bool:
    """True when the attempt waited for a CPU so long that a timeout is the host's doing."""
    waited = report.get("run_queue_wait_s")
    return isinstance(waited, int | float) and waited > _STARVED_SHARE * limits.wall_s


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


class _Reading:
    """Folds the attempt's events into failures; the first event per check counts."""

    def __init__(self, plans: list[PlannedCheck]) -> None:
        self.plans = plans
        self.failures: list[Failure] = []
        self.finished: set[int] = set()
        self.times: dict[int, float] = {}
        self.passed = 0
        self.done = False
        self.fatal = False

    def take(self, event: dict[str, Any]) -> None:
        kind = event.get("e")
        if kind == "done":
            self.done = True
        elif kind == "fatal" and not self.fatal:
            self.fatal = True
            line = event.get("line")
            self.failures.append(
                Failure(
                    kind="syntax" if event.get("kind") == "syntax" else "import",
                    message=_text(event.get("message")),
                    line=line if type(line) is int and 0 <= line < 10**7 else 0,
                )
            )
        elif kind == "check":
            self._check(event)

    def _check(self, event: dict[str, Any]) -> None:
        index = event.get("i")
        if type(index) is not int or not 0 <= index < len(self.plans) or index in self.finished:
            return  # out of range or a repeat: it can neither add a pass nor a failure
        self.finished.add(index)
        spent = event.get("t")
        if type(spent) is float and 0.0 <= spent < 1e6:
            self.times[index] = spent
        plan = self.plans[index]
        failure = self._decide(plan, event)
        if failure is None:
            self.passed += 1
        else:
            self.failures.append(failure)

    def _decide(self, plan: PlannedCheck, event: dict[str, Any]) -> Failure | None:
        result = event.get("kind")
        if result == "timeout":
            return _check_failure(plan, "timeout", "the check exceeded its time limit")
        if result in ("error", "not_plain"):
            return _check_failure(plan, "error", _text(event.get("message")))
        if plan.mode == "inside":
            if result == "pass":
                return None
            if result == "assertion":
                return _check_failure(
                    plan, "assertion", _text(event.get("message")) or "assertion failed"
                )
            return _check_failure(plan, "crash", "malformed check result")
        values = event.get("values")
        if not isinstance(values, list) or len(values) != len(plan.calls):
            return _check_failure(plan, "crash", "malformed check result")
        try:
            decoded = [decode(value) for value in values]
        except MalformedValue as exc:
            return _check_failure(plan, "crash", str(exc))
        outcome = plan.outcome(decoded)
        if outcome.passed:
            return None
        kind: FailureKind = "assertion" if outcome.kind == "assertion" else "error"
        return _check_failure(plan, kind, outcome.message, outcome.expected, outcome.actual)


def _check_failure(
    plan: PlannedCheck,
    kind: FailureKind,
    message: str,
    expected: str | None = None,
    actual: str | None = None,
) -> Failure:
    check = plan.check
    return Failure(
        kind=kind,
        message=message,
        line=check.line,
        source=check.source,
        expected=expected,
        actual=actual,
        origin=check.origin,
        inside=plan.mode == "inside",
    )


def _text(value: object) -> str:
    return clean_text(value) if isinstance(value, str) else ""


def unfinished_failure(report: dict[str, Any], limits: SandboxLimits) -> Failure:
    """The failure for an attempt that never said it was done: why the supervisor's
    ``report`` says it stopped (wall clock, results flood, memory, or a signal)."""
    if report.get("timed_out"):
        return Failure(
            kind="timeout", message=f"the attempt exceeded its {limits.wall_s:g}s wall clock"
        )
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
