from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from critiquebench.cli import app

runner = CliRunner()


def test_help_documents_run_options() -> None:
    result = runner.invoke(app, ["run", "--help"])
    assert result.exit_code == 0
    for option in ("--suite", "--arms", "--reps", "--retry-limit", "--model", "--output"):
        assert option in result.output


def test_bad_arm_is_a_clear_error_before_any_work() -> None:
    result = runner.invoke(app, ["run", "--arms", "A,Z"])
    assert result.exit_code == 2
    assert "unknown arm" in result.output


def test_malformed_suite_names_file_and_line(tmp_path: Path) -> None:
    suite = tmp_path / "bad.jsonl"
    suite.write_text('{"id": "a"}\n')
    result = runner.invoke(app, ["validate-suite", str(suite)])
    assert result.exit_code == 2
    assert f"{suite}:1" in result.output.replace("\n", "")


def test_validate_suite_counts_cases(tmp_path: Path) -> None:
    suite = tmp_path / "ok.jsonl"
    line = {
        "id": "a",
        "prompt": "p",
        "entry_point": "f",
        "feedback_tests": ["assert f()"],
        "heldout_tests": [],
    }
    suite.write_text(json.dumps(line) + "\n")
    result = runner.invoke(app, ["validate-suite", str(suite)])
    assert result.exit_code == 0
    assert "1 valid case" in result.output


def test_report_of_unknown_run_fails_clearly(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", "nope", "--output", str(tmp_path)])
    assert result.exit_code == 2
    assert "no results for run 'nope'" in result.output
