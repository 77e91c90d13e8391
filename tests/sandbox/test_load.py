"""Under load, CPU time decides: looping and self-starving answers are the answers' defects,
never exclusions, and a poison answer cannot spoil the judging of the answers after it.

Each test runs beside ten busy processes (on a two-core machine, five times as many
runnable processes as cores), the load at which the old rule ("the attempt waited
over half its wall clock for a CPU, so the host starved it") excluded nearly every
looping answer. Nothing here asserts a duration.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from critiquebench.judges import JudgeSet, PythonJudge, SandboxLimits
from critiquebench.judges.sandbox._pool import PendingAttempt, Sandbox
from critiquebench.judges.sql._judge import SqlJudge
from critiquebench.suites import Case, Check
from tests.helpers import GOOD_ADD, make_case

BUSY = 10
# Small budgets keep each test to seconds on a loaded machine: CPU decides, so a
# looping answer costs its CPU budget, not the host's load.
LIMITS = SandboxLimits(wall_s=1.0, check_timeout_s=0.25)

# The spinners die with the test process even if it is killed (parent-death signal).
_SPIN = (
    "import ctypes, os, signal\n"
    "ctypes.CDLL(None).prctl(1, signal.SIGKILL)\n"
    "if os.getppid() == 1: raise SystemExit\n"
    "while True: pass\n"
)


@pytest.fixture
def busy() -> Iterator[None]:
    """Ten processes spinning on the CPU beside the judge, killed afterwards."""
    spinners = [subprocess.Popen([sys.executable, "-c", _SPIN]) for _ in range(BUSY)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()


@pytest.fixture(scope="module")
def python_judge() -> Iterator[PythonJudge]:
    """The Python judge with the tests only (the static checkers are not under test)."""
    judge = PythonJudge(LIMITS, static=None)
    try:
        yield judge
    finally:
        judge.close()


PROMPT = '''from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    """ Check if in given list of numbers, are any two numbers closer to each other than
    given threshold.
    >>> has_close_elements([1.0, 2.0, 3.0], 0.5)
    False
    """
'''
REFERENCE = (
    "    for i, a in enumerate(numbers):\n"
    "        for j, b in enumerate(numbers):\n"
    "            if i != j and abs(a - b) < threshold:\n"
    "                return True\n"
    "    return False\n"
)
HUMANEVAL_SHAPED = Case(
    id="HumanEval/0-like",
    prompt=PROMPT,
    entry_point="has_close_elements",
    prompt_is_code=True,
    checks=(
        Check(source="assert candidate([1.0, 2.0, 3.0], 0.5) == False", origin="feedback"),
        Check(
            source="assert candidate([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3) == True", origin="heldout"
        ),
        Check(source="assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 1.0) == True", origin="heldout"),
    ),
    reference_solution=PROMPT + REFERENCE,
)


def _judge(judge: PythonJudge, body: str) -> Any:
    return JudgeSet({"python": judge})(HUMANEVAL_SHAPED, PROMPT + body)


def test_the_reference_passes_under_load(busy: None, python_judge: PythonJudge) -> None:
    assert _judge(python_judge, REFERENCE).passed


def test_an_endless_loop_is_a_timeout_defect_under_load(
    busy: None, python_judge: PythonJudge
) -> None:
    result = _judge(python_judge, "    while True:\n        pass\n")
    assert result.infrastructure_error is None
    assert "timeout" in [failure.kind for failure in result.failures]
    assert result.checks_passed == 0


def test_thirty_busy_children_are_the_answers_timeout_not_starvation(
    busy: None, python_judge: PythonJudge
) -> None:
    body = (
        "    import os\n"
        "    for _ in range(30):\n"
        "        try:\n"
        "            if os.fork() == 0:\n"
        "                while True:\n"
        "                    pass\n"
        "        except OSError:\n"
        "            break\n"
        "    while True:\n"
        "        pass\n"
    )
    result = _judge(python_judge, body)
    assert result.infrastructure_error is None
    assert result.defects() >= 1 and result.checks_passed == 0
    assert "timeout" in [failure.kind for failure in result.failures]


def test_an_answer_that_drops_its_own_priority_beside_busy_children_is_scored(
    busy: None, python_judge: PythonJudge
) -> None:
    body = (
        "    import os\n"
        "    for _ in range(4):\n"
        "        if os.fork() == 0:\n"
        "            while True:\n"
        "                pass\n"
        "    os.nice(19)\n"
        "    while True:\n"
        "        pass\n"
    )
    result = _judge(python_judge, body)
    assert result.infrastructure_error is None
    assert result.defects() >= 1 and result.checks_passed == 0


_POISON = "# kills its sandbox worker\n"


class _Poisoned(Sandbox):
    """A pool whose worker dies while judging any answer marked as poison (as a worker
    the host or an answer killed would); every fresh pool is poisoned alike."""

    def fresh(self) -> Sandbox:
        return _Poisoned(self.mode, self.max_workers)

    def begin(self, request: dict[str, Any]) -> PendingAttempt:
        if _POISON not in str(request.get("code")):
            return super().begin(request)
        # Killed before the attempt is sent: killed after, a quick worker may have
        # answered already, and the poison would pass.
        worker = self._acquire()
        process = worker._process  # the test kills a real worker
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        try:
            worker.start(request)
        except BaseException:
            self._discard(worker)
            raise
        return PendingAttempt(self, worker, request)


def test_a_poison_answer_then_ten_correct_ones_give_ten_passes(busy: None) -> None:
    sandbox = Sandbox.detect()
    poisoned = _Poisoned(sandbox.mode)
    sandbox.close()
    judge = PythonJudge(LIMITS, sandbox=poisoned, static=None)
    judges = JudgeSet({"python": judge})
    case = make_case().model_copy(update={"reference_solution": GOOD_ADD})
    try:
        poison = judges(case, _POISON + GOOD_ADD)
        after = [judges(case, GOOD_ADD) for _ in range(10)]
    finally:
        judge.close()
    # The control (the reference) was judged healthily beside it: the poison owns it.
    assert poison.infrastructure_error is None
    assert poison.failures[0].kind == "crash"
    assert [result.passed for result in after] == [True] * 10


def test_a_loop_inside_one_c_call_is_a_timeout_under_load(
    busy: None, python_judge: PythonJudge
) -> None:
    # sum() over a huge range never returns to the interpreter, so the check's CPU
    # timer cannot interrupt it: the attempt's CPU budget stops it, as a timeout.
    result = _judge(python_judge, "    return sum(range(10**15)) < 0\n")
    assert result.infrastructure_error is None
    assert "timeout" in [failure.kind for failure in result.failures]


SQL_CASE = Case(
    id="sql/total",
    prompt="The total of x.",
    judge="sql",
    judge_data={"schema": "CREATE TABLE t (x INTEGER);"},
    checks=(
        Check(
            source="total of 1 and 2",
            origin="heldout",
            spec={"data": "INSERT INTO t VALUES (1), (2);", "expected": [[3]]},
        ),
    ),
    reference_solution="SELECT sum(x) AS total FROM t",
)


def test_a_sql_function_that_ignores_the_query_interrupt_is_a_timeout_under_load(
    busy: None,
) -> None:
    judge = SqlJudge(SandboxLimits(wall_s=1.0, check_timeout_s=0.5))
    judges = JudgeSet({"sql": judge})
    # levenshtein of two 300,000-character strings: 9e10 steps in one function call,
    # which never looks at DuckDB's interrupt.
    burner = "SELECT levenshtein(repeat('a', 300000), repeat('b', 300000)) AS total FROM t"
    try:
        reference = judges(SQL_CASE, SQL_CASE.reference_solution)
        result = judges(SQL_CASE, burner)
    finally:
        judge.close()
    assert reference.passed
    assert result.infrastructure_error is None
    # Stopped by its CPU time (or, on a host too busy for even that, owned after a proof):
    # a timeout either way.
    assert result.failures
    assert {(failure.kind, failure.code) for failure in result.failures} == {("sql", "timeout")}
