"""The attempt API the Python and sql judges share: request, retry, and the readers of
what came back (no worker is started: the sandbox here is a stand-in)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from critiquebench.judges.python._plan import plan_checks
from critiquebench.judges.sandbox import SandboxLimits, read_events, stalled, unfinished_failure
from critiquebench.judges.sandbox._attempt import attempt_request, judge_attempt
from critiquebench.judges.sandbox._pool import RawAttempt, Sandbox, SandboxMode, SandboxUnavailable
from tests.helpers import make_case

_MODE = SandboxMode(False, ("/nonexistent/python",), map_users=False)
_ANSWER = RawAttempt({"ok": True}, b"")


class _Scripted(Sandbox):
    """Answers each request with the next of ``outcomes`` (an exception is raised)."""

    outcomes: list[RawAttempt | Exception]
    calls: int = 0

    def judge(self, request: dict[str, Any]) -> RawAttempt:
        self.calls += 1
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def _sandbox(*outcomes: RawAttempt | Exception) -> _Scripted:
    sandbox = _Scripted(_MODE)
    sandbox.outcomes = list(outcomes)
    return sandbox


def test_a_healthy_worker_is_asked_once() -> None:
    sandbox = _sandbox(_ANSWER)
    assert judge_attempt(sandbox, {}) is _ANSWER and sandbox.calls == 1


def test_one_lost_worker_is_retried_on_a_fresh_one() -> None:
    sandbox = _sandbox(SandboxUnavailable("killed"), _ANSWER)
    assert judge_attempt(sandbox, {}) is _ANSWER and sandbox.calls == 2


def test_two_lost_workers_in_a_row_raise_the_second_failure() -> None:
    sandbox = _sandbox(SandboxUnavailable("first"), SandboxUnavailable("second"), _ANSWER)
    with pytest.raises(SandboxUnavailable, match="second"):
        judge_attempt(sandbox, {})
    assert sandbox.calls == 2


def test_other_errors_are_not_retried() -> None:
    sandbox = _sandbox(RuntimeError("bug"), _ANSWER)
    with pytest.raises(RuntimeError, match="bug"):
        judge_attempt(sandbox, {})
    assert sandbox.calls == 1


class _Begun(_Scripted):
    """Begins each attempt with the next outcome (read by ``result``); logs each step."""

    log: list[str]

    def begin(self, request: dict[str, Any]) -> Any:
        self.log.append("begin")
        outcome = self.outcomes.pop(0)
        log = self.log

        class Pending:
            def result(self) -> RawAttempt:
                log.append("result")
                if isinstance(outcome, Exception):
                    raise outcome
                return outcome

            def discard(self) -> None:
                log.append("discard")

        return Pending()

    def judge(self, request: dict[str, Any]) -> RawAttempt:
        self.log.append("judge")
        return super().judge(request)


def _begun(*outcomes: RawAttempt | Exception) -> tuple[_Begun, list[str]]:
    sandbox = _Begun(_MODE)
    sandbox.outcomes, sandbox.log = list(outcomes), []
    return sandbox, sandbox.log


def test_meanwhile_runs_once_between_sending_the_attempt_and_reading_it() -> None:
    sandbox, log = _begun(_ANSWER)
    assert judge_attempt(sandbox, {}, lambda: log.append("meanwhile")) is _ANSWER
    assert log == ["begin", "meanwhile", "result"]


def test_a_worker_lost_meanwhile_is_retried_without_running_meanwhile_again() -> None:
    sandbox, log = _begun(SandboxUnavailable("killed"), _ANSWER)
    assert judge_attempt(sandbox, {}, lambda: log.append("meanwhile")) is _ANSWER
    assert log == ["begin", "meanwhile", "result", "judge"]


def test_an_error_meanwhile_gives_the_attempt_up_unread() -> None:
    sandbox, log = _begun(_ANSWER)

    def failing() -> None:
        raise RuntimeError("static checks broke")

    with pytest.raises(RuntimeError, match="static checks broke"):
        judge_attempt(sandbox, {}, failing)
    assert log == ["begin", "discard"]


def test_the_request_carries_the_case_the_plans_and_the_limits() -> None:
    case = make_case(feedback=("assert add(1, 2) == 3",), heldout=())
    case = case.model_copy(update={"setup": "import math"})
    limits = SandboxLimits(wall_s=7.0, check_timeout_s=2.0, cpu_s=9, processes=4)
    plans = plan_checks(case.checks, case.entry_point)
    request = attempt_request(case, "def add(a, b): return a + b", plans, limits, "n0")
    assert request == {
        "nonce": "n0",
        "code": "def add(a, b): return a + b",
        "setup": "import math",
        "entry_point": "add",
        "checks": [plans[0].request()],
        "check_cpu_s": 2.0,
        "check_wall_s": 12.0,
        "cpu_budget_s": 7.0,
        "wall_s": 42.0,
        "results_bytes": 1 << 20,
        "namespaces": True,
        "limits": {
            "cpu_s": 9,
            "memory_bytes": 1 << 30,
            "attempt_memory_bytes": 1 << 30,
            "file_bytes": 8 << 20,
            "tmp_bytes": 64 << 20,
            "processes": 4,
        },
    }
    assert "3" not in json.dumps(request["checks"])  # the expected value stays in the parent


def test_only_events_with_the_nonce_are_read() -> None:
    lines = [
        json.dumps({"n": "n0", "e": "check", "i": 0}),
        "",
        json.dumps({"n": "forged", "e": "done"}),
        "not json",
        json.dumps(["n0"]),
        json.dumps({"n": "n0", "e": "done"}),
    ]
    events, unreadable = read_events("\n".join(lines).encode(), "n0")
    assert [event["e"] for event in events] == ["check", "done"]
    assert unreadable == 3


def test_only_a_wall_clock_with_the_cpu_budget_unused_is_a_suspicion() -> None:
    limits = SandboxLimits(wall_s=10.0)
    # However long it waited for a CPU, an attempt that used its CPU budget is the answer's.
    used = {"timed_out": True, "cpu_exhausted": True, "cpu_s": 10.2, "run_queue_wait_s": 50.0}
    assert stalled(used, "", limits) is None
    suspicion = stalled({"timed_out": True, "cpu_s": 1.25}, "", limits)
    assert suspicion is not None and "1.2 of its 10 CPU-seconds" in suspicion
    assert stalled({"timed_out": True, "cpu_s": "9"}, "", limits) is not None
    assert stalled({}, "stalled", limits) is not None  # a check's wall timer fired
    assert stalled({}, "stuck", limits) is None  # a check stuck past its CPU limit
    assert stalled({}, "", limits) is None


@pytest.mark.parametrize(
    ("report", "kind", "words"),
    [
        ({"timed_out": True}, "timeout", "exceeded its 60s wall clock"),
        ({"timed_out": True, "cpu_exhausted": True}, "timeout", "used its 10 CPU-seconds"),
        ({"cpu_exhausted": True}, "timeout", "used its 10 CPU-seconds"),
        ({"flooded": True}, "crash", "exceeded 1048576 bytes"),
        ({"memory_exceeded": True}, "crash", "more than 1024 MiB together"),
        ({}, "crash", "died before finishing"),
    ],
)
def test_an_unfinished_attempt_says_why_it_stopped(
    report: dict[str, Any], kind: str, words: str
) -> None:
    failure = unfinished_failure(report, SandboxLimits(wall_s=10.0))
    assert failure.kind == kind and words in failure.message


def test_the_per_process_cpu_limit_stays_behind_the_attempts_cpu_budget() -> None:
    case = make_case()
    plans = plan_checks(case.checks, case.entry_point)
    # A slow case's budget (30 CPU-seconds) above the per-process limit (20): the limit
    # rises, so the budget, not a SIGXCPU crash, stops a looping answer.
    request = attempt_request(case, "", plans, SandboxLimits(wall_s=30.0, cpu_s=20), "n")
    assert request["cpu_budget_s"] == 30.0 and request["limits"]["cpu_s"] == 31
