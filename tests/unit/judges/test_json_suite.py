"""The json judge's format, its suite-line checks, and the bundled ``json`` suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from critiquebench.judges import artifact_format
from critiquebench.judges.json._format import JSON_FORMAT
from critiquebench.judges.json._judge import JsonJudge
from critiquebench.suites import Case, Check, SuiteFormatError, load_jsonl_suite, load_suite

CASE = Case(
    id="t/service",
    prompt="Write a service config.",
    judge="json",
    judge_data={"schema": {"type": "object", "required": ["name", "port"]}},
    checks=(
        Check(source="schema", origin="feedback", line=1, spec={"schema": True}),
        Check(source="name", origin="feedback", line=2, spec={"pointer": "/name", "equals": "api"}),
        Check(source="port", origin="heldout", line=1, spec={"pointer": "/port", "equals": 80}),
        Check(source="tls", origin="heldout", line=2, spec={"pointer": "/tls", "equals": True}),
    ),
    reference_solution='{"name": "api", "port": 80, "tls": true}',
)


def test_the_json_judge_declares_its_format() -> None:
    assert artifact_format("json") is JSON_FORMAT
    assert (JSON_FORMAT.fence, JSON_FORMAT.noun) == ("json", "JSON document")
    assert "```json" in JSON_FORMAT.system


@pytest.mark.parametrize(
    ("reply", "artifact"),
    [
        ('Sure:\n```json\n{"a": 1}\n```\nDone.', '{"a": 1}'),
        ('```yaml\na: 2\n```\n```JSON\n{"a": 1}\n```', '{"a": 1}'),
        ('```\n{"a": 1}\n```', '{"a": 1}'),
        ('```json\n{"a": 1}\n```\n```json\n{"b": 2}\n```', '{"a": 1}'),
        ('{"a": 1}', '{"a": 1}'),
        ("  [1, 2]  ", "[1, 2]"),
        ('Here is the config: {"a": {"b": [1]}} as asked.', '{"a": {"b": [1]}}'),
        ("I cannot do that.", "I cannot do that."),
        ('Broken: {"a": 1', '{"a": 1'),
        # No opening fence: the stray closing one must not make an empty block.
        ('{"a": 1}\n```\n\n```python\nprint(1)\n```', '{"a": 1}'),
        ('```\n```\n```json\n{"a": 1}\n```', '{"a": 1}'),
        ("```\npip install x\n```\n```json\n[1]\n```", "[1]"),
        ('```javascript\n{"a": 1}\n```', '{"a": 1}'),
        ('```javascript\n{"a": ', '{"a":'),
    ],
)
def test_extract_takes_the_first_json_block_else_the_json_in_the_reply(
    reply: str, artifact: str
) -> None:
    assert JSON_FORMAT.extract(CASE, reply) == artifact + "\n"


def test_the_simulated_wrong_answer_parses_and_fails_feedback_and_heldout_checks() -> None:
    correct = JSON_FORMAT.extract(CASE, JSON_FORMAT.simulated_reply(CASE, True, 0))
    assert JsonJudge()(CASE, correct).passed
    wrongs = [
        JSON_FORMAT.extract(CASE, JSON_FORMAT.simulated_reply(CASE, False, n)) for n in (0, 1)
    ]
    assert wrongs[0] != wrongs[1]  # a new answer each round: no false "no progress" halt
    result = JsonJudge()(CASE, wrongs[0])
    codes = {(f.code, f.origin) for f in result.failures}
    assert codes == {("wrong_value", "feedback"), ("wrong_value", "heldout")}
    assert json.loads(wrongs[0])["tls"] is False


def test_without_equals_checks_the_simulated_wrong_answer_does_not_parse() -> None:
    case = CASE.model_copy(update={"checks": CASE.checks[:1]})
    wrong = JSON_FORMAT.extract(case, JSON_FORMAT.simulated_reply(case, False, 0))
    assert JsonJudge()(case, wrong).failures[0].code == "invalid_json"


def _problems(judge_data: dict[str, Any], *specs: dict[str, Any]) -> list[str]:
    checks = tuple(
        Check(source=str(spec.pop("name", f"c{n}")), origin="feedback", line=n, spec=spec)
        for n, spec in enumerate(specs, 1)
    )
    return JsonJudge.case_problems(
        Case(id="t", prompt="p", judge="json", judge_data=judge_data, checks=checks)
    )


@pytest.mark.parametrize(
    ("judge_data", "spec", "words"),
    [
        ({"schema": {"type": "strin"}}, {"schema": True}, "not a valid JSON Schema"),
        ({"schema": []}, {"schema": True}, "must be a JSON Schema object"),
        ({"schema": {"$schema": "http://json-schema.org/draft-04/schema#"}}, {"schema": True},
         "set it to 'https://json-schema.org/draft/2020-12/schema'"),
        ({"schema": {"$ref": "#/$defs/nope"}}, {"schema": True}, "points at nothing"),
        ({"schema": {"$ref": "other.json"}}, {"schema": True}, "copy it under '$defs'"),
        ({}, {"schema": True}, "needs 'judge_data.schema'"),
        ({"schema": {}, "extra": 1}, {"schema": True}, "unknown key 'extra'"),
        ({}, {"schema": {"type": 3}}, "feedback_checks[0] ('c1').schema"),
        ({}, {"pointer": "name", "equals": 1}, "must start with '/'"),
        ({}, {"pointer": "/a~2", "equals": 1}, "'~0'"),
        ({}, {"pointer": "/steps/*/id", "equals": 1}, "remove '*'"),
        ({}, {"equals": 1}, "needs 'pointer'"),
        ({}, {"pointer": "/a"}, "give exactly one of"),
        ({}, {"unique": "/a", "equals": 1}, "found equals, unique"),
        ({}, {"unique": "/a", "pointer": "/a"}, "remove 'pointer'"),
        ({}, {"references": {"from": "/a"}}, '{"from": <pointer>, "to": <pointer>}'),
        ({}, {"unique": 3}, "must be a JSON pointer string"),
    ],
)  # fmt: skip
def test_case_problems_name_the_field_and_the_fix(
    judge_data: dict[str, Any], spec: dict[str, Any], words: str
) -> None:
    problems = _problems(judge_data, spec)
    assert any(words in problem for problem in problems), problems


def test_a_sound_case_has_no_problems_and_check_names_must_differ() -> None:
    assert JsonJudge.case_problems(CASE) == []
    twice = _problems({}, {"name": "same", "unique": "/a"}, {"name": "same", "unique": "/b"})
    assert twice == [
        "feedback_checks[1] ('same'): another check has this name; give each check its own"
    ]


def test_bad_suite_lines_are_reported_with_file_line_and_field(tmp_path: Path) -> None:
    good = {
        "id": "j/1", "judge": "json", "prompt": "Write {}.", "judge_data": {"schema": {}},
        "feedback_checks": [{"name": "schema", "schema": True}],
    }  # fmt: skip
    bad_schema = {**good, "id": "j/2", "judge_data": {"schema": {"type": "strin"}}}
    bad_pointer = {
        **good,
        "id": "j/3",
        "heldout_checks": [{"name": "n", "pointer": "n", "equals": 1}],
    }
    path = tmp_path / "suite.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in (good, bad_schema, bad_pointer)) + "\n")
    with pytest.raises(SuiteFormatError) as caught:
        load_jsonl_suite(path)
    first, second = caught.value, caught.value.more[0]
    assert first.location() == f"{path}:2" and "'judge_data.schema'" in first.reason
    assert second.location() == f"{path}:3" and "heldout_checks[0] ('n')" in second.reason
    assert "must start with '/'" in second.reason


BUNDLED = load_suite("json")


def test_the_bundled_suite_has_about_ten_cases_of_the_json_judge() -> None:
    assert 10 <= len(BUNDLED) <= 14 and {case.judge for case in BUNDLED} == {"json"}
    assert sum("easy" in case.tags for case in BUNDLED) >= 2


@pytest.mark.parametrize("case", BUNDLED, ids=[case.id for case in BUNDLED])
def test_each_bundled_reference_is_clean_and_the_checks_are_split(case: Case) -> None:
    result = JsonJudge()(case, JSON_FORMAT.extract(case, case.reference_solution))
    assert result.failures == () and result.infrastructure_error is None
    assert result.checks_passed == result.checks_total == len(case.checks)
    assert case.checks_from(frozenset({"feedback"})) and case.checks_from(frozenset({"heldout"}))
    # Held-out checks ask about other fields than the feedback ones, so a fixer cannot
    # pass them by copying the expected values it was shown.
    shown = {c.spec.get("pointer") for c in case.checks_from(frozenset({"feedback"}))}
    held = {c.spec.get("pointer") for c in case.checks_from(frozenset({"heldout"}))}
    assert not (shown & held) - {None}
    wrong = JSON_FORMAT.extract(case, JSON_FORMAT.simulated_reply(case, False, 0))
    assert JsonJudge()(case, wrong).defects() > 0


def test_the_documented_example_line_is_a_clean_case(tmp_path: Path) -> None:
    docs = Path(__file__).parents[3] / "docs" / "suites.md"
    section = docs.read_text().split("## json", 1)[1].split("\n## ", 1)[0]
    example = section.split("```json\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.jsonl"
    path.write_text(json.dumps(json.loads(example)) + "\n")
    (case,) = load_jsonl_suite(path)
    assert JsonJudge()(case, case.reference_solution).checks_passed == len(case.checks) == 3
