"""Lint and type defects of the Python judge, their rows and feedback; judges by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from critiquebench.judges import (
    Failure,
    JudgeResult,
    JudgeSet,
    PythonJudge,
    StaticChecker,
    StaticReport,
    StaticSettings,
    judge_factory,
    judge_names,
)
from critiquebench.judges.static._checker import CodeScan
from critiquebench.loop import Attempt, LoopSettings
from critiquebench.loop._prompts import fix_messages
from critiquebench.pipeline import TABLES
from critiquebench.pipeline._units import _attempt_row
from critiquebench.suites import Case, Check, SuiteFormatError, load_jsonl_suite

# Line 1: unused import (ruff F401); line 2: a str where an int is declared (mypy).
SNIPPET = """import os  # noqa: F401
label: int = "s"  # type: ignore


def add(a: int, b: int) -> int:
    return a + b
"""

CASE = Case(
    id="add",
    prompt="Write add(a, b).",
    entry_point="add",
    checks=(
        Check(source="assert add(1, 2) == 3", origin="feedback"),
        Check(source="assert add(2, 2) == 4", origin="heldout"),
    ),
)


@pytest.fixture(scope="module")
def judge() -> PythonJudge:
    judge = PythonJudge(static=StaticSettings())
    try:
        yield judge  # type: ignore[misc]
    finally:
        judge.close()


def test_known_findings_with_kind_line_and_code(judge: PythonJudge) -> None:
    result = judge(CASE, SNIPPET)
    assert result.infrastructure_error is None
    assert result.passed and result.defects() == 0  # the tests alone still pass
    lint, types = result.of_kind("lint"), result.of_kind("types")
    assert [(f.line, f.code, f.file) for f in lint] == [(1, "F401", "candidate.py")]
    assert "os" in lint[0].message
    # Neither comment hides its finding: ruff ignores noqa, and comments are blanked
    # before mypy reads the code.
    assert [(f.line, f.code) for f in types] == [(2, "assignment")]
    assert 'expression has type "str"' in types[0].message
    assert result.defects_total() == 2 and not result.clean


def test_clean_code_and_syntax_errors_have_no_findings(judge: PythonJudge) -> None:
    clean = judge(CASE, "def add(a: int, b: int) -> int:\n    return a + b\n")
    assert clean.clean and clean.findings == ()
    broken = judge(CASE, "import os\ndef add(a, b:\n")
    # The syntax error is one test-side defect; ruff and mypy would only count it again.
    assert broken.findings == () and {f.kind for f in broken.failures} >= {"syntax"}


def test_a_tool_failure_is_an_infrastructure_error_not_a_defect() -> None:
    settings = StaticSettings(ruff_rules=("NOT-A-RULE",))
    broken_tool = PythonJudge(static=settings)
    try:
        result = broken_tool(CASE, SNIPPET)
    finally:
        broken_tool.close()
    assert result.infrastructure_error is not None and "ruff" in result.infrastructure_error
    assert result.defects_total() == 0


def test_checker_survives_many_candidates_with_the_same_names() -> None:
    checker = StaticChecker(StaticSettings(lint=False))
    try:
        for n in range(6):
            report = checker.check(f"def f(x: int) -> str:\n    return x + {n}\n")
            assert report.error is None
            assert [(f.line, f.code) for f in report.findings] == [(2, "return-value")]
    finally:
        checker.close()


def _attempt(result: JudgeResult, settings: LoopSettings) -> Attempt:
    return Attempt(
        iteration=0,
        artifact=SNIPPET,
        result=result,
        feedback_failures=result.visible_to(settings.feedback_origins()),
        diff_summary="",
    )


def test_findings_reach_the_fixer_in_tool_arms_only(judge: PythonJudge) -> None:
    result = judge(CASE, SNIPPET)
    tools = _attempt(result, LoopSettings(arm="B"))
    assert tools.feedback_defects == 2
    prompt = fix_messages(CASE, [tools])[-1].content
    assert "[lint F401] candidate.py line 1" in prompt
    assert "[types assignment] candidate.py line 2" in prompt
    critic_only = _attempt(result, LoopSettings(arm="C"))
    assert critic_only.feedback_defects == 0


def test_rows_store_counts_and_findings_per_kind(judge: PythonJudge) -> None:
    result = judge(CASE, SNIPPET)
    row = _attempt_row({"run_id": "r"}, _attempt(result, LoopSettings(arm="B")))
    assert (row["defects"], row["defects_total"]) == (0, 2)
    assert (row["defects_lint"], row["defects_types"]) == (1, 1)
    assert json.loads(row["lint_findings"])[0] == {
        "file": "candidate.py",
        "line": 1,
        "code": "F401",
        "message": "`os` imported but unused",
    }
    assert json.loads(row["types_findings"])[0]["line"] == 2
    names = {column.name for column in TABLES["attempts"]}
    assert set(row) - {"run_id"} <= names
    cases = {column.name for column in TABLES["cases"]}
    assert {"final_lint", "final_types", "defects_total_final", "final_lint_findings"} <= cases


class ConstantJudge:
    """A judge outside the package: one defect for anything but the word 'ok'."""

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        from critiquebench.judges import Failure

        failures = () if artifact.strip() == "ok" else (Failure(kind="assertion", message="no"),)
        return JudgeResult(failures=failures, checks_total=1, checks_passed=1 - len(failures),
                           duration_s=0.0)  # fmt: skip


def _register(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Install a distribution that registers ``constant`` in the judges' entry-point group."""
    dist = tmp_path / "constant_judge-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: constant-judge\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[critiquebench.judges]\nconstant = {__name__}:ConstantJudge\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))


def test_a_judge_registered_by_entry_point_is_found_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "constant" not in judge_names()
    _register(tmp_path, monkeypatch)
    assert judge_names() == ["constant", "json", "markdown", "python", "sql", "trigger"]
    assert judge_factory("constant") is ConstantJudge
    case = CASE.model_copy(update={"judge": "constant"})
    judges = JudgeSet()
    assert judges(case, "ok").passed and judges(case, "nope").defects() == 1
    assert isinstance(judges.get("constant"), ConstantJudge)


def test_the_suite_names_its_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    line = {
        "id": "x",
        "prompt": "say ok",
        "entry_point": "f",
        "feedback_tests": ["assert True"],
        "heldout_tests": [],
    }
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps(line) + "\n" + json.dumps({**line, "id": "y", "judge": "nope"}))
    with pytest.raises(SuiteFormatError) as raised:
        load_jsonl_suite(suite)
    assert raised.value.line == 2
    assert "field 'judge'" in str(raised.value) and "'nope'" in str(raised.value)
    suite.write_text(json.dumps(line) + "\n")
    [case] = load_jsonl_suite(suite)
    assert case.judge == "python"  # the default when a line names none
    (tmp_path / "site").mkdir()
    _register(tmp_path / "site", monkeypatch)
    suite.write_text(json.dumps({**line, "judge": "constant"}) + "\n")
    [case] = load_jsonl_suite(suite)
    assert case.judge == "constant"


def test_an_unknown_judge_is_an_infrastructure_error_not_a_crash() -> None:
    result = JudgeSet()(CASE.model_copy(update={"judge": "missing"}), "x")
    assert result.infrastructure_error is not None and "missing" in result.infrastructure_error


def test_a_text_read_before_is_not_read_again_and_gives_the_same_findings() -> None:
    checker = StaticChecker(StaticSettings(remembered=2))
    asked: list[str] = []
    lint = checker._lint  # the real tool, counted; mypy runs for real too

    def counted_lint(code: str, scan: CodeScan) -> tuple[Failure, ...]:
        asked.append(code)
        return lint(code, scan)

    checker._lint = counted_lint  # type: ignore[method-assign]
    try:
        first = checker.check(SNIPPET)
        again = checker.check(SNIPPET)
        assert again == first and len(first.findings) == 2
        assert asked == [SNIPPET]  # the tools read it once
        # A third and a fourth text push the least recently used one (SNIPPET) out.
        other, third = "x: int = 1\n", "y: str = 2\n"
        checker.check(other)
        checker.check(third)
        assert checker.check(SNIPPET) == first and asked.count(SNIPPET) == 2
    finally:
        checker.close()


def test_a_tool_failure_is_not_remembered() -> None:
    checker = StaticChecker(StaticSettings())
    failures = iter([RuntimeError("ruff crashed")])

    def flaky_lint(code: str, scan: CodeScan) -> tuple[Failure, ...]:
        for failure in failures:
            raise failure
        return ()

    checker._lint = flaky_lint  # type: ignore[method-assign]
    checker._mypy_soon = lambda code: lambda: ()  # type: ignore[method-assign]
    try:
        assert checker.check(SNIPPET).error == "static checks: RuntimeError: ruff crashed"
        assert checker.check(SNIPPET) == StaticReport()  # asked again, not the error
    finally:
        checker.close()


def test_warm_starts_the_daemon_once_and_checks_then_use_it() -> None:
    checker = StaticChecker(StaticSettings())
    try:
        checker.warm()
        status = checker._status
        assert status is not None and status.exists()
        checker.warm()  # already warm: the same daemon
        assert checker._status == status
        assert [f.code for f in checker.check(SNIPPET).findings] == ["F401", "assignment"]
        assert checker._status == status
    finally:
        checker.close()


def test_a_remembered_text_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from critiquebench.judges.static import _checker as _static

    parsed: list[str] = []
    real_parse = _static.parse

    def counted_parse(code: str) -> object:
        parsed.append(code)
        return real_parse(code)

    monkeypatch.setattr(_static, "parse", counted_parse)
    checker = StaticChecker(StaticSettings())
    checker._lint = lambda code, scan: ()  # type: ignore[method-assign]
    checker._mypy_soon = lambda code: lambda: ()  # type: ignore[method-assign]
    try:
        assert checker.check(SNIPPET) == StaticReport()
        assert checker.check(SNIPPET) == StaticReport()
        assert parsed == [SNIPPET]
        # A text that does not parse is never remembered: it is parsed each time.
        broken = "def f(:\n"
        assert checker.check(broken) == StaticReport()
        assert checker.check(broken) == StaticReport()
        assert parsed == [SNIPPET, broken, broken]
    finally:
        checker.close()
