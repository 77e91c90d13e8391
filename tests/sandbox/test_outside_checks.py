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


POLY_PROMPT = '''import math


def poly(xs: list, x: float):
    """Evaluates polynomial with coefficients xs at point x."""
    return sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])


def find_zero(xs: list):
    """Find x such that poly(xs, x) == 0."""
'''
POLY_CASE = Case(
    id="t/poly",
    prompt=POLY_PROMPT,
    entry_point="find_zero",
    prompt_is_code=True,
    checks=tuple(
        Check(source=source, origin="heldout", line=index + 1)
        for index, source in enumerate(
            (
                "import math",
                "import random",
                "rng = random.Random(42)",
                "import copy",
                "for _ in range(20):\n"
                "    ncoeff = 2 * rng.randint(1, 4)\n"
                "    coeffs = []\n"
                "    for _ in range(ncoeff):\n"
                "        coeff = rng.randint(-10, 10)\n"
                "        if coeff == 0:\n"
                "            coeff = 1\n"
                "        coeffs.append(coeff)\n"
                "    solution = candidate(copy.deepcopy(coeffs))\n"
                "    assert math.fabs(poly(coeffs, solution)) < 0.0001",
            )
        )
    ),
)
RIGHT_FIND_ZERO = (
    POLY_PROMPT
    + "    low, high = -1.0, 1.0\n"
    + "    while poly(xs, low) * poly(xs, high) > 0:\n"
    + "        low, high = low * 2.0, high * 2.0\n"
    + "    while high - low > 1e-10:\n"
    + "        middle = (low + high) / 2.0\n"
    + "        if poly(xs, middle) * poly(xs, low) > 0:\n"
    + "            low = middle\n"
    + "        else:\n"
    + "            high = middle\n"
    + "    return low\n"
)
POLY_ATTACKS = {
    "honest wrong root": POLY_PROMPT + "    return 0.0\n",
    "math.fabs patched": "import math\nmath.fabs = lambda v: 0.0\n"
    + POLY_PROMPT
    + "    return 0.0\n",
    "poly redefined": POLY_PROMPT.replace("return sum(", "return 0 * sum(") + "    return 0.0\n",
}


def test_a_helper_of_the_prompt_is_run_by_the_parent(judge: PythonJudge) -> None:
    right = judge(POLY_CASE, RIGHT_FIND_ZERO)
    assert right.checks_inside == 0
    assert right.passed, right.failures


@pytest.mark.parametrize("name", sorted(POLY_ATTACKS))
def test_a_forged_helper_check_scores_the_true_defects(judge: PythonJudge, name: str) -> None:
    result = judge(POLY_CASE, POLY_ATTACKS[name])
    assert result.infrastructure_error is None
    assert result.defects() == 1, result.failures
    assert [failure.line for failure in result.failures] == [5]
    assert not result.failures[0].inside
