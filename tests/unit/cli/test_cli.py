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
    assert "run 'nope': no such run under" in result.output
    assert "critiquebench list" in result.output


def test_quorum_cli_exit_codes(tmp_path: Path) -> None:
    def vote(name: str, *actions: str) -> str:
        path = tmp_path / name
        lines = "\n".join(f"finding: F{n} action: {a}" for n, a in enumerate(actions, 1))
        path.write_text(f"```verdict\nagent: {name}\n{lines}\n```\n")
        return str(path)

    keep = [vote(f"k{n}", "KEEP", "KEEP") for n in range(3)]
    assert runner.invoke(app, ["quorum", *keep]).exit_code == 0
    kill = [vote(f"r{n}", "REJECT", "KEEP") for n in range(2)] + [keep[0]]
    result = runner.invoke(app, ["quorum", *kill])
    assert result.exit_code == 1 and "KILL" in result.output
    stdin = "\n---\n".join((tmp_path / Path(p).name).read_text() for p in keep[:2])
    assert runner.invoke(app, ["quorum", "--stdin"], input=stdin).exit_code == 0
    assert runner.invoke(app, ["quorum", str(tmp_path / "missing.md")]).exit_code == 2


def test_unknown_task_runner_is_rejected_before_any_work() -> None:
    result = runner.invoke(app, ["run", "--task-runner", "spark"])
    assert result.exit_code == 2
    assert "--task-runner spark: Input should be 'threads', 'dask' or 'ray'" in result.output


def test_errors_print_user_text_literally_not_as_rich_markup() -> None:
    # Brackets, emoji codes and a closing tag in an error must reach the user as typed.
    for arm, shown in (("[x]:x:", "arm '[x]:x:': a reference is"), ("[/]", "unknown arm '[/]'")):
        result = runner.invoke(app, ["run", "--arms", f"A,{arm}"])
        assert result.exit_code == 2, result.output
        assert shown in result.output
