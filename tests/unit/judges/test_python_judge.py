from __future__ import annotations

import pytest

from critiquebench.judges import JudgeSet, PythonJudge, SandboxLimits
from critiquebench.judges.python._plan import PlannedCheck
from critiquebench.suites import Check
from tests.helpers import GOOD_ADD, WRONG_ADD, make_case


def test_correct_artifact_has_no_defects(judge: PythonJudge) -> None:
    result = judge(make_case(), GOOD_ADD)
    assert result.passed
    assert result.defects() == 0
    assert result.checks_passed == result.checks_total == 3


def test_each_failing_assertion_is_reported_with_expected_and_actual(judge: PythonJudge) -> None:
    result = judge(make_case(), WRONG_ADD)
    assert result.defects() == 2  # add(1,2) and add(-1,1) fail; add(0,0) passes
    first = result.failures[0]
    assert first.kind == "assertion"
    assert first.source == "assert add(1, 2) == 3"
    assert (first.expected, first.actual) == ("3", "-1")
    assert first.origin == "feedback"
    assert result.failures[1].origin == "heldout"
    assert result.defects(frozenset({"feedback"})) == 1


def test_syntax_error_is_one_defect_plus_every_check_not_run(judge: PythonJudge) -> None:
    result = judge(make_case(), "def add(a, b)\n    return a + b")
    kinds = [failure.kind for failure in result.failures]
    assert kinds == ["syntax", "not_run", "not_run", "not_run"]
    assert result.failures[0].line == 1


def test_exception_at_import_is_reported_as_import(judge: PythonJudge) -> None:
    result = judge(make_case(), "import not_a_module_xyz\n" + GOOD_ADD)
    assert result.failures[0].kind == "import"
    assert "ModuleNotFoundError" in result.failures[0].message


def test_missing_entry_point_is_reported(judge: PythonJudge) -> None:
    result = judge(make_case(), "def plus(a, b):\n    return a + b")
    assert result.failures[0].kind == "import"
    assert "'add'" in result.failures[0].message


def test_exception_inside_a_check_is_an_error_not_a_crash(judge: PythonJudge) -> None:
    code = "def add(a, b):\n    if a < 0:\n        raise ValueError('negative')\n    return a + b"
    result = judge(make_case(), code)
    assert [f.kind for f in result.failures] == ["error"]
    assert "ValueError: negative" in result.failures[0].message


def test_infinite_loop_in_one_check_is_stopped_and_others_still_run() -> None:
    code = "def add(a, b):\n    while a < 0:\n        pass\n    return a + b"
    result = PythonJudge(SandboxLimits(check_timeout_s=0.5))(make_case(), code)
    assert [f.kind for f in result.failures] == ["timeout"]
    assert result.checks_passed == 2


def test_run_past_the_wall_clock_is_killed_and_owned_once_a_control_is_healthy() -> None:
    # A sleep that ignores the per-check timer (the signal is blocked) still ends at the
    # attempt's wall clock. With its CPU budget unused that is only a suspicion; judged
    # again beside the judge's canary (the case has no reference), it is the answer's.
    code = (
        "import signal, time\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
        "def add(a, b):\n    time.sleep(60)\n"
    )
    limits = SandboxLimits(wall_s=0.4, check_timeout_s=0.2)
    judge = PythonJudge(limits, static=None)
    try:
        alone = judge(make_case(), code)
        result = JudgeSet({"python": judge})(make_case(), code)
    finally:
        judge.close()
    assert alone.infrastructure_error and "wall clock" in alone.infrastructure_error
    assert result.infrastructure_error is None
    kinds = [f.kind for f in result.failures]
    assert kinds == ["timeout"] + ["not_run"] * 3
    assert "canary" in result.failures[0].message


def test_candidate_prints_cannot_forge_results(judge: PythonJudge) -> None:
    code = 'print(\'{"event": "done"}\')\n' + WRONG_ADD
    result = judge(make_case(), code)
    assert result.defects() == 2


def test_a_case_s_checks_are_planned_once_and_judge_every_attempt_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import critiquebench.judges.python._judge as python_judge

    planned: list[str] = []
    plan = python_judge.plan_checks

    def counted(
        checks: tuple[Check, ...], entry_point: str, trusted: str = ""
    ) -> list[PlannedCheck]:
        planned.append(entry_point)
        return plan(checks, entry_point, trusted)

    monkeypatch.setattr(python_judge, "plan_checks", counted)
    judge = PythonJudge(static=None)
    try:
        codes = (WRONG_ADD, GOOD_ADD, WRONG_ADD)
        wrong, good, wrong_again = (judge(make_case(), code) for code in codes)
        assert planned == ["add"]
        assert good.passed and not wrong.passed
        assert (wrong_again.failures, wrong_again.checks_passed) == (
            wrong.failures,
            wrong.checks_passed,
        )
        # The same checks under another name are another plan.
        other = make_case(heldout=())
        assert judge(other, GOOD_ADD).checks_total == 1 and planned == ["add", "add"]
    finally:
        judge.close()


def test_the_same_case_object_finds_its_plan_without_reading_its_checks_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A run judges one Case object for every arm and rep; the content key (a repr of
    # every check) is needed only for a case seen first, or sent as a new object.
    judge = PythonJudge(static=None)
    try:
        case = make_case()
        assert judge(case, GOOD_ADD).passed
        shown: list[str] = []
        real_repr = Check.__repr__

        def counted_repr(self: Check) -> str:
            shown.append(self.source)
            return real_repr(self)

        monkeypatch.setattr(Check, "__repr__", counted_repr)
        assert not judge(case, WRONG_ADD).passed
        assert judge(case, GOOD_ADD).passed
        assert shown == []
        copy = case.model_copy(deep=True)  # equal content, another object: by content
        assert judge(copy, GOOD_ADD).passed and len(shown) == len(case.checks)
        assert judge(copy, GOOD_ADD).passed and len(shown) == len(case.checks)
        # Another entry point over the very same checks is another plan.
        renamed = case.model_copy(update={"entry_point": "plus"})
        assert not judge(renamed, GOOD_ADD).passed
    finally:
        judge.close()
