"""Which checks the trusted parent decides, and what still runs inside the sandbox."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from critiquebench.judges import plan_checks, trusted_code
from critiquebench.judges.python import _plan
from critiquebench.suites import BUNDLED_SUITES, Check, load_suite

# Before loops and set-up statements were planned in the parent: 69 of 1,361.
HUMANEVAL_INSIDE = 0


def _checks(*sources: str) -> tuple[Check, ...]:
    return tuple(Check(source=source, origin="heldout") for source in sources)


def _inside_by_suite() -> Counter[str]:
    counts: Counter[str] = Counter()
    for name in BUNDLED_SUITES:
        for case in load_suite(name):
            if case.judge == "python":
                trusted = trusted_code(case.setup, case.prompt, case.prompt_is_code)
                plans = plan_checks(case.checks, case.entry_point, trusted)
                counts[name] += sum(1 for plan in plans if plan.mode == "inside")
    return counts


def test_bundled_suites_run_almost_no_check_inside() -> None:
    counts = _inside_by_suite()
    assert counts["humaneval"] == HUMANEVAL_INSIDE
    assert sum(counts.values()) == HUMANEVAL_INSIDE


def test_a_loop_is_unrolled_into_calls_decided_in_the_parent() -> None:
    (plan,) = plan_checks(
        _checks("for x in range(2, 8):\n    assert candidate(x, x + 1) == str(x)"), "f"
    )
    assert plan.mode == "value"
    assert [call.args for call in plan.calls] == [(x, x + 1) for x in range(2, 8)]
    assert plan.outcome([str(x) for x in range(2, 8)]).passed
    failed = plan.outcome(["2", "3", "4", "9", "6", "7"])
    assert (failed.passed, failed.expected, failed.actual) == (False, "'5'", "'9'")
    # The request names only the calls: no expected value reaches the sandbox.
    assert "str(x)" not in repr(plan.request())


def test_set_up_statements_feed_later_checks() -> None:
    plans = plan_checks(
        _checks(
            "lst = list(range(-9, 10, 2))",
            "odd_sum = sum([i ** 2 for i in lst if i % 2 != 0 and i > 0])",
            "assert candidate(lst) == odd_sum",
        ),
        "f",
    )
    assert [plan.mode for plan in plans] == ["value", "value", "value"]
    assert [len(plan.calls) for plan in plans] == [0, 0, 1]
    assert plans[2].calls[0].args == (list(range(-9, 10, 2)),)
    assert plans[2].outcome([1 + 9 + 25 + 49 + 81]).passed
    assert not plans[2].outcome([0]).passed


def test_what_the_parent_cannot_evaluate_runs_inside_after_its_set_up() -> None:
    plans = plan_checks(
        _checks(
            "import math",
            "import os",
            "y = f(1)",
            "assert math.__loader__ is not None",
            "for x in range(1001):\n    assert f(x) == x",
            "assert helper(f(1)) == 1",
        ),
        "f",
    )
    assert [plan.mode for plan in plans] == ["value", *["inside"] * 5]
    # The set-up the parent took also runs in the sandbox, once, before the next inside check.
    assert plans[1].request()["source"] == "import math\nimport os"
    assert plans[2].request()["source"] == "y = f(1)"


def test_an_assertion_without_a_call_is_decided_in_the_parent() -> None:
    passing, failing = plan_checks(_checks("assert True", "assert 1 == 2, 'never'"), "f")
    assert (passing.mode, passing.calls, passing.outcome([]).passed) == ("value", (), True)
    outcome = failing.outcome([])
    assert (outcome.passed, outcome.message) == (False, "never")


def test_the_suite_s_helper_decides_on_the_answer_s_value() -> None:
    trusted = (
        "import math\n\ndef poly(xs, x):\n    '''doc'''\n"
        "    return sum([c * math.pow(x, i) for i, c in enumerate(xs)])\n"
    )
    (plan,) = plan_checks(
        _checks("solution = f([1, 2])\nassert math.fabs(poly([1, 2], solution)) < 1e-4"), "f"
    )
    assert plan.mode == "inside"  # two statements in one check: not split
    (plan,) = plan_checks(
        _checks(
            "for c in [[1, 2], [-6, 11, -6, 1]]:\n"
            "    solution = f(c)\n"
            "    assert math.fabs(poly(c, solution)) < 1e-4"
        ),
        "f",
        trusted,
    )
    assert plan.mode == "value"
    assert plan.outcome([-0.5, 1.0]).passed
    assert not plan.outcome([-0.5, 0.0]).passed
    # Without the suite's helper the parent cannot decide it.
    (plan,) = plan_checks(_checks("for c in [[1, 2]]:\n    assert poly(c, f(c)) == 0"), "f")
    assert plan.mode == "inside"


def test_an_attempt_is_decided_without_compiling_its_checks_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trusted = "def double(x):\n    y = x * 2\n    return y\n"
    (plan,) = plan_checks(
        _checks("for n in [1, 2]:\n    assert double(f(n)) == 4 * n"), "f", trusted
    )
    assert plan.mode == "value"
    assert plan.outcome([2, 4]).passed  # the first attempt compiles the steps and the helper
    compiled: list[object] = []
    original = _plan.compile_expression

    def counted(tree: Any, filename: str) -> Any:
        compiled.append(tree)
        return original(tree, filename)

    monkeypatch.setattr(_plan, "compile_expression", counted)
    assert plan.outcome([2, 4]).passed
    assert compiled == []
    # A failure still explains itself (expected and actual) from its own evaluation.
    failed = plan.outcome([2, 5])
    assert (failed.passed, failed.expected, failed.actual) == (False, "8", "10")
