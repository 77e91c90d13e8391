"""Suite validation judges each case's reference with the judge the case names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.judges import Failure, JudgeResult
from critiquebench.suites import Case, validate_suite


class WordJudge:
    """A judge outside the package: the answer must be the case's word, nothing else."""

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        word = case.judge_data["word"]
        failures = tuple(
            Failure(kind="json", code="wrong_word", origin=check.origin, source=check.source,
                    expected=word, actual=artifact.strip(), file="/word", message="")
            for check in case.checks
            if artifact.strip() != word
        )  # fmt: skip
        total = len(case.checks)
        return JudgeResult(failures, checks_total=total, checks_passed=total - len(failures),
                           duration_s=0.0)  # fmt: skip


def _register(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Install a distribution that registers ``word`` in the judges' entry-point group."""
    dist = site / "word_judge-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: word-judge\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[critiquebench.judges]\nword = {__name__}:WordJudge\n")
    monkeypatch.syspath_prepend(str(site))


def _line(case_id: str, reference: str) -> dict[str, Any]:
    # "say" is not a Python statement: the Python judge could not make sense of it.
    return {"id": case_id, "prompt": "Say the word.", "judge": "word",
            "judge_data": {"word": "ok"}, "reference_solution": reference,
            "feedback_checks": [{"name": "says it"}],
            "heldout_checks": [{"name": "says only it"}]}  # fmt: skip


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _register(tmp_path / "site", monkeypatch)
    path = tmp_path / "words.jsonl"
    lines = [_line("w/good", "ok\n"), _line("w/bad", "nope\n")]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_each_reference_is_judged_by_its_own_judge(suite: Path) -> None:
    found = validate_suite(str(suite))
    assert found.references_checked == 2
    # The good reference passes its judge (the Python judge would fail "ok"), the bad
    # one is reported with the judge's own words; a word case gets no Python warnings.
    [problem] = found.problems
    assert (problem.kind, problem.case_id, problem.where) == ("reference", "w/bad", f"{suite}:2")
    assert "reference_solution fails 2 of 2 check(s)" in problem.message
    assert "[json wrong_word] at /word feedback check `says it` expected ok, actual nope" in (
        problem.message
    )
    assert "heldout check `says only it`" in problem.message
    assert found.checks == 0  # where checks run is a question of the Python judge only


def test_the_command_reports_the_bad_reference(suite: Path) -> None:
    result = CliRunner().invoke(app, ["validate-suite", str(suite)])
    assert result.exit_code == 1, result.output
    assert f"{suite}:2: error: w/bad: reference_solution fails 2 of 2" in result.output
    assert "1 of 2 reference solution(s) pass their own checks" in result.output


def test_a_judge_that_raises_is_an_error_not_a_pass(
    suite: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: WordJudge, case: Case, artifact: str) -> JudgeResult:
        raise RuntimeError("cannot read the word")

    monkeypatch.setattr(WordJudge, "__call__", broken)
    found = validate_suite(str(suite))
    assert [p.case_id for p in found.errors] == ["w/good", "w/bad"]
    assert all("could not run the reference solution" in p.message for p in found.errors)
    assert "RuntimeError: cannot read the word" in found.errors[0].message
