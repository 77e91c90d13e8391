"""The Python judge: run an artifact's checks in the sandbox, decide them in the parent."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from dataclasses import replace

from critiquebench.judges._case import Case, Check
from critiquebench.judges._failure import Failure, FailureKind, JudgeResult
from critiquebench.judges._proof import infrastructure_result, owned_failure
from critiquebench.judges.python._interpret import Interpretation, interpret
from critiquebench.judges.python._plan import PlannedCheck, plan_checks, trusted_code
from critiquebench.judges.sandbox import (
    Sandbox,
    SandboxedJudge,
    SandboxLimits,
    SandboxUnavailable,
    attempt_request,
    judge_attempt,
)
from critiquebench.judges.static import StaticChecker, StaticReport, StaticSettings

_REFERENCE_CHECK_S = 10.0
"""CPU-seconds one check of a reference solution may take while it is being timed."""

_IDENTITY_ENTRIES = 4096
"""Most check tuples whose plans are found by identity (the rest by content)."""

DEFAULT_STATIC = StaticSettings()
"""ruff and mypy with the documented rule sets (see ``judges/static/_checker.py``)."""


class PythonJudge(SandboxedJudge):
    """Judges Python artifacts: every check separately, in a sandbox, decided by the parent;
    then ruff and mypy read the code (outside the sandbox: they never execute it).

    Never raises: whatever the candidate does becomes a defect, and a failure of the
    judge itself (sandbox, ruff or mypy) becomes ``JudgeResult.infrastructure_error``.
    ``static=None`` judges by the tests alone.
    """

    def __init__(
        self,
        limits: SandboxLimits | None = None,
        sandbox: Sandbox | None = None,
        static: StaticSettings | None = DEFAULT_STATIC,
    ) -> None:
        super().__init__(limits, sandbox)
        self._lock = threading.Lock()
        self._reference_s: dict[str, float] = {}
        self._plans: dict[tuple[str, str], list[PlannedCheck]] = {}
        # The plans of the check tuples judged lately, by identity: a run judges the same
        # Case object for every arm and rep, and the content key costs a repr of every
        # check. An entry holds its tuple, so its id cannot be reused while it is here.
        self._by_identity: dict[int, tuple[tuple[Check, ...], str, list[PlannedCheck]]] = {}
        self.static = StaticChecker(static) if static is not None else None
        self._owns_static = True

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        """Count the defects of ``artifact`` against every check of ``case``."""
        started = time.perf_counter()
        # ruff and mypy read the code while the sandbox runs it (they only parse it), on
        # this thread: no thread to start, nor to hand the interpreter to and back.
        meanwhile = None if self.static is None else _StaticRead(self.static, case, artifact)
        try:
            plans = self._planned(case)
            judged = self._attempt(case, artifact, plans, self.limits, meanwhile)
            if _timed_out(judged) and case.reference_solution:
                # Only a timeout needs the reference's time: a slow case (or a slow
                # machine) gets limits scaled from it, and the attempt is judged again.
                limits = self._limits_for(case, plans)
                if limits != self.limits:
                    judged = self._attempt(case, artifact, plans, limits)
        except Exception as exc:  # the judge's own failure, never the candidate's defect
            return infrastructure_result(case, f"judge error: {type(exc).__name__}: {exc}", started)
        if judged.infrastructure_error:
            return infrastructure_result(
                case, judged.infrastructure_error, started, judged.owned_kind
            )
        findings: tuple[Failure, ...] = ()
        if meanwhile is not None:
            # A tool failure would make the lint/types counts silently low: it is a
            # suspected infrastructure error instead, which the proof door settles.
            report = meanwhile.report()
            if report.error is not None:
                return infrastructure_result(case, report.error, started)
            findings = report.findings
        return JudgeResult(
            failures=tuple(judged.failures),
            checks_total=len(case.checks),
            checks_passed=judged.passed,
            duration_s=time.perf_counter() - started,
            notes=(self.sandbox.description,),
            checks_inside=sum(1 for plan in plans if plan.mode == "inside"),
            findings=findings,
        )

    def close(self) -> None:
        """Stop the sandbox workers and the mypy daemon (they also stop with this process)."""
        super().close()
        if self.static is not None and self._owns_static:
            self.static.close()

    def fresh(self) -> PythonJudge:
        """A judge for a proof (``judges/_proof.py``): the same limits, static checker
        and measured reference times, on a new pool of sandbox workers."""
        judge = PythonJudge(self.limits, sandbox=self.sandbox.fresh(), static=None)
        judge.static = self.static
        judge._owns_static = False  # the checker stays this judge's to close
        judge._reference_s = self._reference_s
        return judge

    def canary(self) -> tuple[Case, str]:
        """A control of known outcome (every check passes) for cases without a reference."""
        return CANARY_CASE, CANARY_ANSWER

    def owned_result(
        self, case: Case, artifact: str, kind: FailureKind, message: str
    ) -> JudgeResult:
        """An answer that owns its judge's failure: the tests' most (see
        :func:`~critiquebench.judges._proof.owned_failure`), plus its lint and type
        findings where the static checkers can still read it."""
        started = time.perf_counter()
        result = owned_failure(case, kind, message, started)
        if self.static is None:
            return result
        try:
            report = self.static.check(artifact, case.prompt)
        except Exception:  # the checkers' own failure: the tests' count stands alone
            return result
        return replace(result, findings=report.findings if report.error is None else ())

    def _attempt(
        self,
        case: Case,
        artifact: str,
        plans: list[PlannedCheck],
        limits: SandboxLimits,
        meanwhile: _StaticRead | None = None,
    ) -> Interpretation:
        nonce = secrets.token_hex(16)
        request = attempt_request(case, artifact, plans, limits, nonce)
        try:
            raw = judge_attempt(self.sandbox, request, meanwhile)
        except SandboxUnavailable as exc:
            return Interpretation([], 0, f"sandbox unavailable: {exc}", {})
        return interpret(plans, raw, nonce, limits)

    def _planned(self, case: Case) -> list[PlannedCheck]:
        """The case's checks, planned once per judge (parsing them is most of the
        parent's share of an attempt: ~1 ms of every attempt, 8cb406f); a plan is never
        changed after it is made."""
        checks = case.checks
        # The suite's own code joins the entry point in the key: its helpers are planned.
        trusted = trusted_code(case.setup, case.prompt, case.prompt_is_code)
        entry_point = f"{case.entry_point}\0{trusted}"
        with self._lock:
            seen = self._by_identity.get(id(checks))
        if seen is not None and seen[0] is checks and seen[1] == entry_point:
            return seen[2]
        key = (entry_point, repr(checks))
        with self._lock:
            known = self._plans.get(key)
        if known is None:
            known = plan_checks(checks, case.entry_point, trusted)
            with self._lock:
                self._plans[key] = known
        with self._lock:
            if len(self._by_identity) >= _IDENTITY_ENTRIES:
                self._by_identity.clear()  # cases sent from elsewhere are new objects each time
            self._by_identity[id(checks)] = (checks, entry_point, known)
        return known

    def _limits_for(self, case: Case, plans: list[PlannedCheck]) -> SandboxLimits:
        """Timeouts scaled from the reference solution's own time (measured once per case)."""
        key = hashlib.sha256(
            (case.reference_solution + "\0" + case.setup + "\0" + repr(case.checks)).encode()
        ).hexdigest()
        with self._lock:
            known = self._reference_s.get(key)
        if known is None:
            # Timed under generous limits: under the floor's, a reference slower than the
            # floor would stop at it, and the limits scaled from it would be the floor's.
            timing = replace(
                self.limits,
                check_timeout_s=max(self.limits.check_timeout_s, _REFERENCE_CHECK_S),
                wall_s=max(self.limits.wall_s, _REFERENCE_CHECK_S * min(len(case.checks), 5)),
            )
            judged = self._attempt(case, case.reference_solution, plans, timing)
            known = max(judged.times.values(), default=0.0)
            with self._lock:
                self._reference_s[key] = known
        per_check = max(self.limits.check_timeout_s, self.limits.timeout_multiple * known)
        wall = max(self.limits.wall_s, per_check * min(len(case.checks), 5))
        return replace(self.limits, check_timeout_s=per_check, wall_s=wall)


CANARY_CASE = Case(
    id="canary/python",
    prompt="Write add(a, b) returning a + b.",
    entry_point="add",
    checks=(
        Check(source="assert add(1, 2) == 3", origin="heldout", line=1),
        Check(source="assert add(-1, 1) == 0", origin="heldout", line=2),
    ),
)
CANARY_ANSWER = "def add(a: int, b: int) -> int:\n    return a + b\n"


class _StaticRead:
    """The static checks of one answer, run once (while its attempt is in the sandbox)."""

    def __init__(self, checker: StaticChecker, case: Case, artifact: str) -> None:
        self._checker, self._case, self._artifact = checker, case, artifact
        self._report: StaticReport | None = None

    def __call__(self) -> None:
        if self._report is not None:
            return
        try:
            self._report = self._checker.check(self._artifact, self._case.prompt)
        except Exception as exc:  # check() returns its errors; this is a last fence
            self._report = StaticReport(error=f"static checks: {type(exc).__name__}: {exc}")

    def report(self) -> StaticReport:
        """The report; read now if the attempt ended before it was (it never raises)."""
        self()
        return self._report or StaticReport(error="static checks: no report")


def _timed_out(judged: Interpretation) -> bool:
    return any(failure.kind == "timeout" for failure in judged.failures)


def probe_sandbox(judge: PythonJudge | None = None) -> str:
    """Judge a trivial artifact once and describe the fences in force.

    Called once per run so a weaker sandbox (no bubblewrap, no namespaces) is stated
    in the log and the runs table instead of silently assumed.
    """
    judge = judge or PythonJudge()
    if judge.static is not None:
        # mypy's loop starts while the probe's sandbox worker and ruff's server start, not
        # after them; the probe's own check then waits for that loop (one per checker).
        # Measured when the probe's check started a second loop of its own instead
        # (bench/fixed_cost.py, a 2-unit flow run after warm_start, 3 alternated runs each
        # at load 20-30 on 2 cores): its 2 units took 0.9 s with this thread and 5.9 s
        # without (and 0.8 s in main's run, 4.5 s after warm_start without it); in the
        # library loop, where the probe is on the critical path, no gain (the run ended at
        # 16.8 s with it, 17.0 s without). Waiting for the one loop rather than starting a
        # second: the 2-unit library run used 2.85 against 3.80 CPU-s, its probe ended at
        # 6.8 against 6.4 s (ranges 4.7-9.1 and 6.1-8.0 s; --paths library --roots, 3
        # alternated runs each at load 11-16). The flow's 5 s is ~15% of a 1,000-unit
        # run's ~30 s on a quiet host, past issue 25's 5% bar even if load inflated it
        # several times over: kept.
        threading.Thread(target=judge.static.warm, name="mypy-warm", daemon=True).start()
    probe = Case(
        id="sandbox-probe",
        prompt="",
        entry_point="probe",
        checks=(Check(source="assert probe() == 1", origin="feedback"),),
    )
    result = judge(probe, "def probe():\n    return 1\n")
    if result.infrastructure_error:
        return f"sandbox broken: {result.infrastructure_error}"
    return judge.describe()
