"""`compare` reports each run with the price table it was started with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run


def _prices(path: Path, per_million: float) -> Path:
    table = {"sim:": {"input_per_million": per_million, "output_per_million": per_million}}
    path.write_text(json.dumps({"models": table}), encoding="utf-8")
    return path


def _sim_run(output: Path, run_id: str, prices: Path) -> None:
    config = RunConfig(
        suite="basic", limit=2, arms=("A",), model="sim:draft=0.5", cache=False,
        output=output, run_id=run_id, prices=prices,
    )  # fmt: skip
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    assert finish_run(plan, failed=0).status == "completed"


def _cost_row(text: str) -> list[str]:
    line = next(line for line in text.splitlines() if "cost $" in line)
    return [cell.strip() for cell in line.strip("│ ").split("│")]


def test_each_run_is_costed_with_its_own_price_table(tmp_path: Path) -> None:
    output = tmp_path / "runs"
    _sim_run(output, "free", _prices(tmp_path / "free.json", 0.0))
    _sim_run(output, "dear", _prices(tmp_path / "dear.json", 1_000_000.0))
    result = CliRunner().invoke(app, ["compare", "free", "dear", "--output", str(output)])
    assert result.exit_code == 0, result.output
    arm, metric, free, dear = _cost_row(result.output)
    assert (arm, metric, free) == ("A", "cost $", "$0.0000")
    assert dear != "$0.0000"  # a token costs $1 in this run's own table
    # A table given on the command line applies to both runs.
    given = ["--prices", str(tmp_path / "free.json")]
    again = CliRunner().invoke(app, ["compare", "free", "dear", "--output", str(output), *given])
    assert _cost_row(again.output)[2:] == ["$0.0000", "$0.0000"]


def _report_costs(output: Path, run_id: str) -> dict[str, object]:
    report = json.loads((output / run_id / "report.json").read_text(encoding="utf-8"))
    cost: dict[str, object] = report["cost"]
    return cost


def test_a_report_from_another_folder_prices_with_the_runs_stored_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started_in, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    started_in.mkdir()
    elsewhere.mkdir()
    output = tmp_path / "runs"
    monkeypatch.chdir(started_in)
    _sim_run(output, "dear", _prices(Path("prices.json"), 1_000_000.0))  # a relative path
    here = CliRunner().invoke(app, ["report", "dear", "--output", str(output)])
    assert here.exit_code == 0, here.output
    paid_here = _report_costs(output, "dear")
    assert paid_here["experiment"] != 0
    # The same relative name in another folder holds another table, or none at all.
    monkeypatch.chdir(elsewhere)
    for table in (None, 0.0):
        if table is not None:
            _prices(Path("prices.json"), table)
        there = CliRunner().invoke(app, ["report", "dear", "--output", str(output)])
        assert there.exit_code == 0, there.output
        assert "no price table" not in there.output
        assert _report_costs(output, "dear") == paid_here
