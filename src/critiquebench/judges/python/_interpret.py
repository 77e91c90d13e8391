"""Turning a sandboxed attempt's report and hostile output into failures, in the parent.

Everything here treats the attempt's output as adversarial bytes: every field is
type-checked, every value is decoded as plain data only, and any parse problem
becomes a defect of the attempt (never an exception, never a silent pass).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from critiquebench.judges._failure import Failure, FailureKind
from critiquebench.judges._plain import MalformedValue, clean_text, decode
from critiquebench.judges.python._plan import PlannedCheck
from critiquebench.judges.sandbox import (
    RawAttempt,
    SandboxLimits,
    read_events,
    stalled,
    unfinished_failure,
)


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
