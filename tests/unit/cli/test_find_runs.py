"""Finding runs: `critiquebench list`, `latest` and unique id prefixes wherever a run
id is taken, and one refusal for an unknown or ambiguous run in every command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.pipeline import (
    ResultStore,
    RunConfig,
    RunOwner,
    finish_run,
    owner_json,
    owner_path,
    resolve_run,
    run_unit,
    start_run,
)

runner = CliRunner()


def _config(output: Path, run_id: str) -> RunConfig:
    return RunConfig(
        suite="basic", limit=1, arms=("A", "B"), model="sim:fix=0.9,draft=0.9", cache=False,
        output=output, run_id=run_id, prices=output / "no-prices.json",
    )  # fmt: skip


def _finished(output: Path, run_id: str) -> None:
    config = _config(output, run_id)
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    finish_run(plan, failed=0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three runs: two finished (exp-one, then exp-two) and one left running (other)."""
    output = tmp_path_factory.mktemp("find") / "runs"
    _finished(output, "exp-one")
    _finished(output, "exp-two")
    start_run(_config(output, "other"))
    return output


def _one_line_refusal(result: object, ref: str, output: Path) -> None:
    assert getattr(result, "exit_code") == 2  # noqa: B009
    text = getattr(result, "output")  # noqa: B009
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert ref in lines[0] and f"critiquebench list --output {output}" in lines[0], text


def test_ids_prefixes_and_latest_resolve_and_others_are_refused(runs: Path) -> None:
    assert resolve_run(runs, "exp-one") == "exp-one"
    assert resolve_run(runs, "exp-o") == "exp-one"
    assert resolve_run(runs, "oth") == "other"
    assert resolve_run(runs, "latest") == "other"  # the last one started
    with pytest.raises(ValueError, match=r"2 runs under .* start with it \(exp-one, exp-two\)"):
        resolve_run(runs, "exp")
    with pytest.raises(ValueError, match="no such run"):
        resolve_run(runs, "nope")


@pytest.mark.parametrize(
    "command",
    [
        ["report", "{ref}"],
        ["check", "{ref}"],
        ["compare", "exp-one", "{ref}"],
        ["sql", "--run", "{ref}", "SELECT count(*) FROM cases"],
        ["run", "--like", "{ref}"],
    ],
    ids=["report", "check", "compare", "sql", "run-like"],
)
@pytest.mark.parametrize("ref", ["nope", "exp"], ids=["unknown", "ambiguous"])
def test_every_command_refuses_an_unknown_or_ambiguous_run_alike(
    runs: Path, command: list[str], ref: str
) -> None:
    args = [part.format(ref=ref) for part in command] + ["--output", str(runs)]
    _one_line_refusal(runner.invoke(app, args), ref, runs)


def test_sql_reads_the_run_a_prefix_names(runs: Path) -> None:
    result = runner.invoke(
        app, ["sql", "--run", "exp-t", "--output", str(runs), "SELECT DISTINCT run_id FROM cases"]
    )
    assert result.exit_code == 0, result.output
    assert "exp-two" in result.output and "exp-one" not in result.output


def test_report_latest_and_a_prefix(runs: Path) -> None:
    result = runner.invoke(app, ["report", "exp-o", "--output", str(runs)])
    assert result.exit_code == 0, result.output
    assert (runs / "exp-one" / "report.json").exists()


def test_list_shows_each_run_and_a_dead_process_as_died(runs: Path, tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    reported = runner.invoke(app, ["report", "exp-two", "--output", str(runs)])
    assert reported.exit_code == 0, reported.output
    invocation = ResultStore(runs).run_dir("other") / "runs"
    stamp = next(invocation.glob("*.parquet")).stem
    path = owner_path(runs / "other", stamp)
    alive = path.read_text()
    try:
        dead = RunOwner(int(gone.stdout), RunOwner.of_this_process().host, "1")
        path.write_text(owner_json(dead))
        listed = runner.invoke(app, ["list", "--output", str(runs), "--format", "json"])
    finally:
        path.write_text(alive)
    assert listed.exit_code == 0, listed.output
    found = {item["run_id"]: item for item in json.loads(listed.output)}
    assert next(item["run_id"] for item in json.loads(listed.output)) == "other"
    assert found["other"]["status"] == "died"
    assert found["exp-two"]["status"] == "completed"
    assert (found["exp-two"]["units_landed"], found["exp-two"]["units_planned"]) == (2, 2)
    assert found["exp-two"]["suite"] == "basic" and found["exp-two"]["arms"] == "A,B"
    assert found["exp-two"]["verdict"].startswith("B ")  # its report's verdict of arm B
    # This process started it and runs: the start stays "running".
    table = runner.invoke(app, ["list", "--output", str(runs)])
    assert table.exit_code == 0, table.output
    row = next(line for line in table.output.splitlines() if "other" in line)
    assert "running" in row and "0/2" in row


def test_list_says_so_when_there_is_no_run(tmp_path: Path) -> None:
    result = runner.invoke(app, ["list", "--output", str(tmp_path / "none")])
    assert result.exit_code == 0 and "no runs under" in result.output


def test_version() -> None:
    from importlib import metadata

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"critiquebench {metadata.version('critiquebench')}"
