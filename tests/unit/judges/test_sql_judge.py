"""The sql judge with real DuckDB in the real sandbox: defects, fences, suite lines."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from critiquebench.judges import JudgeResult, SandboxLimits, artifact_format
from critiquebench.judges.sandbox._pool import RawAttempt, Sandbox, Worker
from critiquebench.judges.sql._judge import SQL_FORMAT, SqlJudge
from critiquebench.judges.sql._run import duckdb_extras
from critiquebench.suites import Case, Check, SuiteFormatError, load_jsonl_suite, load_suite

SCHEMA = "CREATE TABLE people (name VARCHAR, city VARCHAR, age INTEGER);"
FEEDBACK_DATA = (
    "INSERT INTO people VALUES ('ann', 'Oslo', 31), ('bob', 'Lima', 45), ('cid', 'Oslo', 22);"
)
HELDOUT_DATA = "INSERT INTO people VALUES ('dan', 'Rome', 50), ('eve', 'Oslo', 19);"
RIGHT = "SELECT name, age FROM people WHERE city = 'Oslo'"


def _case(**spec: Any) -> Case:
    """People in Oslo: name and age, on two fixtures."""
    checks = (
        Check(
            source="three people",
            origin="feedback",
            line=1,
            spec={"data": FEEDBACK_DATA, "expected": [["ann", 31], ["cid", 22]], **spec},
        ),
        Check(
            source="other people",
            origin="heldout",
            line=1,
            spec={"data": HELDOUT_DATA, "expected": [["eve", 19]], **spec},
        ),
    )
    return Case(
        id="sql/oslo", prompt="People in Oslo.", judge="sql", judge_data={"schema": SCHEMA},
        checks=checks, reference_solution=RIGHT,
    )  # fmt: skip


@pytest.fixture(scope="module")
def judge() -> Iterator[SqlJudge]:
    judge = SqlJudge()
    try:
        yield judge
    finally:
        judge.close()


@pytest.fixture(scope="module")
def fallback_judge() -> Iterator[SqlJudge]:
    """The judge without bubblewrap: DuckDB's own locks are then the only file fence.
    Opted in by name to run as root where nobody cannot run the interpreter."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CRITIQUEBENCH_SANDBOX", "fallback-as-root")
        judge = SqlJudge()
        judge.describe()  # starts the worker while the setting is in force
    try:
        yield judge
    finally:
        judge.close()


def _codes(result: JudgeResult) -> list[tuple[str, str]]:
    assert result.infrastructure_error is None, result.infrastructure_error
    return [(failure.code, failure.origin) for failure in result.failures]


def test_a_correct_query_passes_every_check(judge: SqlJudge) -> None:
    result = judge(_case(), RIGHT + ";\n")
    assert _codes(result) == []
    assert result.passed
    assert result.checks_passed == result.checks_total == 2


def test_row_order_does_not_matter_unless_the_check_says_so(judge: SqlJudge) -> None:
    backwards = RIGHT + " ORDER BY age"
    assert judge(_case(), backwards).passed
    result = judge(_case(ordered=True), backwards)
    assert _codes(result) == [("wrong_value", "feedback")]
    assert "wrong order" in result.failures[0].message
    assert result.checks_passed == 1


def test_a_missing_row_names_the_row_and_the_check(judge: SqlJudge) -> None:
    result = judge(_case(), RIGHT + " AND age > 20")
    assert _codes(result) == [("missing_row", "heldout")]
    failure = result.failures[0]
    assert (failure.kind, failure.source) == ("sql", "other people")
    assert (failure.expected, failure.actual) == ('["eve", 19]', None)
    assert result.checks_passed == 1


def test_an_extra_row_is_one_defect_per_row(judge: SqlJudge) -> None:
    result = judge(_case(), "SELECT name, age FROM people WHERE city IN ('Oslo', 'Lima')")
    assert _codes(result) == [("extra_row", "feedback")]
    assert result.failures[0].actual == '["bob", 45]'


def test_a_wrong_value_in_a_keyed_row_names_the_column(judge: SqlJudge) -> None:
    result = judge(_case(), "SELECT name, age + 1 AS age FROM people WHERE city = 'Oslo'")
    assert _codes(result) == [
        ("wrong_value", "feedback"),
        ("wrong_value", "feedback"),
        ("wrong_value", "heldout"),
    ]
    assert result.failures[0].message == "wrong value in column(s) 2 (age)"
    assert (result.failures[0].expected, result.failures[0].actual) == (
        '["ann", 31]',
        '["ann", 32]',
    )


def test_numbers_match_within_the_checks_tolerance(judge: SqlJudge) -> None:
    def case(**spec: Any) -> Case:
        check = Check(source="mean", origin="heldout", spec={"data": FEEDBACK_DATA, **spec})
        return Case(
            id="sql/mean", prompt="p", judge="sql", judge_data={"schema": SCHEMA}, checks=(check,)
        )

    query = "SELECT avg(age) FROM people"  # 32.666...
    assert judge(case(expected=[[32.67]], tolerance=0.01), query).passed
    result = judge(case(expected=[[32.67]]), query)
    assert _codes(result) == [("wrong_value", "heldout")]  # one row each side: paired


def test_a_failing_query_is_an_error_per_check(judge: SqlJudge) -> None:
    result = judge(_case(), "SELECT name, height FROM people")
    assert _codes(result) == [("error", "feedback"), ("error", "heldout")]
    assert "height" in result.failures[0].message
    syntax = judge(_case(), "SELEKT name FROM people")
    assert _codes(syntax) == [("error", "feedback"), ("error", "heldout")]
    assert "syntax error" in syntax.failures[0].message


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "empty"),
        ("  -- only a comment\n", "no SQL statement"),
        ("SELECT 1; SELECT 2", "2 statements"),
        ("DELETE FROM people", "DELETE"),
        ("CREATE TABLE x AS SELECT 1", "CREATE"),
    ],
)
def test_an_answer_that_is_not_one_select_is_not_a_query(
    judge: SqlJudge, answer: str, reason: str
) -> None:
    result = judge(_case(), answer)
    assert _codes(result) == [("not_a_query", ""), ("error", "feedback"), ("error", "heldout")]
    assert reason in result.failures[0].message
    # The loop always sees a whole-artifact defect, whatever origins it is shown.
    assert result.failures[0] in result.visible_to(frozenset())


def test_one_wrong_query_reports_at_most_five_defects_per_check(judge: SqlJudge) -> None:
    result = judge(_case(), "SELECT 'x' || range::VARCHAR, range FROM range(500)")
    origins = [origin for _, origin in _codes(result)]
    assert (origins.count("feedback"), origins.count("heldout")) == (5, 5)
    # feedback: 2 missing rows and 500 extra ones, of which 5 are reported
    assert result.failures[4].message.endswith("(and 497 more difference(s) in this check)")


def test_a_runaway_query_is_stopped_as_a_timeout(judge: SqlJudge) -> None:
    quick = SqlJudge(SandboxLimits(check_timeout_s=0.5), sandbox=judge.sandbox)
    slow = "SELECT count(*) FROM range(3000000) a, range(3000000) b WHERE a.range + b.range = 7"
    result = quick(_case(), slow)
    assert _codes(result) == [("timeout", "feedback"), ("timeout", "heldout")]
    assert all("time limit" in failure.message for failure in result.failures)


@pytest.mark.parametrize(
    "template",
    [
        "COPY (SELECT 1) TO '{path}'",
        "ATTACH '{path}' AS other",
        "INSTALL httpfs FROM '{path}'",
        "SELECT * FROM read_csv('{secret}')",
        "SELECT content FROM read_text('{secret}')",
        "SELECT * FROM (SELECT 1) t, (SELECT * FROM read_blob('{secret}')) s",
        "WITH w AS (SELECT 1) SELECT * FROM glob('{folder}/*')",
    ],
)
@pytest.mark.parametrize("mode", ["bubblewrap", "fallback"])
def test_a_query_cannot_touch_the_hosts_files(
    request: pytest.FixtureRequest, tmp_path: Path, template: str, mode: str
) -> None:
    judge: SqlJudge = request.getfixturevalue("judge" if mode == "bubblewrap" else "fallback_judge")
    secret = tmp_path / "secret.csv"
    secret.write_text("token\nhunter2-the-secret\n")
    target = tmp_path / "written.db"
    query = template.format(path=target, secret=secret, folder=tmp_path)
    result = judge(_case(), query)
    assert result.infrastructure_error is None
    assert not result.passed
    assert not target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.csv"]
    assert "hunter2" not in json.dumps([f.describe() for f in result.failures])


class _Recording(Sandbox):
    """The real sandbox, keeping every request it was sent."""

    requests: list[dict[str, Any]]

    def judge(self, request: dict[str, Any]) -> RawAttempt:
        self.requests.append(request)
        return super().judge(request)


def test_expected_rows_never_enter_the_sandbox(judge: SqlJudge) -> None:
    recording = _Recording(judge.sandbox.mode)
    recording.requests = []
    marker = "expected-only-9d41"
    check = Check(
        source="c", origin="heldout", spec={"data": FEEDBACK_DATA, "expected": [[marker]]}
    )
    case = Case(id="s", prompt="p", judge="sql", judge_data={"schema": SCHEMA}, checks=(check,))
    result = SqlJudge(sandbox=recording)(case, "SELECT name FROM people LIMIT 1")
    recording.close()
    assert _codes(result) == [("wrong_value", "heldout")]
    assert result.failures[0].expected == f'["{marker}"]'
    assert len(recording.requests) == 1
    assert marker not in json.dumps(recording.requests)


def test_a_broken_fixture_is_the_judges_problem_not_a_defect(judge: SqlJudge) -> None:
    check = Check(
        source="c", origin="feedback", spec={"data": "INSERT INTO nope VALUES (1);", "expected": []}
    )
    case = Case(id="s", prompt="p", judge="sql", judge_data={"schema": SCHEMA}, checks=(check,))
    result = judge(case, RIGHT)
    assert result.failures == ()
    assert result.infrastructure_error is not None
    assert "fixture failed" in result.infrastructure_error
    assert "nope" in result.infrastructure_error


def test_a_dead_sandbox_is_an_infrastructure_error_not_a_raise(judge: SqlJudge) -> None:
    class Dead(Sandbox):
        def judge(self, request: dict[str, Any]) -> RawAttempt:
            raise RuntimeError("boom")

    result = SqlJudge(sandbox=Dead(judge.sandbox.mode))(_case(), RIGHT)
    assert result.infrastructure_error == "judge error: RuntimeError: boom"
    assert result.failures == ()


def test_the_fallback_sandbox_runs_duckdb_too(fallback_judge: SqlJudge) -> None:
    assert fallback_judge.describe().startswith("FALLBACK")
    assert fallback_judge(_case(), RIGHT).passed
    wrong = fallback_judge(_case(), RIGHT + " AND age > 20")
    assert _codes(wrong) == [("missing_row", "heldout")]


def test_workers_import_duckdb_once_and_note_a_module_they_cannot(judge: SqlJudge) -> None:
    extras = duckdb_extras()
    assert extras.imports == ("duckdb",)
    assert any(path.name == "duckdb" for path in extras.read_only)
    mode = replace(judge.sandbox.mode, extras=replace(extras, imports=("duckdb", "nope_4f2")))
    worker = Worker(mode)
    try:
        assert worker.facts["notes"] == ["could not import nope_4f2 (ModuleNotFoundError)"]
    finally:
        worker.close()


def test_the_format_asks_for_one_sql_block_and_reads_the_first() -> None:
    assert artifact_format("sql") is SQL_FORMAT
    assert "SELECT" in SQL_FORMAT.system and SQL_FORMAT.fence == "sql"
    reply = "Sure:\n```sql\nSELECT 1;\n```\nor\n```sql\nSELECT 2\n```"
    assert SQL_FORMAT.extract(_case(), reply) == "SELECT 1;\n"
    assert SQL_FORMAT.extract(_case(), "SELECT 3") == "SELECT 3\n"


def test_the_simulated_wrong_answer_is_a_valid_query_that_fails(judge: SqlJudge) -> None:
    case = _case()
    right = SQL_FORMAT.extract(case, SQL_FORMAT.simulated_reply(case, True, 0))
    wrong = SQL_FORMAT.extract(case, SQL_FORMAT.simulated_reply(case, False, 1))
    assert judge(case, right).passed
    result = judge(case, wrong)
    assert {code for code, _ in _codes(result)} <= {"wrong_value", "missing_row", "extra_row"}
    assert result.checks_passed == 0


def test_the_bundled_suite_references_are_clean(judge: SqlJudge) -> None:
    cases = load_suite("sql")
    assert len(cases) >= 10
    for case in cases:
        assert case.judge == "sql"
        origins = {check.origin for check in case.checks}
        assert origins == {"feedback", "heldout"}, case.id
        result = judge(case, case.reference_solution)
        assert _codes(result) == [], case.id
        # Held-out fixtures differ from the feedback ones: answering with the
        # visible rows does not pass them.
        feedback = case.checks_from(frozenset({"feedback"}))
        heldout = case.checks_from(frozenset({"heldout"}))
        assert {c.spec.get("data") for c in feedback}.isdisjoint(
            c.spec.get("data") for c in heldout
        )


GOOD_LINE: dict[str, Any] = {
    "id": "sql/1",
    "judge": "sql",
    "prompt": "Count people.",
    "judge_data": {"schema": SCHEMA},
    "feedback_checks": [{"name": "three", "data": FEEDBACK_DATA, "expected": [[3]]}],
    "heldout_checks": [{"name": "none", "expected": [[0]]}],
    "reference_solution": "SELECT count(*) FROM people",
}


def _with_check(**changes: Any) -> dict[str, Any]:
    return {**GOOD_LINE, "heldout_checks": [{"name": "none", "expected": [[0]], **changes}]}


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ({**GOOD_LINE, "judge_data": {}}, "judge_data.schema: required"),
        ({**GOOD_LINE, "judge_data": {"schema": "CREATE TABEL x (a INT)"}}, "does not parse"),
        ({**GOOD_LINE, "judge_data": {"schema": FEEDBACK_DATA}}, "only CREATE statements"),
        ({**GOOD_LINE, "judge_data": {"schema": SCHEMA, "db": "x"}}, "unknown field 'db'"),
        (_with_check(expected=[1, 2]), "check 'none' (heldout_checks[0]): field 'expected'"),
        (_with_check(expected=[[1], [1, 2]]), "same number of values"),
        (_with_check(data="DROP TABLE people"), "field 'data': holds DROP"),
        (_with_check(ordered="yes"), "field 'ordered'"),
        (_with_check(tolerance=-1), "field 'tolerance'"),
        (_with_check(rows=[[1]]), "unknown field 'rows'"),
        ({**GOOD_LINE, "heldout_checks": [{"name": "none"}]}, "field 'expected': required"),
        ({**GOOD_LINE, "reference_solution": "DELETE FROM people"}, "reference_solution"),
    ],
)
def test_a_bad_sql_line_names_file_line_field_and_fix(
    tmp_path: Path, line: dict[str, Any], reason: str
) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(GOOD_LINE) + "\n" + json.dumps({**line, "id": "sql/2"}) + "\n")
    with pytest.raises(SuiteFormatError) as caught:
        load_jsonl_suite(path)
    assert caught.value.line == 2
    assert str(caught.value).startswith(f"{path}:2: judge 'sql': ")
    assert reason in str(caught.value)


def test_a_good_sql_line_loads(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(GOOD_LINE) + "\n")
    (case,) = load_jsonl_suite(path)
    assert [check.spec.get("expected") for check in case.checks] == [[[3]], [[0]]]


def test_the_documented_example_is_a_valid_case_whose_reference_passes(
    judge: SqlJudge, tmp_path: Path
) -> None:
    docs = Path(__file__).parents[3] / "docs" / "suites.md"
    section = docs.read_text(encoding="utf-8").split("## sql", 1)[1].split("\n## ", 1)[0]
    example = section.split("```json\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.jsonl"
    path.write_text(json.dumps(json.loads(example)) + "\n")
    (case,) = load_jsonl_suite(path)
    assert _codes(judge(case, case.reference_solution)) == []
