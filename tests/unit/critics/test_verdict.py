from __future__ import annotations

import json

import pytest

from critiquebench.critics import (
    CRITIC_SCHEMA,
    CriticVerdict,
    ParseOutcome,
    apply_policy,
    parse_critic_output,
)

GOOD = '{"verdict": "fail", "issues": ["off by one"], "summary": "wrong bound"}'


def test_schema_is_bounded_and_closed() -> None:
    assert CRITIC_SCHEMA["required"] == ["verdict", "issues", "summary"]
    assert CRITIC_SCHEMA["additionalProperties"] is False
    props = CRITIC_SCHEMA["properties"]
    assert props["verdict"]["enum"] == ["pass", "warn", "fail"]
    assert props["issues"]["maxItems"] == 5
    assert props["issues"]["items"]["maxLength"] == 160
    assert props["summary"]["maxLength"] == 200
    json.dumps(CRITIC_SCHEMA)  # must be plain JSON for llama.cpp / Gemini


def test_no_defects_literal_is_a_clean_pass() -> None:
    outcome = parse_critic_output("  NO_DEFECTS\n")
    assert outcome.method == "no_defects"
    assert outcome.verdict is not None
    assert outcome.verdict.verdict == "pass"
    assert outcome.verdict.issues == ()


@pytest.mark.parametrize("text", ["no_defects", "NO_DEFECTS found", "Result: NO_DEFECTS"])
def test_no_defects_must_be_the_whole_case_sensitive_reply(text: str) -> None:
    assert parse_critic_output(text).method != "no_defects"


def test_whole_reply_as_json() -> None:
    outcome = parse_critic_output(GOOD)
    assert outcome == ParseOutcome(
        CriticVerdict("fail", ("off by one",), "wrong bound"), "json", None
    )


def test_json_tolerates_raw_control_characters_in_strings() -> None:
    outcome = parse_critic_output('{"verdict": "warn", "issues": [], "summary": "a\tb\nc"}')
    assert outcome.method == "json"
    assert outcome.verdict is not None
    assert outcome.verdict.summary == "a\tb\nc"


@pytest.mark.parametrize("fence", ["```json", "```", "``` JSON"])
def test_fenced_block(fence: str) -> None:
    text = f"Review below.\n{fence}\n{GOOD}\n```\nThanks."
    outcome = parse_critic_output(text)
    assert outcome.method == "fenced"
    assert outcome.verdict is not None
    assert outcome.verdict.verdict == "fail"


def test_python_fence_is_not_taken_for_json() -> None:
    text = f'```python\nx = {{"verdict": 1}}\n```\nthen\n```json\n{GOOD}\n```'
    outcome = parse_critic_output(text)
    assert outcome.method == "fenced"
    assert outcome.verdict is not None
    assert outcome.verdict.summary == "wrong bound"


def test_first_balanced_object_ignores_braces_in_strings_and_non_json() -> None:
    text = (
        'I looked at {the code}. {"verdict": "warn", "issues": ["uses } in a string"], '
        '"summary": "ok \\"{\\" mostly"} trailing {"verdict": "fail"}'
    )
    outcome = parse_critic_output(text)
    assert outcome.method == "balanced"
    assert outcome.verdict == CriticVerdict("warn", ("uses } in a string",), 'ok "{" mostly')


def test_balanced_finds_an_object_nested_in_a_non_verdict_one() -> None:
    text = 'result = {"review": {"verdict": "pass", "issues": [], "summary": "s"}, broken'
    outcome = parse_critic_output(text)
    assert outcome.method == "balanced"
    assert outcome.verdict is not None
    assert outcome.verdict.verdict == "pass"


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ('The answer: "verdict": "fail", "issues": [', "fail"),
        ("verdict: warn\nissues: none", "warn"),
        ("Verdict = PASS", "pass"),
    ],
)
def test_bare_verdict_field(text: str, verdict: str) -> None:
    outcome = parse_critic_output(text)
    assert outcome.method == "bare_field"
    assert outcome.verdict == CriticVerdict(verdict, (), "")  # type: ignore[arg-type]


def test_nothing_usable_is_unparseable() -> None:
    outcome = parse_critic_output("The code looks fine to me.")
    assert outcome.verdict is None
    assert outcome.method == "unparseable"
    assert outcome.error


@pytest.mark.parametrize(
    "text",
    [
        '{"verdict": "maybe", "issues": [], "summary": ""}',
        '```json\n{"verdict": 3}\n```',
        "verdict: uncertain",
    ],
)
def test_unknown_verdict_is_unparseable_with_error(text: str) -> None:
    outcome = parse_critic_output(text)
    assert outcome.verdict is None
    assert outcome.method == "unparseable"
    assert outcome.error is not None
    assert "unknown verdict" in outcome.error


def test_issues_truncated_and_coerced() -> None:
    issues = ["a", 2, None, {"k": 1}, "e", "f", "g"]
    text = json.dumps({"verdict": "fail", "issues": issues, "summary": "s"})
    outcome = parse_critic_output(text)
    assert outcome.verdict is not None
    assert outcome.verdict.issues == ("a", "2", "None", "{'k': 1}", "e")


def test_lone_string_issue_and_missing_fields() -> None:
    outcome = parse_critic_output('{"verdict": "warn", "issues": "one problem"}')
    assert outcome.verdict == CriticVerdict("warn", ("one problem",), "")


def test_overlong_strings_are_clipped_to_the_schema_bounds() -> None:
    text = json.dumps({"verdict": "fail", "issues": ["x" * 500], "summary": "y" * 500})
    outcome = parse_critic_output(text)
    assert outcome.verdict is not None
    assert len(outcome.verdict.issues[0]) == 160
    assert len(outcome.verdict.summary) == 200


def test_policy_passes_a_good_verdict_through() -> None:
    outcome = parse_critic_output(GOOD)
    assert apply_policy(outcome, "fail_open") is outcome.verdict
    assert apply_policy(outcome, "fail_closed") is outcome.verdict


def test_fail_open_treats_verifier_error_as_pass() -> None:
    verdict = apply_policy(parse_critic_output("gibberish"), "fail_open")
    assert verdict.verdict == "pass"
    assert verdict.summary.startswith("verifier_error: ")


def test_fail_closed_treats_verifier_error_as_fail() -> None:
    outcome = ParseOutcome(None, "unparseable", "unknown verdict 'maybe'")
    verdict = apply_policy(outcome, "fail_closed")
    assert verdict == CriticVerdict("fail", (), "verifier_error: unknown verdict 'maybe'")
