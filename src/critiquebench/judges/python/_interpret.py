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
from critiquebench.judges.python._plan import PlannedCheck
from critiquebench.judges.sandbox._pool import RawAttempt

if TYPE_CHECKING:
    from critiquebench.judges.python._judge import SandboxLimits


@dataclass(frozen=True)
class Interpretation:
    """What one attempt amounted to. ``infrastructure_error`` is set when the judge
    could not judge, or suspects it could not (a wall clock ran out with the CPU budget
    unused); ``owned_kind`` is the defect it becomes if a control proves the answer
    caused it."""

    failures: list[Failure]
    passed: int
    infrastructure_error: str | None
    times: dict[int, float]
    owned_kind: FailureKind = "crash"


def interpret(
    plans: list[PlannedCheck], raw: RawAttempt, nonce: str, limits: SandboxLimits
) -> Interpretation:
    """Failures and passes of an attempt, from its supervisor's report and its output."""
    report = raw.report
    if report.get("supervisor_error"):
        message = f"sandbox supervisor failed: {clean_text(report['supervisor_error'])}"
        return Interpretation([], 0, message, {})
    events, unreadable = read_events(raw.output, nonce)
    state = _Reading(plans)
    for event in events:
        state.take(event)
    suspicion = stalled(report, state.halt or state.stalls, limits)
    if suspicion is not None:
        return Interpretation([], 0, suspicion, {}, "timeout")
    failures = state.failures
    if unreadable:
        failures.append(
            Failure(kind="crash", message=f"{unreadable} unreadable line(s) on the results channel")
        )
    if not state.done:
        failures.append(unfinished_failure(report, limits, state.halt))
    for index, plan in enumerate(plans):
        if index not in state.finished:
            failures.append(
                _check_failure(plan, "not_run", "not run: an earlier failure stopped the checks")
            )
    return Interpretation(failures, state.passed, None, state.times)


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
        self.halt = ""
        self.stalls = ""

    def take(self, event: dict[str, Any]) -> None:
        kind = event.get("e")
        if kind == "done":
            self.done = True
        elif kind == "halt" and not self.halt:
            why = event.get("why")
            self.halt = why if why in ("stalled", "stuck") else "stuck"
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
        if plan.mode == "value" and not plan.calls:
            # Nothing of the answer's is asked (``import math``, ``assert True``): the
            # parent decides alone, whatever event the attempt wrote for it.
            return self._outcome(plan, [])
        result = event.get("kind")
        if result == "timeout":
            return _check_failure(plan, "timeout", "the check exceeded its time limit")
        if result == "stalled":
            self.stalls = "stalled"
            return _check_failure(plan, "timeout", "the check's wall clock ran out")
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
        return self._outcome(plan, decoded)

    @staticmethod
    def _outcome(plan: PlannedCheck, decoded: list[Any]) -> Failure | None:
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
