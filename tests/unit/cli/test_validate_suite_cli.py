"""`critiquebench validate-suite` through the real CLI: format, feedback, references."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.judges import JudgeResult
from critiquebench.suites import BUNDLED_SUITES, Case, validate_suite

runner = CliRunner()

GOOD: dict[str, Any] = {
    "id": "x/add",
    "prompt": "Write add(a, b).",
    "entry_point": "add",
    "feedback_tests": ["assert add(1, 2) == 3"],
    "heldout_tests": ["assert add(0, 0) == 0", "assert add(2, 2) == 4"],
    "reference_solution": "def add(a, b):\n    return a + b\n",
}


def _suite(tmp_path: Path, *cases: dict[str, Any] | str) -> Path:
    path = tmp_path / "mine.jsonl"
    lines = [case if isinstance(case, str) else json.dumps(case) for case in cases]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _validate(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["validate-suite", *args])
    # An exit through typer is a SystemExit; anything else is a traceback.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_a_good_suite_is_valid_and_its_references_pass(tmp_path: Path) -> None:
    code, output = _validate(str(_suite(tmp_path, GOOD)))
    assert code == 0
    assert "1 valid case(s), 0 error(s), 0 warning(s)" in output
    assert "1 of 1 reference solution(s) pass their own checks" in output


def test_a_wrong_reference_is_an_error_naming_line_case_and_check(tmp_path: Path) -> None:
    wrong = {**GOOD, "id": "x/wrong", "reference_solution": "def add(a, b):\n    return a * b\n"}
    path = _suite(tmp_path, GOOD, "# a comment", wrong)
    code, output = _validate(str(path))
    assert code == 1
    assert f"{path}:3: error: x/wrong: reference_solution fails 1 of 3 check(s)" in output
    assert "[feedback_tests[0]] `assert add(1, 2) == 3` expected 3, actual 2" in output
    assert "`assert add(2, 2) == 4`" not in output  # 2 * 2 == 4: that check passes
    assert "1 of 2 reference solution(s) pass" in output


def test_no_references_skips_the_judge(tmp_path: Path) -> None:
    wrong = {**GOOD, "reference_solution": "def add(a, b):\n    return a * b\n"}
    code, output = _validate(str(_suite(tmp_path, wrong)), "--no-references")
    assert code == 0
    assert "references not checked" in output


def test_feedback_that_cannot_fail_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    hollow = {**GOOD, "feedback_tests": ["assert True, 'always'"]}
    none = {**GOOD, "id": "x/none", "feedback_tests": []}
    path = _suite(tmp_path, hollow, none)
    code, output = _validate(str(path), "--no-references")
    assert code == 0
    assert f"{path}:1: warning: x/add: feedback cannot fail any candidate" in output
    assert "its condition is the constant True" in output
    assert f"{path}:2: warning: x/none:" in output and "no feedback checks" in output
    assert "2 warning(s)" in output and "warnings do not fail validation" in output
    code, _ = _validate(str(path), "--no-references", "--strict")
    assert code == 1


def test_every_bad_line_is_reported_not_only_the_first(tmp_path: Path) -> None:
    path = _suite(tmp_path, GOOD, "{not json", {**GOOD, "id": "x/2"}, {"id": "y"}, GOOD)
    code, output = _validate(str(path))
    assert code == 2
    for line, reason in ((2, "not valid JSON"), (4, "field 'prompt'"), (5, "duplicate id")):
        assert f"{path}:{line}: error: {reason}" in output
    assert "Traceback" not in output


def test_a_folder_is_one_clear_line(tmp_path: Path) -> None:
    code, output = _validate(str(tmp_path))
    assert code == 2
    assert output.strip().splitlines() == [
        f"{tmp_path}: error: is a folder: give a .jsonl suite file"
    ]


def test_a_folder_through_the_installed_command_is_one_line(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("critiquebench")
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect")}
    done = subprocess.run(
        [str(cli), "validate-suite", str(tmp_path)], capture_output=True, text=True, env=env,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert (done.stdout + done.stderr).splitlines() == [
        f"{tmp_path}: error: is a folder: give a .jsonl suite file"
    ]


def test_every_non_utf8_line_is_reported_with_the_other_problems(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(
        json.dumps(GOOD).encode() + b"\n"
        + '{"id": "café"}'.encode("latin-1") + b"\n"
        + b"{not json\n"
        + json.dumps({**GOOD, "id": "x/ø"}, ensure_ascii=False).encode("latin-1") + b"\n"
        + json.dumps({**GOOD, "id": "x/2"}).encode() + b"\n"
    )  # fmt: skip
    code, output = _validate(str(path), "--no-references")
    assert code == 2
    assert f"{path}:2: error: not UTF-8 text (byte 0xe9) at column 12: save the file as UTF-8" in (
        output
    )
    assert f"{path}:3: error: not valid JSON" in output
    assert f"{path}:4: error: not UTF-8 text (byte 0xf8) at column 11" in output
    assert "2 valid case(s), 3 error(s)" in output  # lines 1 and 5 were still read


def test_a_binary_file_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "suite.jsonl"
    path.write_bytes(b"\x7fELF\x02\x01\x00\x00" * 40)
    code, output = _validate(str(path))
    assert code == 2
    assert output.strip().splitlines() == [f"{path}: error: is a binary file, not JSONL text"]


def test_a_byte_order_mark_is_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\n")
    code, output = _validate(str(path), "--no-references")
    assert code == 0, output
    assert "1 valid case(s), 0 error(s)" in output


@pytest.mark.parametrize(
    ("text", "reason"), [("", "the file is empty"), ("# only\n\n", "the suite has no cases")]
)
def test_an_empty_file_is_reported_as_empty(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(text, encoding="utf-8")
    code, output = _validate(str(path))
    assert code == 2
    assert output.strip().splitlines() == [f"{path}: error: {reason}: add one JSON object per line"]


def test_unknown_suite_names_the_bundled_ones(tmp_path: Path) -> None:
    code, output = _validate(str(tmp_path / "nope.jsonl"))
    assert code == 2
    known = ", ".join(sorted(BUNDLED_SUITES))  # basic, humaneval and each bundled JSONL file
    assert known.startswith("basic, humaneval")
    assert f"neither a bundled suite ({known}) nor an existing file" in output


def test_bundled_basic_validates_clean_with_its_references() -> None:
    code, output = _validate("basic")
    assert code == 0, output
    assert "0 error(s), 0 warning(s)" in output
    assert "reference solution(s) pass their own checks" in output


def test_a_judge_that_cannot_judge_is_an_error_not_a_pass(tmp_path: Path) -> None:
    def broken(case: Case, artifact: str) -> JudgeResult:
        return JudgeResult((), 0, 0, 0.0, infrastructure_error="sandbox did not start")

    found = validate_suite(str(_suite(tmp_path, GOOD)), judge=broken)
    assert [p.kind for p in found.errors] == ["reference"]
    assert "could not run the reference solution: sandbox did not start" in str(found.errors[0])
    assert not found.ok()


def test_checks_the_parent_cannot_decide_are_counted(tmp_path: Path) -> None:
    # A loop over a closed range is unrolled and decided in the parent; a while loop is not.
    looped = {
        **GOOD,
        "heldout_tests": [
            "for i in range(3):\n    assert add(i, i) == 2 * i",
            "while False:\n    assert add(1, 1) == 3",
        ],
    }
    code, output = _validate(
        str(_suite(tmp_path, GOOD, {**looped, "id": "x/loop"})), "--no-references"
    )
    assert code == 0
    assert "1 of 6 check(s) run inside the sandbox" in output
