"""Every halt rule of SPEC section 3, driven through the compiled graph by a scripted model."""

from __future__ import annotations

import pytest

from critiquebench.judges import PythonJudge
from critiquebench.loop import LoopDependencies, LoopSettings, run_loop
from critiquebench.models import ScriptedProvider
from tests.helpers import GOOD_ADD, WRONG_ADD, fenced, make_case

# Three feedback checks so defect counts can move up and down.
CASE = make_case(
    feedback=("assert add(1, 2) == 3", "assert add(2, 2) == 4", "assert add(5, 0) == 5"),
    heldout=("assert add(-1, 1) == 0",),
)
ONE_WRONG = "def add(a, b):\n    return a + b if a != 2 else 0"  # fails add(2, 2)
# Three different artifacts that each fail add(1, 2) and add(2, 2).
TWO_WRONG = "def add(a, b):\n    return 5"
TWO_WRONG_B = "def add(a, b):\n    return a if a == 5 else 0"
TWO_WRONG_C = "def add(a, b):\n    return b + a if b == 0 else -1"


def _run(
    judge: PythonJudge, answers: list[str], **settings: object
) -> tuple[object, ScriptedProvider]:
    provider = ScriptedProvider([fenced(a) for a in answers])
    deps = LoopDependencies(provider=provider, judge=judge)
    outcome = run_loop(CASE, deps, LoopSettings(**settings))  # type: ignore[arg-type]
    return outcome, provider


def test_visible_clean_on_first_draft(judge: PythonJudge) -> None:
    outcome, provider = _run(judge, [GOOD_ADD])
    assert outcome.halt == "visible_clean"
    assert outcome.retry_count == 0
    assert len(provider.requests) == 1


def test_visible_clean_after_a_fix(judge: PythonJudge) -> None:
    outcome, _ = _run(judge, [WRONG_ADD, GOOD_ADD])
    assert outcome.halt == "visible_clean"
    assert [a.feedback_defects for a in outcome.attempts] == [2, 0]
    assert outcome.final.iteration == 1


def test_retry_limit_halts_at_the_retry_limit(judge: PythonJudge) -> None:
    outcome, provider = _run(judge, [WRONG_ADD, TWO_WRONG, ONE_WRONG], retry_limit=2)
    assert outcome.halt == "retry_limit"
    assert outcome.retry_count == 2
    assert len(provider.requests) == 3
    assert outcome.escalated and outcome.escalation is not None


def test_no_progress_when_the_artifact_repeats_modulo_whitespace(judge: PythonJudge) -> None:
    outcome, _ = _run(judge, [WRONG_ADD, WRONG_ADD.replace("return a - b", "return   a -   b")])
    assert outcome.halt == "no_progress"


def test_loop_detected_when_an_earlier_artifact_returns(judge: PythonJudge) -> None:
    outcome, _ = _run(judge, [TWO_WRONG, ONE_WRONG, TWO_WRONG])
    assert outcome.halt == "loop_detected"


def test_stagnation_after_patience_rounds_without_fewer_failures(judge: PythonJudge) -> None:
    outcome, _ = _run(judge, [TWO_WRONG, TWO_WRONG_B, TWO_WRONG_C], stagnation_patience=2)
    assert outcome.halt == "stagnation"
    assert [a.feedback_defects for a in outcome.attempts] == [2, 2, 2]


def test_stagnation_with_patience_one_stops_after_one_flat_round(judge: PythonJudge) -> None:
    outcome, provider = _run(judge, [TWO_WRONG, TWO_WRONG_B], stagnation_patience=1)
    assert outcome.halt == "stagnation" and len(provider.requests) == 2


def test_default_patience_never_cuts_the_retry_limit_short(judge: PythonJudge) -> None:
    # Failures stay at 2 until the third fix lands: with retry limit 3 the loop must
    # reach it (the old fixed patience of 2 stopped it at round 2 as "stagnation").
    answers = [TWO_WRONG, TWO_WRONG_B, TWO_WRONG_C, GOOD_ADD]
    outcome, provider = _run(judge, answers, retry_limit=3, token_budget=None)
    assert outcome.halt == "visible_clean" and outcome.final.iteration == 3
    assert [a.feedback_defects for a in outcome.attempts] == [2, 2, 2, 0]
    assert len(provider.requests) == 4


def test_default_patience_is_the_retry_limit() -> None:
    assert LoopSettings(retry_limit=5).patience == 5
    assert LoopSettings(retry_limit=0).patience == 1
    assert LoopSettings(retry_limit=5, stagnation_patience=2).patience == 2
    with pytest.raises(ValueError, match="stagnation_patience"):
        LoopSettings(stagnation_patience=0)


def test_token_budget_stops_the_loop(judge: PythonJudge) -> None:
    outcome, _ = _run(judge, [WRONG_ADD, TWO_WRONG], token_budget=5)
    assert outcome.halt == "token_budget"
    assert outcome.tokens_in + outcome.tokens_out > 5


def test_model_error_is_an_infrastructure_error_never_scored_as_defects(judge: PythonJudge) -> None:
    outcome, _ = _run(judge, [])
    assert outcome.halt == "error"
    assert outcome.error == "provider: actor call failed: scripted provider has no answers left"
    # Nothing was produced, so nothing is judged: no attempt, no defects invented.
    assert outcome.attempts == () and outcome.final.defects == 0


def test_model_error_mid_loop_keeps_the_attempts_and_sets_the_error(judge: PythonJudge) -> None:
    outcome, provider = _run(judge, [WRONG_ADD])  # the fix call finds no answer left
    assert outcome.halt == "error" and len(provider.requests) == 2
    assert outcome.error is not None and outcome.error.startswith("provider: fixer call failed")
    assert [a.feedback_defects for a in outcome.attempts] == [2]


def test_final_answer_is_the_best_attempt_not_the_last(judge: PythonJudge) -> None:
    outcome, _ = _run(judge, [ONE_WRONG, TWO_WRONG, TWO_WRONG_B], retry_limit=2)
    assert outcome.halt == "retry_limit"
    assert outcome.final.iteration == 0
    assert outcome.final.artifact.strip() == ONE_WRONG


def test_arm_a_generates_once_and_never_fixes(judge: PythonJudge) -> None:
    outcome, provider = _run(judge, [WRONG_ADD, GOOD_ADD], arm="A")
    assert outcome.halt == "single_draft"
    assert len(provider.requests) == 1
    assert not outcome.escalated


def test_fix_prompt_carries_requirement_artifact_failures_and_history(judge: PythonJudge) -> None:
    _, provider = _run(judge, [TWO_WRONG, ONE_WRONG, GOOD_ADD])
    third_prompt = provider.requests[2][-1].content
    assert "Write a Python function `add(a, b)`" in third_prompt
    assert ONE_WRONG in third_prompt
    assert "assert add(2, 2) == 4" in third_prompt and "expected: 4" in third_prompt
    assert "attempt 0: 2 defect(s)" in third_prompt
    assert "Fix only what the defects above point at" in third_prompt


def test_loop_sees_only_feedback_failures_unless_feedback_all(judge: PythonJudge) -> None:
    heldout_only_bug = "def add(a, b):\n    return a + b if a >= 0 else 99"
    outcome, provider = _run(judge, [heldout_only_bug])
    assert outcome.halt == "visible_clean" and outcome.final.defects == 1
    outcome, provider = _run(judge, [heldout_only_bug, GOOD_ADD], feedback="all")
    assert outcome.halt == "visible_clean" and outcome.final.defects == 0
    assert "add(-1, 1)" in provider.requests[1][-1].content


@pytest.mark.parametrize("retry_limit", [0, 1, 3, 8])
def test_recursion_limit_covers_the_longest_loop(judge: PythonJudge, retry_limit: int) -> None:
    # Distinct artifacts whose defects alternate 2, 3, 2, ...: no other rule can fire.
    answers = [
        f"def add(a, b):\n    return {f'-1000 - {n}' if n % 2 else f'5 + 0 * {n}'}"
        for n in range(retry_limit + 1)
    ]
    outcome, _ = _run(judge, answers, retry_limit=retry_limit, token_budget=None)
    assert outcome.retry_count == retry_limit
