"""Output for CI: `--format json` of report, compare and check; the `--require met`
gate and its exit codes; the JUnit summary; one-line errors (a damaged Parquet file,
DuckDB's hints kept)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from typer.testing import CliRunner

from critiquebench._cli._machine import GATE_EXIT, gate
from critiquebench.analysis import read_report
from critiquebench.cli import app
from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run

runner = CliRunner()
CLI = str(Path(sys.executable).with_name("critiquebench"))


def _config(output: Path, run_id: str, limit: int) -> RunConfig:
    return RunConfig(
        suite="basic", limit=limit, arms=("A", "B"), model="sim:fix=0.9,draft=0.9",
        cache=False, output=output, run_id=run_id, prices=output / "no-prices.json",
    )  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``whole`` (every unit measured) and ``part`` (one unit of four never ran)."""
    output = tmp_path_factory.mktemp("machine") / "runs"
    for run_id, skip in (("whole", 0), ("part", 1)):
        config = _config(output, run_id, 2)
        plan = start_run(config)
        for case, unit in plan.work[skip:]:
            run_unit(case, unit, config)
        finish_run(plan, failed=0)
    return output


def test_report_json_is_the_report_json_file(runs: Path) -> None:
    result = runner.invoke(app, ["report", "whole", "--output", str(runs), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == json.loads((runs / "whole" / "report.json").read_text())


def test_compare_json_holds_both_reports(runs: Path) -> None:
    result = runner.invoke(
        app,
        ["compare", "whole", "part", "--output", str(runs), "--format", "json", "--intersect"],
    )
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert [run["run_id"] for run in found["runs"]] == ["whole", "part"]
    assert (found["paired"]["run_a"], found["paired"]["run_b"]) == ("whole", "part")


def test_check_json_gives_the_verdict_and_every_expectation(runs: Path) -> None:
    result = runner.invoke(app, ["check", "part", "--output", str(runs), "--format", "json"])
    assert result.exit_code == 1, result.output  # a unit not measured
    found = json.loads(result.output)
    assert (found["run_id"], found["complete"], found["missing"]) == ("part", False, 1)
    assert found["passed"] is True and len(found["expectations"]) > 10


def test_gate_exit_codes_are_distinct_and_follow_the_verdicts(runs: Path) -> None:
    assert len(set(GATE_EXIT.values())) == 4 and GATE_EXIT["met"] == 0
    report = read_report(runs, "whole")

    def with_verdict(verdict: str) -> object:
        arms = tuple(
            dataclasses.replace(arm, verdict=verdict) if arm.reduction is not None else arm
            for arm in report.arms
        )
        return gate(dataclasses.replace(report, arms=arms))

    assert getattr(with_verdict("met"), "outcome") == "met"  # noqa: B009
    assert getattr(with_verdict("not met"), "outcome") == "not met"  # noqa: B009
    assert getattr(with_verdict("inconclusive"), "outcome") == "inconclusive"  # noqa: B009
    part = runner.invoke(app, ["report", "part", "--output", str(runs), "--require", "met"])
    assert part.exit_code == GATE_EXIT["incomplete"] == 3, part.output
    assert "gate incomplete: 1 unit not measured" in part.output


def test_report_gate_and_junit_agree_with_the_verdict(runs: Path, tmp_path: Path) -> None:
    junit = tmp_path / "ci" / "junit.xml"
    result = runner.invoke(
        app, ["report", "whole", "--output", str(runs), "--require", "met", "--junit", str(junit)]
    )
    outcome = gate(read_report(runs, "whole"))
    assert result.exit_code == outcome.exit_code, result.output
    assert outcome.line() in result.output
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuite" and suite.get("tests") == "2"
    names = [case.get("name") for case in suite.iter("testcase")]
    assert names[0] == "every unit measured" and names[1].startswith("arm B ")
    arm_b = list(suite.iter("testcase"))[1]
    expected = {"met": None, "not met": "failure", "inconclusive": "skipped"}[outcome.outcome]
    assert [child.tag for child in arm_b] == ([expected] if expected else [])


def test_a_damaged_parquet_file_is_one_line_naming_it(runs: Path, tmp_path: Path) -> None:
    copy = tmp_path / "runs"
    shutil.copytree(runs / "whole", copy / "whole")
    damaged = sorted((copy / "whole" / "cases").glob("*.parquet"))[0]
    damaged.write_bytes(b"not parquet at all")
    env = {k: v for k, v in os.environ.items() if k != "CRITIQUEBENCH_DEBUG"}
    for command in ("report", "check"):
        done = subprocess.run(
            [CLI, command, "whole", "--output", str(copy)], capture_output=True, text=True,
            env=env, timeout=300,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, done.stderr
        assert damaged.name in lines[0] and "damaged" in lines[0], done.stderr


def test_sql_errors_keep_duckdbs_candidate_bindings(runs: Path) -> None:
    result = runner.invoke(app, ["sql", "--output", str(runs), "SELECT suit FROM runs"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Candidate bindings" in lines[0] and '"suite"' in lines[0]
