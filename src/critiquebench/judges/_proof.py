"""The one door out of the statistics: a unit is excluded only with proof that the
infrastructure, not the answer, failed.

Every judgement the loop asks for goes through :class:`ProofDoor` (``JudgeSet`` calls
it), whatever the judge. A judgement without ``infrastructure_error`` is final. Any
other outcome is only a *suspicion* (a wall clock ran out with the CPU budget unused,
a sandbox worker died or stopped answering, the supervisor failed, the judge raised or
returned ``infrastructure_error``), and is proved:

1. The answer is judged again, alone (no other judging of this door runs meanwhile),
   by a fresh judge: the judge's ``fresh()`` (a new sandbox worker pool for the
   Python and sql judges), else its ``restart()``, else the same judge.
   A clean second judgement is the result.
2. A control whose outcome is known is judged by that same fresh judge, under the
   same conditions: the case's ``reference_solution``, else the judge's
   ``canary()`` (a case and a known-good answer), else the last answer this door saw
   that judge judge cleanly (healthy = judged again to the same defect count). A
   reference or canary is healthy when it is judged without infrastructure error and
   passes.
3. The control is not healthy, or there is none: the unit is excluded
   (``infrastructure_error`` says the control failed and why).
   The control is healthy: the answer owns its failure. It becomes a defect of a
   named kind (``JudgeResult.owned_kind`` of the second judgement: ``timeout`` for a
   wall clock that ran out, ``crash`` otherwise, e.g. "the judge cannot judge this
   answer"), never an exclusion.

How many defects an answer-owned failure counts: one of the named kind for the
whole answer plus one ``not_run`` per check of the case (at least 1), which is what
an attempt that dies before its first check scores, and no fewer than any honest
judgement of the Python tests gives; a judge whose honest count can be higher (the
sql judge reports up to ``max_defects_per_check`` per check) offers
``owned_result(case, artifact, kind, message)`` and counts its own maximum. A wrong
answer therefore never lowers its count by breaking its judge.

The answer can influence none of this: whether it is excluded depends only on the
control, which it does not touch (it runs after the answer's processes are gone, on
workers the answer never ran on).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from critiquebench.judges._failure import Failure, FailureKind, JudgeResult

if TYPE_CHECKING:
    from critiquebench.judges._case import Case
    from critiquebench.judges._registry import Judge

_MAX_REASON = 600
"""Characters of a judge's message kept in a proof's own message."""


@dataclass(frozen=True)
class _Known:
    """An answer a judge judged cleanly, and the defects it had: a control of last resort."""

    case: Case
    artifact: str
    defects: int


class _Gate:
    """Judgements share the gate; a proof has it alone (and waiting proofs go first)."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._sharing = 0
        self._alone = False
        self._waiting = 0

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        with self._condition:
            while self._alone or self._waiting:
                self._condition.wait()
            self._sharing += 1
        try:
            yield
        finally:
            with self._condition:
                self._sharing -= 1
                self._condition.notify_all()

    @contextlib.contextmanager
    def alone(self) -> Iterator[None]:
        with self._condition:
            self._waiting += 1
            while self._alone or self._sharing:
                self._condition.wait()
            self._waiting -= 1
            self._alone = True
        try:
            yield
        finally:
            with self._condition:
                self._alone = False
                self._condition.notify_all()


class ProofDoor:
    """Judges through a judge, and proves every suspected infrastructure failure with a
    control before it may exclude a unit (see the module's docstring for the rules).

    Never raises. Thread-safe: judgements run side by side, a proof runs alone.
    """

    def __init__(self) -> None:
        self._gate = _Gate()
        self._lock = threading.Lock()
        self._known: dict[int, _Known] = {}

    def judge(self, judge: Judge, name: str, case: Case, artifact: str) -> JudgeResult:
        """Judge ``artifact`` of ``case`` with ``judge`` (registered as ``name``)."""
        with self._gate.shared():
            first = judged(judge, name, case, artifact)
        if first.infrastructure_error is None:
            self._remember(judge, case, artifact, first)
            return first
        with self._gate.alone():
            return self._prove(judge, name, case, artifact, first)

    def _remember(self, judge: Judge, case: Case, artifact: str, result: JudgeResult) -> None:
        with self._lock:
            self._known[id(judge)] = _Known(case, artifact, result.defects_total())

    def _prove(
        self, judge: Judge, name: str, case: Case, artifact: str, first: JudgeResult
    ) -> JudgeResult:
        started = time.perf_counter()
        suspicion = _short(first.infrastructure_error)
        with _fresh(judge) as fresh:
            again = judged(fresh, name, case, artifact)
            if again.infrastructure_error is None:
                note = f"judged again alone, on a fresh judge, after: {suspicion}"
                return replace(again, notes=(*again.notes, note))
            control = self._control(judge, fresh, case)
            if control is None:
                reason = "no control of known outcome could be judged (no reference solution, "
                reason += "no canary of the judge, no answer it judged cleanly before)"
                return infrastructure_result(case, f"{suspicion}; {reason}", started)
            what, outcome, healthy = control
            if not healthy:
                why = _short(outcome.infrastructure_error) or _defects_in_words(outcome)
                message = f"{suspicion}; the control ({what}) failed too: {why}"
                return infrastructure_result(case, message, started)
            message = (
                f"the answer failed again on a fresh judge while the control ({what}) was "
                f"judged healthily beside it: {_short(again.infrastructure_error)}"
            )
            owned = getattr(fresh, "owned_result", None) or getattr(judge, "owned_result", None)
            if callable(owned):
                result: JudgeResult = owned(case, artifact, again.owned_kind, message)
                return result
            return owned_failure(case, again.owned_kind, message, started)

    def _control(
        self, judge: Judge, fresh: Judge, case: Case
    ) -> tuple[str, JudgeResult, bool] | None:
        """The control judged by ``fresh``: what it was, its result, whether healthy."""
        if case.reference_solution:
            outcome = judged(fresh, case.judge, case, case.reference_solution)
            return "the case's reference solution", outcome, _passes(outcome)
        canary = getattr(fresh, "canary", None) or getattr(judge, "canary", None)
        if callable(canary):
            with contextlib.suppress(Exception):
                control_case, control_artifact = canary()
                outcome = judged(fresh, control_case.judge, control_case, control_artifact)
                return "the judge's canary", outcome, _passes(outcome)
        with self._lock:
            known = self._known.get(id(judge))
        if known is None:
            return None
        outcome = judged(fresh, known.case.judge, known.case, known.artifact)
        healthy = outcome.infrastructure_error is None and outcome.defects_total() == known.defects
        return f"an answer judged cleanly before ({known.case.id})", outcome, healthy


def judged(judge: Judge, name: str, case: Case, artifact: str) -> JudgeResult:
    """``judge(case, artifact)``, with a raised exception turned into a result."""
    try:
        result = judge(case, artifact)
    except Exception as exc:
        return infrastructure_result(
            case, f"judge {name!r}: {type(exc).__name__}: {exc}", time.perf_counter()
        )
    if not isinstance(result, JudgeResult):
        message = f"judge {name!r} returned a {type(result).__name__}, not a JudgeResult"
        return infrastructure_result(case, message, time.perf_counter())
    return result


@contextlib.contextmanager
def _fresh(judge: Judge) -> Iterator[Judge]:
    """A fresh judge for a proof (closed after it), the restarted judge, or the judge."""
    make: Callable[[], Any] | None = getattr(judge, "fresh", None)
    made: Any = None
    if callable(make):
        with contextlib.suppress(Exception):
            made = make()
    if made is None:
        restart = getattr(judge, "restart", None)
        if callable(restart):
            with contextlib.suppress(Exception):
                restart()
        yield judge
        return
    try:
        yield made
    finally:
        close = getattr(made, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()


def owned_failure(case: Case, kind: FailureKind, message: str, started: float) -> JudgeResult:
    """The result of an answer that owns its judge's failure: one defect of ``kind`` for
    the whole answer and one ``not_run`` per check (the count of an attempt that dies
    before its first check, the most the tests of a Python case can give)."""
    whole = Failure(kind=kind, message=message)
    not_run = [
        Failure(
            kind="not_run",
            message="not judged: the answer broke its judge (see the answer's own failure)",
            line=check.line,
            source=check.source,
            origin=check.origin,
        )
        for check in case.checks
    ]
    return JudgeResult(
        failures=(whole, *not_run),
        checks_total=len(case.checks),
        checks_passed=0,
        duration_s=time.perf_counter() - started,
        notes=("the answer owns its judge's failure: a control was judged healthily",),
    )


def infrastructure_result(
    case: Case, message: str, started: float, owned_kind: FailureKind = "crash"
) -> JudgeResult:
    """A judgement that did not judge: ``message`` is the (suspected or proven)
    infrastructure error, ``owned_kind`` the defect an answer that owns it would get."""
    return JudgeResult(
        failures=(),
        checks_total=len(case.checks),
        checks_passed=0,
        duration_s=time.perf_counter() - started,
        infrastructure_error=message,
        owned_kind=owned_kind,
    )


def _passes(outcome: JudgeResult) -> bool:
    return outcome.infrastructure_error is None and outcome.passed


def _defects_in_words(outcome: JudgeResult) -> str:
    kinds = sorted({failure.kind for failure in outcome.failures})
    return f"it did not pass ({len(outcome.failures)} defect(s): {', '.join(kinds)})"


def _short(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 3] + "..."
