"""Lessons: failures of the answers kept, no `not_run`, and a project file that accumulates."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from critiquebench.analysis import LESSONS_FILE, build_report, connect, write_reports
from tests.unit.analysis.synthetic_run import Call, FakeUnit, write_run
from tests.unit.analysis.test_report import units


def _syntax_run() -> list[FakeUnit]:
    """A syntax error the loop never fixes (with checks skipped after it), and one it fixes."""
    calls = (Call(0, 10, 1), Call(1, 10, 1))
    return [
        FakeUnit("s1", "A", 0, (1,), kinds=("syntax", "not_run"), calls=calls[:1]),
        FakeUnit("s1", "B", 0, (1, 1), kinds=("syntax", "not_run"), calls=calls),
        FakeUnit("s2", "A", 0, (0,), calls=calls[:1]),
        FakeUnit("s2", "B", 0, (2, 0), calls=calls),
    ]


def test_not_run_is_never_a_failure_kind(tmp_path: Path) -> None:
    write_run(tmp_path, "syn", _syntax_run())
    report = build_report(connect(tmp_path), "syn", resamples=200)
    kinds = {(k.arm, k.kind): (k.count, k.first_draft, k.fixed) for k in report.failure_kinds}
    assert kinds == {
        ("A", "syntax"): (1, 1, 0),
        ("B", "syntax"): (1, 1, 0),
        ("B", "assertion"): (0, 2, 2),
    }
    files = write_reports(tmp_path, "syn")
    for path in (files.lessons, files.project_lessons):
        listed = [line for line in path.read_text(encoding="utf-8").splitlines() if "- " in line]
        assert listed and not [line for line in listed if "not_run" in line], path


def test_a_looping_arm_does_not_look_worse_for_trying_more(tmp_path: Path) -> None:
    # B's only unit needs three attempts; its answer kept has the same single defect as A's.
    write_run(
        tmp_path,
        "tries",
        [FakeUnit("c", "A", 0, (1,)), FakeUnit("c", "B", 0, (1, 1, 1), (1, 1, 1))],
    )
    report = build_report(connect(tmp_path), "tries", resamples=200)
    assert {k.arm: k.count for k in report.failure_kinds} == {"A": 1, "B": 1}


def test_project_lessons_accumulate_across_runs_and_never_double_count(tmp_path: Path) -> None:
    write_run(tmp_path, "known", units(), reps=2)
    first = write_reports(tmp_path, "known").project_lessons
    assert first == tmp_path / LESSONS_FILE
    text = first.read_text(encoding="utf-8")
    # A keeps 11 assertion failures in 5 units, B 5 in 3; B fixed 6 of its 11 first-draft ones.
    assert "- synthetic: assertion x16 in answers kept (8 units, 1 run)" in text
    assert "- synthetic: assertion: 6 of 11 first-draft failures fixed (55%, 1 run)" in text

    # Reporting the same run again replaces its entry: the same file, byte for byte.
    write_reports(tmp_path, "known")
    assert first.read_text(encoding="utf-8") == text

    write_run(tmp_path, "syn", _syntax_run())
    write_reports(tmp_path, "syn")
    both = first.read_text(encoding="utf-8")
    assert "2 runs recorded" in both
    assert "- synthetic: assertion x16 in answers kept (8 units, 1 run)" in both
    assert "- synthetic: syntax x2 in answers kept (2 units, 1 run)" in both
    assert "- synthetic: assertion: 8 of 13 first-draft failures fixed (62%, 2 runs)" in both
    never = both.split("## What the loop never fixes")[1].split("##")[0]
    assert never.strip() == "- synthetic: syntax: 0 of 1 first-draft failures fixed (1 run)"
    assert "- known: suite synthetic" in both and "- syn: suite synthetic" in both

    # A run whose folder is gone keeps its lessons when another run is reported.
    shutil.rmtree(tmp_path / "known")
    write_reports(tmp_path, "syn")
    assert first.read_text(encoding="utf-8") == both
    assert not list(tmp_path.glob(".LESSONS.md.*")) and not list(tmp_path.glob(".lessons.json.*"))


def test_a_damaged_lessons_file_is_refused_with_its_name_and_the_fix(tmp_path: Path) -> None:
    write_run(tmp_path, "known", units(), reps=2)
    (tmp_path / "lessons.json").write_text('{"runs": 3}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"lessons\.json: not a critiquebench lessons file.*move"):
        write_reports(tmp_path, "known")


def test_the_report_command_updates_the_project_lessons_once_per_run(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from critiquebench.cli import app

    write_run(tmp_path, "known", units(), reps=2)
    runner = CliRunner()
    args = ["report", "known", "--output", str(tmp_path), "--prices", str(tmp_path / "none")]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert f"{tmp_path / LESSONS_FILE}  (lessons across runs)" in first.output
    text = (tmp_path / LESSONS_FILE).read_text(encoding="utf-8")
    assert runner.invoke(app, args).exit_code == 0
    assert (tmp_path / LESSONS_FILE).read_text(encoding="utf-8") == text
    assert "1 run recorded" in text
