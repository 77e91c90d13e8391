"""notebooks/analysis.ipynb runs top to bottom against a real (replayed) run."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from critiquebench.analysis import connect, load_prices, write_reports
from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run
from tests.integration.replay_run import build_replay_run

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "analysis.ipynb"
SVG = "image/svg+xml"


def _execute(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    # Keep the kernel's profile and connection files out of the home folder.
    monkeypatch.setenv("IPYTHONDIR", str(workdir / "ipython"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(workdir / "jupyter-runtime"))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=180,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    return notebook


def _outputs(notebook: Any) -> list[Any]:
    return [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]


def test_notebook_runs_on_the_run_given_by_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = tmp_path / "runs"
    build_replay_run(output, "nb-1", limit=3, reps=1)
    build_replay_run(output, "nb-2", limit=2, reps=1)  # newer, so chosen only by default
    monkeypatch.setenv("CRITIQUEBENCH_OUTPUT", str(output))
    monkeypatch.setenv("CRITIQUEBENCH_RUN_ID", "nb-1")
    outputs = _outputs(_execute(tmp_path, monkeypatch))
    assert not [out for out in outputs if out.output_type == "error"]
    printed = "".join(out.get("text", "") for out in outputs if out.output_type == "stream")
    assert "run: nb-1" in printed
    assert "no report.json: built from the tables" in printed
    assert "arm B: target 80% defect reduction vs A is " in printed
    assert "answer kept" in printed and "latest attempt" in printed
    charts = [out.data[SVG] for out in outputs if SVG in out.get("data", {})]
    assert len(charts) == 2
    assert all("<svg" in chart and 'class="mark-' in chart for chart in charts)


def test_notebook_defaults_to_the_newest_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = tmp_path / "runs"
    build_replay_run(output, "zz-older", limit=1, reps=1)
    build_replay_run(output, "aa-newer", limit=1, reps=1)  # newest by time, not by name
    write_reports(output, "aa-newer")
    monkeypatch.setenv("CRITIQUEBENCH_OUTPUT", str(output))
    monkeypatch.delenv("CRITIQUEBENCH_RUN_ID", raising=False)
    outputs = _outputs(_execute(tmp_path, monkeypatch))
    printed = "".join(out.get("text", "") for out in outputs if out.output_type == "stream")
    assert "run: aa-newer" in printed
    assert "read from report.json" in printed


def test_the_guide_command_runs_the_notebook(tmp_path: Path) -> None:
    """The command notebooks/README.md gives, run as written (with its own .venv)."""
    guide = (NOTEBOOK.parent / "README.md").read_text()
    (line,) = [ln for ln in re.findall(r"```sh\n(.*?)```", guide, re.S)[0].splitlines() if ln]
    words = shlex.split(line)
    settings = dict(word.split("=", 1) for word in words if re.match(r"^[A-Z_]+=", word))
    command = [word for word in words if not re.match(r"^[A-Z_]+=", word)]
    command[0] = str(Path(sys.executable).parent / Path(command[0]).name)
    output = tmp_path / "runs"
    build_replay_run(output, settings["CRITIQUEBENCH_RUN_ID"], limit=2, reps=1)
    (tmp_path / "notebooks").mkdir()
    shutil.copy(NOTEBOOK, tmp_path / "notebooks" / NOTEBOOK.name)
    env = {**os.environ, **settings, "CRITIQUEBENCH_OUTPUT": str(output)}
    env["IPYTHONDIR"] = str(tmp_path / "ipython")
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path / "jupyter-runtime")
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    executed = nbformat.read(tmp_path / "notebooks" / "analysis-run.ipynb", as_version=4)
    printed = "".join(
        out.get("text", "") for out in _outputs(executed) if out.output_type == "stream"
    )
    assert f"run: {settings['CRITIQUEBENCH_RUN_ID']}" in printed


def test_the_notebooks_cost_from_calls_is_the_reports_on_a_cached_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Arms A and B share their first drafts through the cache: B's actor pays nothing,
    yet the notebook's cost from the calls table is the report's, arm by arm."""
    output = tmp_path / "runs"
    config = RunConfig.model_validate(
        {"suite": "basic", "limit": 4, "reps": 1, "arms": "A,B", "output": output,
         "model": "sim:draft=0.9,fix=0.6,seed=3", "run_id": "nb-cost",
         "cache_dir": tmp_path / "cache"}
    )  # fmt: skip
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    finish_run(plan, failed=0)
    prices = tmp_path / "prices.json"
    table = {"input_per_million": 3.0, "output_per_million": 15.0}
    prices.write_text(json.dumps({"models": {"sim:": table}}), encoding="utf-8")
    report = write_reports(output, "nb-cost", prices=load_prices(prices)).report

    db = connect(output, ["nb-cost"])
    actor = db.execute(
        "SELECT arm, sum(paid_tokens_out), sum(experiment_tokens_out) FROM calls "
        "WHERE role = 'actor' GROUP BY arm ORDER BY arm"
    ).fetchall()
    (_, paid_a, spent_a), (_, paid_b, spent_b) = actor
    assert paid_a == spent_a == spent_b > 0 and paid_b == 0  # B's drafts were cache hits

    monkeypatch.setenv("CRITIQUEBENCH_OUTPUT", str(output))
    monkeypatch.setenv("CRITIQUEBENCH_RUN_ID", "nb-cost")
    monkeypatch.setenv("CRITIQUEBENCH_PRICES", str(prices))
    outputs = _outputs(_execute(tmp_path, monkeypatch))
    printed = "".join(out.get("text", "") for out in outputs if out.output_type == "stream")
    found = re.findall(
        r"arm (\w+): \$([\d.]+) from calls, \$([\d.]+) in the report \((.*?)\)", printed
    )
    assert [arm for arm, *_ in found] == ["A", "B"]
    for (arm, from_calls, in_report, verdict), summary in zip(found, report.arms, strict=True):
        assert summary.arm == arm and summary.cost_experiment > 0
        assert float(from_calls) == pytest.approx(summary.cost_experiment, abs=1e-9)
        assert float(in_report) == pytest.approx(summary.cost_experiment, abs=1e-9)
        assert verdict == "the same"
    # What the raw paid columns would have said: B's shared drafts at no cost.
    assert report.arms[1].cost_run < report.arms[1].cost_experiment
