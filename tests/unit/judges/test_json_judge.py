"""The json judge: every defect code at its pointer, bounded work, no network, never raises."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request
from typing import Any

import pytest

from critiquebench.judges import JudgeSet
from critiquebench.judges.json._judge import (
    MAX_ARTIFACT_CHARS,
    MAX_DEFECTS_PER_CHECK,
    MAX_DEPTH,
    JsonJudge,
)
from critiquebench.suites import Case, Check

STEP = {
    "type": "object",
    "required": ["id", "action"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string"},
        "action": {"type": "string"},
        "depends_on": {"type": "array", "items": {"type": "string"}},
    },
}
WORKFLOW = {
    "type": "object",
    "required": ["name", "trigger", "steps"],
    "properties": {
        "name": {"type": "string"},
        "trigger": {"enum": ["push", "schedule"]},
        "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}},
    },
    "$defs": {"step": STEP},
}
GOOD = {
    "name": "ci",
    "trigger": "push",
    "steps": [
        {"id": "build", "action": "make"},
        {"id": "test", "action": "make test", "depends_on": ["build"]},
    ],
}


def _case(*checks: tuple[str, str, dict[str, Any]], schema: dict[str, Any] = WORKFLOW) -> Case:
    """A json case; each check is (name, origin, spec)."""
    return Case(
        id="t/workflow",
        prompt="Write a workflow.",
        judge="json",
        judge_data={"schema": schema},
        checks=tuple(
            Check(source=name, origin=origin, line=n, spec=spec)  # type: ignore[arg-type]
            for n, (name, origin, spec) in enumerate(checks, 1)
        ),
    )


SCHEMA = ("schema", "feedback", {"schema": True})
ALL = _case(
    SCHEMA,
    ("first action", "feedback", {"pointer": "/steps/0/action", "equals": "make"}),
    ("deps", "heldout", {"references": {"from": "/steps/*/depends_on/*", "to": "/steps/*/id"}}),
    ("ids unique", "heldout", {"unique": "/steps/*/id"}),
)


def _judge(case: Case, document: Any) -> list[tuple[str, str, str]]:
    """(code, pointer, check name) of every defect of ``document``."""
    text = document if isinstance(document, str) else json.dumps(document)
    result = JsonJudge()(case, text)
    assert result.infrastructure_error is None, result.infrastructure_error
    return [(f.code, f.file, f.source) for f in result.failures]


def test_a_valid_document_passes_every_check() -> None:
    result = JsonJudge()(ALL, json.dumps(GOOD, indent=2))
    assert result.failures == () and result.passed
    assert (result.checks_passed, result.checks_total) == (4, 4)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d.pop("trigger"), ("required", "/trigger", "schema")),
        (lambda d: d.update(name=7), ("type", "/name", "schema")),
        (lambda d: d.update(trigger="nightly"), ("enum", "/trigger", "schema")),
        (lambda d: d["steps"][1].update(env={}), ("additionalProperties", "/steps/1", "schema")),
        (lambda d: d["steps"][0].update(action="cmake"),
         ("wrong_value", "/steps/0/action", "first action")),
        (lambda d: d["steps"][0].pop("action"), ("missing", "/steps/0/action", "first action")),
        (lambda d: d["steps"][1].update(depends_on=["bild"]),
         ("dangling_reference", "/steps/1/depends_on/0", "deps")),
        (lambda d: d["steps"][1].update(id="build"), ("duplicate", "/steps/1/id", "ids unique")),
    ],
)  # fmt: skip
def test_each_defect_has_its_code_pointer_and_check(change: Any, expected: tuple[str, ...]) -> None:
    document = json.loads(json.dumps(GOOD))
    change(document)
    assert expected in _judge(ALL, document)


def test_defects_say_expected_actual_and_origin() -> None:
    document = {**GOOD, "trigger": "nightly"}
    document["steps"] = [{"id": "build", "action": "cmake"}]
    result = JsonJudge()(ALL, json.dumps(document))
    enum, wrong = result.failures
    assert (enum.kind, enum.origin, enum.actual) == ("json", "feedback", '"nightly"')
    assert enum.expected == 'enum: ["push", "schedule"]'
    assert (wrong.expected, wrong.actual) == ('"make"', '"cmake"')
    assert "/steps/0/action" in wrong.describe() and "cmake" in wrong.message
    assert (result.checks_passed, result.checks_total) == (2, 4)


def test_a_required_property_is_named_by_its_own_pointer() -> None:
    (failure,) = JsonJudge()(_case(SCHEMA), json.dumps({**GOOD, "steps": [{"id": "a"}]})).failures
    assert (failure.code, failure.file, failure.actual) == (
        "required",
        "/steps/0/action",
        "(absent)",
    )


@pytest.mark.parametrize(
    ("expected", "actual", "equal"),
    [(1, 1.0, True), (True, 1, False), (0, False, False), ([1, 2], [2, 1], False),
     ({"a": 1, "b": [2]}, {"b": [2], "a": 1}, True), (None, None, True), ("1", 1, False)],
)  # fmt: skip
def test_equals_compares_json_values_strictly(expected: Any, actual: Any, equal: bool) -> None:
    case = _case(("value", "heldout", {"pointer": "/v", "equals": expected}), schema={})
    assert (_judge(case, {"v": actual}) == []) is equal


def test_an_unparseable_document_is_one_whole_artifact_defect_and_no_check_runs() -> None:
    result = JsonJudge()(ALL, '{"name": "ci",\n  "steps": [,]\n}')
    first, *rest = result.failures
    assert (first.code, first.origin, first.line) == ("invalid_json", "", 2)
    assert "line 2 column 13" in first.message and first.actual == '"steps": [,]'
    # As with Python code that does not parse: each check counts one defect too, so a
    # broken answer never scores better than a parseable wrong one.
    assert [(f.code, f.origin, f.source) for f in rest] == [
        ("not_checked", check.origin, check.source) for check in ALL.checks
    ]
    assert result.checks_passed == 0 and result.infrastructure_error is None


@pytest.mark.parametrize(
    ("text", "line", "actual"),
    [('{\n  "name": "ci",\n', 3, "(the end of the document)"), ("", 1, "(the end of the document)"),
     ('{"a": "x\u2028y",\n "b": }', 2, '"b": }'), ('{"a": 1,\r\n"b"}', 2, '"b"}')],
)  # fmt: skip
def test_invalid_json_names_the_line_it_stopped_at(text: str, line: int, actual: str) -> None:
    # A reply cut off by the token limit ends mid-document: its error is past the last line.
    failure = JsonJudge()(ALL, text).failures[0]
    assert (failure.code, failure.line, failure.actual) == ("invalid_json", line, actual)


@pytest.mark.parametrize(
    ("text", "words"),
    [("", "Expecting value"), ('{"a": NaN}', "NaN is not a JSON value"), ("[1,]", "line 1"),
     ("1" * 5000, "digits"), ("{'a': 1}", "double quotes")],
)  # fmt: skip
def test_what_is_not_json_is_invalid_json(text: str, words: str) -> None:
    failure = JsonJudge()(_case(SCHEMA), text).failures[0]
    assert failure.code == "invalid_json" and words in failure.message


def test_a_key_given_twice_is_a_defect_of_the_whole_document() -> None:
    found = _judge(_case(SCHEMA), '{"name": "a", "trigger": "push", "steps": [], "name": "b"}')
    assert found == [("duplicate_key", "", "")]


def test_many_duplicate_keys_are_capped_and_noted() -> None:
    text = "{" + ",".join(f'"k{n % 100}": {n}' for n in range(5000)) + "}"
    result = JsonJudge()(_case(SCHEMA, schema={}), text)
    assert [f.code for f in result.failures] == ["duplicate_key"] * MAX_DEFECTS_PER_CHECK
    assert result.notes == (f"{4900 - MAX_DEFECTS_PER_CHECK} more duplicate key(s) not listed",)


@pytest.mark.parametrize(
    ("items", "unique"),
    [([{"a": 1}, {"a": 1.0}], False), ([1, True], True), ([[1, 2], [2, 1]], True),
     ([{"a": 1, "b": 2}, {"b": 2, "a": 1}], False)],
)  # fmt: skip
def test_unique_items_keeps_json_schema_equality(items: list[Any], unique: bool) -> None:
    case = _case(SCHEMA, schema={"uniqueItems": True})
    assert (_judge(case, items) == []) is unique


def test_unique_items_over_a_long_array_of_objects_is_fast() -> None:
    # jsonschema compares objects pairwise: 12,000 of them would take minutes.
    case = _case(SCHEMA, schema={"uniqueItems": True})
    items = [{"id": n} for n in range(12_000)]
    started = time.perf_counter()
    assert _judge(case, [*items, {"id": 7}]) == [("uniqueItems", "", "schema")]
    assert time.perf_counter() - started < 10


def test_a_huge_document_is_refused_unread() -> None:
    text = json.dumps({"name": "x" * MAX_ARTIFACT_CHARS})
    started = time.perf_counter()
    failure = JsonJudge()(ALL, text).failures[0]
    assert failure.code == "too_large" and time.perf_counter() - started < 0.5


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_deep_nesting_is_a_defect_and_never_a_crash(depth: int) -> None:
    results = []
    # In a thread, as the pipeline runs judges: a smaller stack must not matter.
    worker = threading.Thread(
        target=lambda: results.append(JsonJudge()(ALL, "[" * depth + "]" * depth))
    )
    worker.start()
    worker.join(timeout=10)
    (result,) = results
    assert result.failures[0].code == "too_deep" and result.infrastructure_error is None


def test_nesting_up_to_the_limit_is_validated() -> None:
    tree: dict[str, Any] = {}
    node = tree
    for _ in range(MAX_DEPTH - 1):
        node["child"] = {}
        node = node["child"]
    node["child"] = 5
    nested = {
        "$defs": {"n": {"type": "object", "properties": {"child": {"$ref": "#/$defs/n"}}}},
        "$ref": "#/$defs/n",
    }
    assert _judge(_case(SCHEMA, schema=nested), tree) == [("type", "/child" * MAX_DEPTH, "schema")]


def test_many_violations_are_capped_per_check_and_noted() -> None:
    case = _case(SCHEMA, schema={"type": "array", "items": {"type": "string"}})
    result = JsonJudge()(case, json.dumps(list(range(5000))))
    assert len(result.failures) == MAX_DEFECTS_PER_CHECK
    assert [(f.code, f.file) for f in result.failures[:3]] == [
        ("type", "/0"),
        ("type", "/1"),
        ("type", "/2"),
    ]
    assert any("not listed" in note for note in result.notes)


def test_a_remote_ref_is_never_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        opened.append(args)
        raise OSError("network access in a test")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    remote = {"properties": {"step": {"$ref": "https://example.com/schemas/step.json"}}}
    case = _case(SCHEMA, schema=remote)
    result = JsonJudge()(case, json.dumps({"step": {}}))
    assert opened == []
    assert result.infrastructure_error and "example.com" in result.infrastructure_error
    assert result.failures == ()
    problems = JsonJudge.case_problems(case)
    assert opened == [] and any("never fetched" in problem for problem in problems)


def test_problems_of_the_case_are_infrastructure_errors_not_defects() -> None:
    bad_check = _case(("odd", "feedback", {"pointer": "steps"}))
    no_schema = Case(
        id="t",
        prompt="p",
        judge="json",
        checks=(Check(source="s", origin="feedback", spec={"schema": True}),),
    )
    for case in (bad_check, no_schema):
        result = JsonJudge()(case, json.dumps(GOOD))
        assert result.infrastructure_error and not result.failures and not result.passed


def test_the_judge_set_routes_json_cases_to_the_json_judge() -> None:
    result = JudgeSet()(ALL, json.dumps({**GOOD, "trigger": 3}))
    assert [(f.kind, f.code) for f in result.failures] == [("json", "enum")]
