"""The trigger judge: reading a decision out of a reply, its defect codes, its suite lines."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from critiquebench.judges import Failure, artifact_format, case_problems
from critiquebench.judges.trigger._decision import MAX_REPLY_CHARS, TRIGGER_FORMAT, parse_decision
from critiquebench.judges.trigger._judge import TriggerJudge
from critiquebench.loop._prompts import fix_messages
from critiquebench.loop._state import Attempt
from critiquebench.suites import Case, Check, CheckOrigin, SuiteFormatError, load_suite
from critiquebench.suites._jsonl import load_jsonl_suite

DESCRIPTION = "Fills in the fields of an existing PDF form and saves the filled-in PDF."
PROMPTS = "Skill: pdf-form-filling\nDescription: {d}\n\nUser query: {q}\n\nTRIGGER or NO_TRIGGER?"


def trigger_case(
    expect: str = "near_miss",
    query: str = "Convert this PDF to a Word document.",
    origin: CheckOrigin = "heldout",
    **data: Any,
) -> Case:
    """A trigger case about the pdf-form-filling skill."""
    judge_data = {
        "skill": "pdf-form-filling", "description": DESCRIPTION, "query": query, "expect": expect,
        **data,
    }  # fmt: skip
    return Case(
        id=f"trigger/pdf-form-filling/{expect}",
        prompt=PROMPTS.format(d=DESCRIPTION, q=query),
        checks=(Check(source="decision", origin=origin, line=1),),
        judge="trigger",
        judge_data=judge_data,
        reference_solution="trigger" if expect == "trigger" else "no_trigger",
    )


@pytest.mark.parametrize(
    ("reply", "decision"),
    [
        ("TRIGGER", "trigger"),
        ("NO_TRIGGER", "no_trigger"),
        ("trigger\n", "trigger"),
        ("no_trigger", "no_trigger"),
        ("NO-TRIGGER", "no_trigger"),
        ("No trigger.", "no_trigger"),
        ("NOTRIGGER", "no_trigger"),
        ("**NO_TRIGGER**\nThe user wants a conversion, which does trigger nothing.", "no_trigger"),
        ("TRIGGER\nReason: the user asks to fill in a form, not NO_TRIGGER territory.", "trigger"),
        ("```\nNO_TRIGGER\n```", "no_trigger"),
        ("```trigger\nNO_TRIGGER\n```", "no_trigger"),  # the fence's info string is no decision
        ("Decision: `TRIGGER`", "trigger"),
        ("The skill should not be triggered here.", "no_trigger"),
        ("It doesn\u2019t trigger: a conversion is not form filling.", "no_trigger"),
        ("Don't trigger.", "no_trigger"),
        ("The skill should trigger.", "trigger"),
        ("Yes", "trigger"),
        ("yes, use it", "trigger"),
        ("No.", "no_trigger"),
        ("Answer: no", "no_trigger"),
        ("Let me think.\n\nNO_TRIGGER", "no_trigger"),  # the first line with a decision counts
        ("Now, TRIGGER", "trigger"),  # "now" is not "no"
        ("Not sure.\nTRIGGER", "trigger"),  # "not" alone is no decision
        ("TRIGGER or NO_TRIGGER", ""),  # both on the decision line: ambiguous
        ("TRIGGER / NO_TRIGGER\nTRIGGER", ""),
        ("No, it should trigger.", ""),
        # How the offline model (SmolLM2-135M) answers: words, not the decision word.
        ("Use this skill for this query.", "trigger"),
        ("Yes, the assistant should use this skill for this query.", "trigger"),
        ("The assistant should not use this skill.", "no_trigger"),
        ("This skill should be used for this query, but you could use another.", "trigger"),
        ("This skill is not applicable to this query.", "no_trigger"),
        ("The skill isn't needed here.", "no_trigger"),
        ("You should use another skill for this.", ""),
        ("To use this skill here, the assistant must not use it.", ""),
        ("The assistant should use this skill. The skill is not used for tags.", "trigger"),
        ("NO_TRIGGER. The query is about triggers of a different kind.", "no_trigger"),
        ("TRIGGER; NO_TRIGGER would miss the form.", "trigger"),
        ("NO_TRIGGER: do not use it for conversions", "no_trigger"),
        ("TRIGGER - but do not use it twice", "trigger"),  # the decision word wins
        ("I cannot tell from the description.", ""),
        ("", ""),
        ("untriggered", ""),
    ],
)
def test_a_decision_is_read_from_many_reply_shapes(reply: str, decision: str) -> None:
    assert parse_decision(reply) == decision
    assert TRIGGER_FORMAT.extract(trigger_case(), reply) == decision


def test_only_the_start_of_a_runaway_reply_is_read() -> None:
    assert parse_decision("x" * MAX_REPLY_CHARS + "\nTRIGGER") == ""
    assert parse_decision("word " * 200_000 + "\nTRIGGER") == ""
    assert parse_decision("TRIGGER\n" + "y" * 10_000_000) == "trigger"


def test_the_registry_gives_the_decision_format_to_the_loop() -> None:
    form = artifact_format("trigger")
    assert form is TRIGGER_FORMAT and form.noun == "decision"
    assert "TRIGGER or NO_TRIGGER" in form.system
    assert form.fenced("trigger") == "TRIGGER" and form.fenced("no_trigger") == "NO_TRIGGER"
    assert "no decision" in form.fenced("")
    assert "```" not in form.fix_request()


@pytest.mark.parametrize("expect", ["trigger", "near_miss", "clear_miss"])
def test_the_simulated_model_answers_right_or_wrong_on_purpose(expect: str) -> None:
    case, judge = trigger_case(expect), TriggerJudge()
    right = TRIGGER_FORMAT.simulated_reply(case, correct=True, attempt=0)
    wrong = TRIGGER_FORMAT.simulated_reply(case, correct=False, attempt=1)
    assert judge(case, TRIGGER_FORMAT.extract(case, right)).passed
    assert judge(case, TRIGGER_FORMAT.extract(case, wrong)).defects() == 1


@pytest.mark.parametrize(
    ("expect", "artifact", "code"),
    [
        ("near_miss", "trigger", "false_trigger"),
        ("clear_miss", "trigger", "false_trigger"),
        ("trigger", "no_trigger", "missed_trigger"),
        ("trigger", "", "no_decision"),
        ("near_miss", "", "no_decision"),
        ("clear_miss", "I am not sure", "no_decision"),
    ],
)
def test_each_wrong_or_missing_decision_is_one_defect_with_its_code(
    expect: str, artifact: str, code: str
) -> None:
    result = TriggerJudge()(trigger_case(expect), artifact)
    assert (result.checks_total, result.checks_passed, result.defects()) == (1, 0, 1)
    (failure,) = result.failures
    assert (failure.kind, failure.code, failure.origin) == ("trigger", code, "heldout")
    assert failure.expected == ("trigger" if expect == "trigger" else "no_trigger")
    assert failure.actual == ("" if code == "no_decision" else artifact)
    assert failure.file == "pdf-form-filling" and failure.source == "decision"
    assert result.defects_by_kind()["trigger"] == 1
    # Held out: a loop fed by feedback checks is not shown the label.
    assert result.visible_to(frozenset({"feedback", "static"})) == ()
    if code == "false_trigger":
        assert expect.replace("_", " ") in failure.describe()


@pytest.mark.parametrize(
    ("expect", "artifact"),
    [("trigger", "trigger"), ("near_miss", "no_trigger"), ("clear_miss", "NO_TRIGGER\nwhy")],
)
def test_a_right_decision_passes(expect: str, artifact: str) -> None:
    result = TriggerJudge()(trigger_case(expect), artifact)
    assert result.passed and (result.checks_total, result.checks_passed) == (1, 1)
    assert result.infrastructure_error is None


def test_a_feedback_check_shows_the_fixer_the_label() -> None:
    result = TriggerJudge()(trigger_case("near_miss", origin="feedback"), "trigger")
    (shown,) = result.visible_to(frozenset({"feedback"}))
    assert "expected: no_trigger" in shown.describe()


def test_a_bad_case_is_an_infrastructure_error_never_an_exception() -> None:
    case = trigger_case().model_copy(update={"judge_data": {"skill": "x"}})
    result = TriggerJudge()(case, "trigger")
    assert result.failures == ()
    assert result.infrastructure_error and "add 'query'" in result.infrastructure_error
    odd = trigger_case().model_copy(update={"checks": ()})
    assert "exactly one check" in (TriggerJudge()(odd, "trigger").infrastructure_error or "")


def test_the_fix_prompt_shows_the_decision_and_asks_for_a_decision() -> None:
    case = trigger_case()
    result = TriggerJudge()(case, "trigger")
    finding = Failure(kind="critic", message="a conversion is not form filling")
    attempt = Attempt(
        iteration=0,
        artifact="trigger",
        result=result,
        feedback_failures=(finding,),
        diff_summary="",
    )
    system, user = fix_messages(case, [attempt])
    assert system.content == TRIGGER_FORMAT.system
    assert "Your previous answer:\nTRIGGER\n" in user.content
    assert "a conversion is not form filling" in user.content
    assert "TRIGGER or NO_TRIGGER" in user.content and "```" not in user.content


GOOD_LINE: dict[str, Any] = {
    "id": "trigger/pdf/1",
    "judge": "trigger",
    "prompt": PROMPTS.format(d=DESCRIPTION, q="Merge these PDFs."),
    "judge_data": {
        "skill": "pdf",
        "description": DESCRIPTION,
        "query": "Merge these PDFs.",
        "expect": "near_miss",
    },
    "heldout_checks": [{"name": "decision"}],
    "reference_solution": "no_trigger",
}


def _line(data: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    """GOOD_LINE with some fields, and some of its judge data, changed."""
    line = {**GOOD_LINE, **fields}
    if data is not None:
        line["judge_data"] = {**GOOD_LINE["judge_data"], **data}
    return line


@pytest.mark.parametrize(
    ("line", "fix"),
    [
        (_line({"expect": "maybe"}), "set 'expect' to one of trigger, near_miss, clear_miss"),
        (_line({"query": ""}), "add 'query'"),
        (_line(judge_data={"skill": "pdf"}), "add 'description'"),
        (_line({"extra": "x"}), "remove unknown key 'extra'"),
        (_line(prompt="Should the skill trigger?"), "prompt: include the judge_data query"),
        (_line(reference_solution="trigger"), "reference_solution: set it to 'no_trigger'"),
        (_line(reference_solution="maybe"), "reference_solution: set it to 'no_trigger'"),
        (_line(heldout_checks=[{"name": "a"}, {"name": "b"}]), "give exactly one check, not 2"),
        (_line(heldout_checks=[{"name": "decision", "expected": "x"}]), "remove its parameters"),
    ],
)
def test_a_bad_suite_line_is_named_by_file_line_and_fix(
    tmp_path: Path, line: dict[str, Any], fix: str
) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(GOOD_LINE) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(SuiteFormatError) as raised:
        load_jsonl_suite(path)
    message = str(raised.value)
    assert f"{path}:2" in message and "judge 'trigger'" in message
    assert fix in message, message


def test_a_good_suite_line_loads_with_its_held_out_check(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(GOOD_LINE) + "\n")
    (case,) = load_jsonl_suite(path)
    assert case_problems(case) == []
    assert [(c.source, c.origin) for c in case.checks] == [("decision", "heldout")]


def test_the_bundled_suite_is_labelled_and_its_references_are_clean() -> None:
    cases = load_suite("trigger")
    judge = TriggerJudge()
    by_skill: dict[str, list[str]] = {}
    for case in cases:
        data = case.judge_data
        assert re.fullmatch(rf"trigger/{re.escape(data['skill'])}/\d+", case.id)
        assert data["description"] in case.prompt and data["query"] in case.prompt
        assert case.judge == "trigger" and [c.origin for c in case.checks] == ["heldout"]
        assert judge(case, TRIGGER_FORMAT.extract(case, case.reference_solution)).passed
        wrong = "trigger" if case.reference_solution == "no_trigger" else "no_trigger"
        assert judge(case, wrong).defects() == 1
        by_skill.setdefault(data["skill"], []).append(data["expect"])
    assert 4 <= len(by_skill) <= 5
    for labels in by_skill.values():
        assert sorted(labels) == ["clear_miss"] * 2 + ["near_miss"] * 3 + ["trigger"] * 3
