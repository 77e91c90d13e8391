"""Resume means the same experiment; a replay file must cover the run before it starts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.pipeline import (
    EXECUTION_FIELDS,
    SCHEMA_VERSION,
    ConfigMismatchError,
    ReplayCoverageError,
    ResultStore,
    RunConfig,
    check_same_experiment,
    start_run,
)
from critiquebench.pipeline._preflight import experiment_differences, stored_experiment
from critiquebench.suites import load_suite
from tests.helpers import hollow_then_fixed_replay
from tests.integration.replay_run import build_replay_run


def _config(output: Path, replay: Path, **changes: Any) -> RunConfig:
    settings: dict[str, Any] = {
        "suite": "basic",
        "limit": 2,
        "model": f"replay:{replay}",
        "output": output,
        "run_id": "r1",
    }
    return RunConfig.model_validate({**settings, **changes})


def test_experiment_and_execution_fields_partition_the_config() -> None:
    fields = set(RunConfig.model_fields)
    experiment = set(RunConfig().experiment_settings())
    assert fields >= EXECUTION_FIELDS and experiment == fields - EXECUTION_FIELDS
    assert {"model", "retry_limit", "reps", "arms", "stagnation_patience"} <= experiment
    base = RunConfig(run_id="a")
    assert (
        base.experiment_hash()
        == RunConfig(
            run_id="b", max_concurrency=9, cache=False, requests_per_minute=5
        ).experiment_hash()
    )
    assert base.experiment_hash() != RunConfig(run_id="a", retry_limit=1).experiment_hash()


def test_runs_row_stores_the_full_config_and_its_hash(tmp_path: Path) -> None:
    config = build_replay_run(tmp_path / "runs", "full-1", limit=1, reps=1)
    (row,) = ResultStore(config.output).run_rows("full-1")
    assert RunConfig.model_validate_json(row["config_json"]) == config
    assert row["experiment_hash"] == config.experiment_hash()
    assert row["schema_version"] == SCHEMA_VERSION and row["status"] == "completed"


def test_resume_with_other_experiment_settings_is_refused_before_any_work(
    tmp_path: Path,
) -> None:
    replay = hollow_then_fixed_replay(tmp_path, limit=2)
    output = tmp_path / "runs"
    start_run(_config(output, replay))
    changed = _config(output, replay, retry_limit=1, model="local", max_concurrency=7)
    with pytest.raises(ConfigMismatchError) as caught:
        start_run(changed)
    message = str(caught.value)
    assert "retry_limit: 3 (run) vs 1 (now)" in message
    assert f'model: "replay:{replay}" (run) vs "local" (now)' in message
    assert "max_concurrency" not in message  # an execution knob may change
    assert len(ResultStore(output).run_rows("r1")) == 1  # nothing was started


def test_resume_with_only_execution_knobs_changed_is_accepted(tmp_path: Path) -> None:
    replay = hollow_then_fixed_replay(tmp_path, limit=2)
    output = tmp_path / "runs"
    start_run(_config(output, replay))
    plan = start_run(_config(output, replay, max_concurrency=5, cache=False))
    assert len(plan.work) == 4 and len(ResultStore(output).run_rows("r1")) == 2


def test_rows_of_schema_version_1_are_compared_by_their_columns() -> None:
    row = {
        "schema_version": 1, "suite": "basic", "case_limit": 2, "arms": "A,B", "reps": 1,
        "retry_limit": 3, "feedback": "visible", "token_budget": 20000, "model": "local",
        "verifier_policy": "fail_open", "reviewers": 1, "temperature": 0.7, "max_tokens": 256,
    }  # fmt: skip
    old = stored_experiment(row)
    new = RunConfig(limit=2).experiment_settings()
    assert {name for name in old if old[name] != new[name]} == {"stagnation_patience"}
    assert old["stagnation_patience"] == 2  # what version 1's rule did


def test_a_row_of_another_version_compares_without_failing() -> None:
    stored = {**RunConfig().model_dump(mode="json"), "future_knob": 1, "retry_limit": 2}
    old = stored_experiment({"config_json": json.dumps(stored)})
    assert experiment_differences(old, RunConfig().experiment_settings()) == [
        "future_knob: 1 (run) vs null (now)",
        "retry_limit: 2 (run) vs 3 (now)",
    ]


def test_replay_file_lacking_a_case_is_refused_at_start(tmp_path: Path) -> None:
    cases = load_suite("basic", limit=3)
    replay = tmp_path / "partial.jsonl"
    lines = [{"case_id": c.id, "answers": ["x"]} for c in (cases[0], cases[2])]
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    config = _config(tmp_path / "runs", replay, limit=3)
    with pytest.raises(ReplayCoverageError, match=f"no answers for 1 case.*: {cases[1].id}\\."):
        start_run(config)
    assert not (tmp_path / "runs").exists()


runner = CliRunner()


def _cli_run(output: Path, replay: Path, *extra: str) -> Any:
    args = ["run", "--suite", "basic", "--limit", "2", "--model", f"replay:{replay}"]
    return runner.invoke(app, [*args, "--output", str(output), *extra])


def test_cli_refuses_a_resume_that_changes_the_experiment(tmp_path: Path) -> None:
    config = build_replay_run(tmp_path / "runs", "cli-1", limit=2, reps=1)
    runs_dir = config.output / "cli-1" / "runs"
    before = sorted(runs_dir.iterdir())
    result = runner.invoke(
        app,
        ["run", "--suite", "basic", "--limit", "2", "--model", "local", "--retry-limit", "1",
         "--run-id", "cli-1", "--output", str(config.output)],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    text = result.output.replace("\n", " ")
    assert "retry_limit: 3 (run) vs 1 (now)" in text and '"local" (now)' in text
    assert sorted(runs_dir.iterdir()) == before
    assert pq.read_table(runs_dir).column("retry_limit").to_pylist() == [3]


def test_cli_refuses_a_replay_file_that_lacks_cases(tmp_path: Path) -> None:
    replay = tmp_path / "one.jsonl"
    first = load_suite("basic", limit=2)
    replay.write_text(json.dumps({"case_id": first[0].id, "answers": ["x"]}) + "\n")
    result = _cli_run(tmp_path / "runs", replay, "--reps", "2")
    assert result.exit_code == 2
    assert first[1].id in result.output and "no answers for 1 case" in result.output
    assert not (tmp_path / "runs").exists()


def test_the_experiment_hash_covers_the_content_of_suite_replay_and_prices(
    tmp_path: Path,
) -> None:
    replay = hollow_then_fixed_replay(tmp_path, limit=2)
    prices = tmp_path / "prices.json"
    prices.write_text('{"models": {}}')
    base = _config(tmp_path, replay, prices=prices)
    before = base.experiment_hash()
    copy = tmp_path / "copy.json"
    copy.write_text(prices.read_text())
    # Another path with the same content is the same experiment (the path is execution).
    assert _config(tmp_path, replay, prices=copy).experiment_hash() == before
    prices.write_text('{"models": {"x": {"input_per_million": 1, "output_per_million": 1}}}')
    assert base.experiment_hash() != before
    prices.write_text(copy.read_text())
    replay.write_text(replay.read_text().replace("return None", "return 0"))
    assert base.experiment_hash() != before
    suite = tmp_path / "suite.jsonl"
    suite.write_text("\n".join(json.dumps({"id": f"c{i}"}) for i in range(2)))
    suited = _config(tmp_path, replay, prices=prices, suite=str(suite))
    first = suited.experiment_hash()
    suite.write_text(suite.read_text() + "\n")
    assert suited.experiment_hash() != first
    roles = {file.role: file for file in suited.content_files()}
    assert set(roles) == {"suite", "replay", "prices"}
    assert roles["suite"].path == str(suite)


def _resume_from(folder: Path, monkeypatch: pytest.MonkeyPatch, output: Path) -> RunConfig:
    """The run ``r1`` started from ``folder``, naming its replay and prices relatively."""
    monkeypatch.chdir(folder)
    return _config(output, Path("replay.jsonl"), prices=Path("prices.json"))


def test_a_resume_whose_files_hold_other_content_is_refused_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    output = tmp_path / "runs"
    for folder in (first, second):
        folder.mkdir()
        hollow_then_fixed_replay(folder, limit=2)
        (folder / "prices.json").write_text('{"models": {}}')
    # Same relative names, other answers: another system under test.
    other = second / "replay.jsonl"
    other.write_text(other.read_text().replace("return None", "return 0"))
    start_run(_resume_from(first, monkeypatch, output))
    with pytest.raises(ConfigMismatchError) as caught:
        start_run(_resume_from(second, monkeypatch, output))
    message = str(caught.value)
    assert "the replay file replay.jsonl holds other content now" in message
    assert "prices" not in message  # that table is the same
    assert len(ResultStore(output).run_rows("r1")) == 1  # nothing was started
    # The price table counts too; a missing one is named as missing.
    other.write_text((first / "replay.jsonl").read_text())
    (second / "prices.json").unlink()
    with pytest.raises(ConfigMismatchError, match=r"the prices file prices.json is missing now"):
        start_run(_resume_from(second, monkeypatch, output))
    # From the first folder, with its files as they were, the run resumes.
    start_run(_resume_from(first, monkeypatch, output))
    assert len(ResultStore(output).run_rows("r1")) == 2


def test_a_run_row_stores_its_files_digests_and_price_table(tmp_path: Path) -> None:
    replay = hollow_then_fixed_replay(tmp_path, limit=1)
    prices = tmp_path / "prices.json"
    prices.write_text('{"models": {"replay": {"input_per_million": 2, "output_per_million": 3}}}')
    config = _config(tmp_path / "runs", replay, prices=prices, limit=1)
    start_run(config)
    (row,) = ResultStore(config.output).run_rows("r1")
    content = json.loads(row["content_json"])
    assert content["replay"]["path"] == str(replay)
    assert content["prices"]["sha256"] == hashlib.sha256(prices.read_bytes()).hexdigest()
    assert row["prices_json"] == prices.read_text()
    assert row["experiment_hash"] == config.experiment_hash()


def test_an_older_run_without_recorded_content_still_resumes(tmp_path: Path) -> None:
    # Rows before schema version 5 have no content_json: their hash (settings only)
    # differs from today's, and only the settings are compared.
    replay = hollow_then_fixed_replay(tmp_path, limit=2)
    config = _config(tmp_path / "runs", replay)
    old = {
        "config_json": config.model_dump_json(),
        "experiment_hash": "0123456789abcdef",
        "content_json": None,
    }

    class _Store:
        def run_rows(self, run_id: str) -> list[dict[str, Any]]:
            return [old]

    check_same_experiment(config, _Store())  # type: ignore[arg-type]
