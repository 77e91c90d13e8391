"""Feedback that can teach: the uninformative-check detector and HumanEval's lent tests."""

from __future__ import annotations

import pytest

from critiquebench.suites import (
    LENT_TAG_PREFIX,
    candidate_names,
    feedback_cannot_fail,
    load_suite,
    uninformative_reason,
)
from tests.helpers import make_case

REACH_ADD = candidate_names("add")


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("assert True, 'This prints if this assert fails 1'", "constant True"),
        ("assert 1", "constant 1"),
        ("assert 1 == 1", "never calls"),
        ("assert (add(1, 2) == 4, 'add is wrong')", "non-empty tuple"),
        ("assert x == 3, add(1, 2)", "never calls"),  # the message runs only on failure
        ("print('hello')", "never calls"),
        ("pass", "never calls"),
        ("assert add(1,", "not valid Python"),
    ],
)
def test_checks_that_no_candidate_can_fail_are_named(source: str, reason: str) -> None:
    found = uninformative_reason(source, REACH_ADD)
    assert found is not None and reason in found


@pytest.mark.parametrize(
    "source",
    [
        "assert add(1, 2) == 3",
        "assert candidate(1, 2) == 3",
        "assert not add(0, 0)",
        "add(1, 2)",  # can still fail by raising
        "for a in range(3):\n    assert add(a, 0) == a",
    ],
)
def test_checks_that_call_the_candidate_are_informative(source: str) -> None:
    assert uninformative_reason(source, REACH_ADD) is None


def test_setup_helpers_and_constants_that_use_the_candidate_count() -> None:
    setup = "def ok():\n    return add(1, 2) == 3\ndef via():\n    return ok()\nSUM = add(2, 2)\n"
    reaching = candidate_names("add", setup)
    assert {"ok", "via", "SUM"} <= reaching
    assert uninformative_reason("assert via()", reaching) is None
    assert uninformative_reason("assert SUM == 4", reaching) is None
    assert (
        uninformative_reason("assert LIMIT == 4", candidate_names("add", "LIMIT = 4")) is not None
    )


def test_a_case_is_flagged_only_when_every_feedback_check_cannot_fail() -> None:
    assert feedback_cannot_fail(make_case(feedback=("assert True", "assert add(1, 2) == 3"))) == ()
    reasons = feedback_cannot_fail(make_case(feedback=("assert True", "assert 2 > 1")))
    assert len(reasons) == 2 and "`assert True`" in reasons[0]
    assert feedback_cannot_fail(make_case(feedback=())) == ("the case has no feedback checks",)


# Before the fix, their only feedback check was `assert True, '...'`.
HOLLOW_FEEDBACK = [f"HumanEval/{n}" for n in (66, 68, 74, 83, 84, 88, 101, 105, 115, 116, 128, 159)]


def test_every_humaneval_case_has_an_informative_feedback_check() -> None:
    cases = load_suite("humaneval")
    assert [case.id for case in cases if feedback_cannot_fail(case)] == []
    lent = {case.id for case in cases if any(t.startswith(LENT_TAG_PREFIX) for t in case.tags)}
    assert set(HOLLOW_FEEDBACK) <= lent


@pytest.mark.parametrize("case_id", HOLLOW_FEEDBACK)
def test_lent_check_is_a_real_test_recorded_in_the_tags(case_id: str) -> None:
    case = next(c for c in load_suite("humaneval") if c.id == case_id)
    (tag,) = [t for t in case.tags if t.startswith(LENT_TAG_PREFIX)]
    feedback = case.checks_from(frozenset({"feedback"}))
    assert len(feedback) == 1
    assert feedback[0].line == int(tag.removeprefix(LENT_TAG_PREFIX))
    assert "candidate(" in feedback[0].source
    # Lent, not copied: the statement is no longer among the held-out checks.
    assert feedback[0].source not in {c.source for c in case.checks_from(frozenset({"heldout"}))}
