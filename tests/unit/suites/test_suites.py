from __future__ import annotations

import ast
import gzip
import json
import re
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from critiquebench.judges import PythonJudge
from critiquebench.suites import SuiteFormatError, load_jsonl_suite, load_suite
from critiquebench.suites._humaneval import _split_test, humaneval_data_path

GOOD = {
    "id": "x/1",
    "prompt": "Write add(a, b).",
    "entry_point": "add",
    "feedback_tests": ["assert add(1, 2) == 3"],
    "heldout_tests": ["assert add(0, 0) == 0"],
}


def _write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "suite.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_valid_file_loads_with_feedback_and_heldout_checks(tmp_path: Path) -> None:
    cases = load_jsonl_suite(_write(tmp_path, "# a comment", json.dumps(GOOD), ""))
    assert [c.origin for c in cases[0].checks] == ["feedback", "heldout"]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        (json.dumps({**GOOD, "entry_point": None}), "field 'entry_point'"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "prompt"}), "field 'prompt'"),
        (json.dumps({**GOOD, "colour": "red"}), "field 'colour'"),
        (json.dumps({**GOOD, "heldout_tests": ["assert add(1,"]}), "heldout_tests[0] is not valid"),
        (json.dumps({**GOOD, "feedback_tests": ["x = 1\ny = 2"]}), "exactly one statement"),
        (json.dumps({**GOOD, "feedback_tests": [], "heldout_tests": []}), "no checks"),
        (json.dumps({**GOOD, "feedback_checks": [{"name": "x"}]}), "the python judge reads"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "entry_point"}), "required by the"),
        (json.dumps({**GOOD, "entry_point": "add two"}), "not a Python identifier"),
    ],
)
def test_malformed_line_names_file_line_and_reason(tmp_path: Path, line: str, reason: str) -> None:
    path = _write(tmp_path, json.dumps(GOOD), line)
    with pytest.raises(SuiteFormatError) as caught:
        load_jsonl_suite(path)
    assert caught.value.line == 2
    assert str(path) in str(caught.value)
    assert reason in str(caught.value)


def test_duplicate_id_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(SuiteFormatError, match=r"duplicate id 'x/1' \(first used on line 1\)"):
        load_jsonl_suite(_write(tmp_path, json.dumps(GOOD), json.dumps(GOOD)))


def test_empty_suite_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(SuiteFormatError, match="no cases"):
        load_jsonl_suite(_write(tmp_path, "# nothing"))


def test_unknown_suite_name_lists_the_bundled_ones() -> None:
    with pytest.raises(FileNotFoundError, match="basic, humaneval"):
        load_suite("no-such-suite")


def test_basic_suite_hollow_answers_fail() -> None:
    # That every reference passes is test_bundled_basic_validates_clean_with_its_references.
    cases = load_suite("basic")
    assert len(cases) >= 40
    judge = PythonJudge()
    for case in cases:
        hollow = f"def {case.entry_point}(*args, **kwargs):\n    return None\n"
        assert not judge(case, hollow).passed, case.id


def test_humaneval_has_164_problems_with_feedback_and_heldout_checks() -> None:
    cases = load_suite("humaneval")
    assert len(cases) == 164
    assert cases[0].id == "HumanEval/0"
    for case in cases:
        assert case.checks_from(frozenset({"feedback"})), case.id
        assert case.checks_from(frozenset({"heldout"})), case.id
    first = cases[0].checks[0]
    assert first.source == "assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False"


def test_humaneval_test_statements_are_the_statements_as_written_in_its_tests() -> None:
    # Each check is its statement cut from the test text, re-parsed and unparsed (how the
    # loader used to make it, one text split per statement): the same sources, in order.
    with gzip.open(humaneval_data_path(), "rt", encoding="utf-8") as lines:
        tests = [json.loads(line)["test"] for line in lines if line.strip()]
    expected = []
    for test in tests:
        check = next(
            node for node in ast.parse(test).body
            if isinstance(node, ast.FunctionDef) and node.name == "check"
        )  # fmt: skip
        cut = [ast.get_source_segment(test, statement) or "" for statement in check.body]
        expected.append([ast.unparse(ast.parse(textwrap.dedent("    " + c))) for c in cut])
    split = [[check.source for check in _split_test(test)[1]] for test in tests]
    assert sum(map(len, expected)) > 1000
    assert split == expected


def test_limit_keeps_the_first_cases() -> None:
    assert [c.id for c in load_suite("humaneval", limit=2)] == ["HumanEval/0", "HumanEval/1"]


def test_loading_reports_the_first_problem_and_counts_the_others(tmp_path: Path) -> None:
    path = _write(tmp_path, "{bad", json.dumps(GOOD), "[1]", json.dumps(GOOD))
    with pytest.raises(SuiteFormatError, match=r"and 2 more problem\(s\)") as caught:
        load_jsonl_suite(path)
    assert caught.value.line == 1
    assert [p.line for p in caught.value.more] == [3, 4]


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda p: p.mkdir(), "is a folder"),
        (lambda p: p.write_bytes(b'{"id": "\xff"}\n'), "not UTF-8 text (byte 0xff)"),
        (lambda p: p.write_text(""), "the file is empty"),
    ],
)
def test_unusable_files_are_a_suite_error_not_a_traceback(
    tmp_path: Path, make: Callable[[Path], object], reason: str
) -> None:
    path = tmp_path / "suite.jsonl"
    make(path)
    with pytest.raises(SuiteFormatError, match=re.escape(reason)):
        load_suite(str(path))
