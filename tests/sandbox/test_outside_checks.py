"""Loop-shaped checks are decided in the trusted parent, so forging them gains nothing.

Each attack is a wrong ``add`` (``a - b``) that tries to make loop-shaped checks pass
from inside the sandbox: shadowing ``range``/``all`` in its own module, patching
``random.randint`` or ``math.fabs``, or writing "pass" lines for every check on the
results channel before any check runs. Decided in the parent, each scores the honest
wrong answer's defects.
"""

from __future__ import annotations

import pytest

from critiquebench.judges import PythonJudge
from critiquebench.suites import Case, Check

CHECKS = (
    "for x in range(2, 8):\n    assert candidate(x, x) == 2 * x",
    "import random",
    "for i in range(20):\n"
    "    x, y = (random.randint(1, 1000), random.randint(1, 1000))\n"
    "    assert add(x, y) == x + y",
    "import math",
    "for x in range(3):\n    assert math.fabs(add(x, 1) - (x + 1)) < 1e-06",
    "for v in [1, 2, 3]:\n    assert all([add(v, 0) == v])",
    "assert True",
)
CASE = Case(
    id="t/loops",
    prompt="",
    entry_point="add",
    checks=tuple(
        Check(source=source, origin="heldout", line=index + 1)
        for index, source in enumerate(CHECKS)
    ),
)
WRONG = "def add(a, b):\n    return a - b\n"
# The loops over x, x + y, x + 1, and v + 0 (which a - b gets right): 3 checks fail.
HONEST_WRONG_DEFECTS = 3

FORGER = "pass lines forged with the nonce found in memory"
ATTACKS = {
    "range and all shadowed in the answer's module": (
        "range = lambda *a: iter(())\nall = lambda *a: True\n" + WRONG
    ),
    "random.randint and math.fabs patched": (
        "import math, random\n"
        "random.randint = lambda a, b: 0\n"
        "math.fabs = lambda v: 0.0\n"
        "def add(a, b):\n    return a - b if a or b else 0\n"
    ),
    "pass lines forged with the nonce found in memory": (
        "import sys\n"
        "frame = sys._getframe()\n"
        "while frame is not None:\n"
        "    owner = frame.f_locals.get('self')\n"
        "    if owner is not None and hasattr(owner, 'emit') and hasattr(owner, 'request'):\n"
        "        for index in range(len(owner.request['checks'])):\n"
        "            owner.emit(e='check', i=index, kind='pass', t=0.0)\n"
        "        break\n"
        "    frame = frame.f_back\n" + WRONG
    ),
}


def test_the_loop_checks_are_decided_in_the_parent(judge: PythonJudge) -> None:
    honest = judge(CASE, WRONG)
    assert honest.checks_inside == 0
    assert honest.defects() == HONEST_WRONG_DEFECTS
    right = judge(CASE, "def add(a, b):\n    return a + b\n")
    assert right.passed, right.failures


@pytest.mark.parametrize("name", sorted(set(ATTACKS) - {FORGER}))
def test_a_patched_loop_check_scores_the_true_defects(judge: PythonJudge, name: str) -> None:
    result = judge(CASE, ATTACKS[name])
    assert result.infrastructure_error is None
    assert result.defects() == HONEST_WRONG_DEFECTS, result.failures
    assert not any(failure.inside for failure in result.failures)


def test_forged_pass_lines_hide_no_failing_check(judge: PythonJudge) -> None:
    honest = {failure.line for failure in judge(CASE, WRONG).failures}
    result = judge(CASE, ATTACKS[FORGER])
    assert result.infrastructure_error is None
    # Each honestly failing check still fails. A "pass" line on a check the answer gets
    # right is a malformed result of its own making (a defect, never a pass).
    assert honest <= {failure.line for failure in result.failures}, result.failures
    assert result.defects() >= HONEST_WRONG_DEFECTS
