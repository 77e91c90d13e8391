"""Other systems as arms: replay lines with tokens and latency, and the importers of
inspect_ai eval logs (made by inspect_ai itself here) and promptfoo output files."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.models import ReplayFormatError, load_replay_file
from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run
from critiquebench.suites import load_suite

runner = CliRunner()
CASES = ("basic/001_add_two", "basic/002_max_of_two")


def _both_references() -> str:
    # One answer that defines every function of both cases: whichever sample gets it,
    # it is right (inspect_ai may run the samples in any order).
    code = "\n\n".join(case.reference_solution for case in load_suite("basic", limit=2))
    return f"```python\n{code}\n```"


def _judge_as_arm(tmp_path: Path, replay: Path, run_id: str) -> list[dict[str, object]]:
    config = RunConfig.model_validate(
        {"suite": "basic", "arms": "A", "model": f"replay:{replay}", "case_ids": CASES,
         "output": tmp_path / "runs", "run_id": run_id}
    )  # fmt: skip
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    finish_run(plan, failed=0)
    return sorted(
        (
            row
            for path in (tmp_path / "runs" / run_id / "cases").glob("*.parquet")
            for row in pq.read_table(path).to_pylist()
        ),
        key=lambda row: str(row["case_id"]),
    )


def _inspect_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    logs = tmp_path / "inspect-logs"
    monkeypatch.setenv("INSPECT_LOG_DIR", str(logs))
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # inspect_ai's own data folders
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate

    output = ModelOutput.from_content(model="mockllm/model", content=_both_references())
    output.usage = ModelUsage(input_tokens=120, output_tokens=45, total_tokens=165)
    model = get_model("mockllm/model", custom_outputs=[output, output])
    samples = [
        Sample(id=CASES[0], input="add two numbers"),
        Sample(id="second", input="the larger", metadata={"case_id": CASES[1]}),
    ]
    task = Task(dataset=samples, solver=generate())
    (log,) = inspect_eval(task, model=model, log_dir=str(logs), display="none")
    assert log.status == "success"
    found = sorted(logs.glob("*.eval"))
    assert len(found) == 1
    return found[0]


def test_an_inspect_ai_log_is_imported_and_judged_as_an_arm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _inspect_log(tmp_path, monkeypatch)
    replay = tmp_path / "inspect.jsonl"
    result = runner.invoke(app, ["import", "inspect", str(log), "--out", str(replay)])
    assert result.exit_code == 0, result.output
    assert "2 line(s) for 2 case(s)" in result.output
    lines = [json.loads(line) for line in replay.read_text(encoding="utf-8").splitlines()]
    assert {line["case_id"] for line in lines} == set(CASES)  # metadata case_id read
    assert all(line["rep"] == 0 and line["tokens_in"] == [120] for line in lines)
    rows = _judge_as_arm(tmp_path, replay, "from-inspect")
    assert [row["case_id"] for row in rows] == list(CASES)
    assert all(row["passed"] and row["defects_final"] == 0 for row in rows)
    assert all(row["tokens_in"] == 120 and row["tokens_out"] == 45 for row in rows)
    assert all(float(str(row["model_latency_s"])) > 0 for row in rows)


def _promptfoo(path: Path, results: list[dict[str, object]]) -> Path:
    path.write_text(json.dumps({"evalId": "e", "results": {"results": results}}), "utf-8")
    return path


def _result(case_id: str, output: str, provider: str = "openai:x") -> dict[str, object]:
    return {
        "provider": {"id": provider},
        "vars": {"case_id": case_id},
        "response": {"output": output, "tokenUsage": {"prompt": 30, "completion": 12}},
        "latencyMs": 2500,
        "success": True,
    }


def test_a_promptfoo_output_is_imported_and_judged_with_its_tokens(tmp_path: Path) -> None:
    hollow = "```python\ndef max_of_two(a, b):\n    return None\n```"
    source = _promptfoo(
        tmp_path / "promptfoo.json",
        [_result(CASES[0], _both_references()), _result(CASES[1], hollow)],
    )
    replay = tmp_path / "promptfoo.jsonl"
    result = runner.invoke(app, ["import", "promptfoo", str(source), "--out", str(replay)])
    assert result.exit_code == 0, result.output
    rows = _judge_as_arm(tmp_path, replay, "from-promptfoo")
    assert [bool(row["passed"]) for row in rows] == [True, False]
    assert all(row["tokens_in"] == 30 and row["tokens_out"] == 12 for row in rows)
    assert all(row["model_latency_s"] == pytest.approx(2.5) for row in rows)


def test_a_promptfoo_file_of_several_providers_needs_one_named(tmp_path: Path) -> None:
    source = _promptfoo(
        tmp_path / "two.json",
        [_result(CASES[0], "a", "p1"), _result(CASES[0], "b", "p2"), _result(CASES[0], "c", "p2")],
    )
    out = tmp_path / "r.jsonl"
    refused = runner.invoke(app, ["import", "promptfoo", str(source), "--out", str(out)])
    assert refused.exit_code != 0 and "choose one with --provider" in refused.output
    chosen = ["import", "promptfoo", str(source), "--out", str(out), "--provider", "p2"]
    assert runner.invoke(app, chosen).exit_code == 0
    replayed = load_replay_file(out)
    assert replayed.answers_for(CASES[0], 0) == ["b"]  # the provider's repeats are reps
    assert replayed.answers_for(CASES[0], 1) == ["c"]
    no_id = _promptfoo(tmp_path / "noid.json", [{"response": {"output": "x"}}])
    missing = runner.invoke(app, ["import", "promptfoo", str(no_id), "--out", str(out)])
    assert "results[0] has no case_id" in missing.output


def test_replay_costs_are_per_answer_or_one_for_all_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(
        json.dumps({"case_id": "c", "answers": ["a", "b"], "tokens_in": [5, 7],
                    "tokens_out": 3, "latency_s": [0.5, 1.5]}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    replay = load_replay_file(path)
    assert replay.cost_for("c", 0, 1).tokens_in == 7
    assert replay.cost_for("c", 0, 1).tokens_out == 3
    assert replay.cost_for("c", 0, 5).latency_s == 1.5  # past the end: the last answer's
    for bad, message in (
        ({"tokens_in": [1]}, "tokens_in has 1 value"),
        ({"tokens_out": -1}, "numbers >= 0"),
        ({"tokens_in": 1.5}, "whole numbers"),
        ({"latency_s": "1"}, "numbers >= 0"),
    ):
        path.write_text(json.dumps({"case_id": "c", "answers": ["a", "b"], **bad}), "utf-8")
        with pytest.raises(ReplayFormatError, match=message):
            load_replay_file(path)
