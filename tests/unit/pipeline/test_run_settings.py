"""`critiquebench run` options, the flow's parameters and the runs row all come from
RunConfig: these tests compare them field by field, so they cannot disagree."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import pytest
import typer.main
import yaml
from pydantic_core import PydanticUndefined
from typer.testing import CliRunner

from critiquebench import cli
from critiquebench.cli import app
from critiquebench.models import MODEL_SPEC_HELP
from critiquebench.pipeline import EXECUTION_FIELDS, ResultStore, RunConfig, start_run
from critiquebench.pipeline._schema import CONFIG_COLUMN_NAMES, TABLES
from tests.integration.replay_run import write_replay_file

PROJECT = Path(__file__).resolve().parents[3]
runner = CliRunner()

# A value unlike the default for every field, as typed, and what it must become.
# A new RunConfig field fails test_samples_cover_every_field until it has one here.
SAMPLES: dict[str, tuple[list[str], Any]] = {
    "suite": (["--suite", "humaneval"], "humaneval"),
    "limit": (["--limit", "5"], 5),
    "case_ids": (["--case", "b/00*", "--case", "b/1*,x*"], ("b/00*", "b/1*", "x*")),
    "tags": (["--tag", "easy"], ("easy",)),
    "sample": (["--sample", "3"], 3),
    "sample_seed": (["--seed", "7"], 7),
    "only_failed": (["--only-failed", "old-1"], "old-1"),
    "canaries": (["--canaries", "4"], 4),
    "arms": (["--arms", "A,C"], ("A", "C")),
    "reps": (["--reps", "2"], 2),
    "retry_limit": (["--retry-limit", "4"], 4),
    "model": (["--model", "sim:fix=0.5"], "sim:fix=0.5"),
    "max_concurrency": (["--max-concurrency", "3"], 3),
    "run_id": (["--run-id", "given-1"], "given-1"),
    "output": (["--output", "elsewhere"], Path("elsewhere")),
    "feedback": (["--feedback", "all"], "all"),
    "token_budget": (["--token-budget", "none"], None),
    "temperature": (["--temperature", "0.25"], 0.25),
    "max_tokens": (["--max-tokens", "64"], 64),
    "verifier_policy": (["--verifier-policy", "fail_closed"], "fail_closed"),
    "reviewers": (["--reviewers", "3"], 3),
    "quorum_threshold": (["--quorum-threshold", "2"], 2),
    "run_error_feedback": (["--run-error-feedback"], True),
    "stagnation_patience": (["--stagnation-patience", "2"], 2),
    "cache": (["--no-cache"], False),
    "cache_dir": (["--cache-dir", "c"], Path("c")),
    "max_calls_in_flight": (["--max-calls-in-flight", "4"], 4),
    "requests_per_minute": (["--rpm", "10"], 10),
    "tokens_per_minute": (["--tokens-per-minute", "1000"], 1000),
    "task_runner": (["--task-runner", "dask"], "dask"),
    "dask_address": (["--dask-address", "tcp://h:1"], "tcp://h:1"),
    "prices": (["--prices", "p.json"], Path("p.json")),
    "target": (["--target", "0.5"], 0.5),
}


@pytest.fixture()
def captured(monkeypatch: pytest.MonkeyPatch) -> list[RunConfig]:
    """The configs `run` would execute; the flow and the preflight checks are skipped."""
    found: list[RunConfig] = []
    monkeypatch.setattr(cli, "preflight", lambda config: [])
    monkeypatch.setattr(cli, "_execute", lambda config, cases, *_: found.append(config))
    return found


def _run_command() -> Any:
    return typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]


def test_samples_cover_every_field() -> None:
    assert set(SAMPLES) == set(RunConfig.model_fields)


def test_run_options_are_the_fields_with_their_defaults_help_and_choices() -> None:
    options = {p.name: p for p in _run_command().params}
    # --like, and the CI gate and JUnit file: not settings of the experiment.
    assert set(options) - {"like", "require", "junit"} == set(RunConfig.model_fields)
    for name, info in RunConfig.model_fields.items():
        option = options[name]
        dashed = name.replace("_", "-")
        assert option.opts[0] == f"--{dashed}", name
        assert option.help.startswith(info.description or "?"), name
        if info.annotation is bool:
            assert option.secondary_opts == [f"--no-{dashed}"]
            assert option.default is info.default
        elif info.default is PydanticUndefined:  # computed when the run starts
            assert option.default is None and not option.show_default, name
        elif cli._OPTION[name].repeatable:  # given any number of times; none: the default ()
            assert option.default is None and option.multiple and info.default == (), name
        else:
            shown = cli._OPTION[name].default_text
            assert option.default == shown and option.show_default, name
            typed = RunConfig.model_validate(cli.given_values([cli._OPTION[name]], {name: shown}))
            assert getattr(typed, name) == info.default, name  # the shown default is the default
    for name in ("feedback", "verifier_policy", "task_runner"):
        choices = get_args(RunConfig.model_fields[name].annotation)
        assert options[name].metavar == "[" + "|".join(choices) + "]"
    assert options["requests_per_minute"].opts == ["--requests-per-minute", "--rpm"]


def test_run_help_at_80_columns_shows_every_option_and_cuts_no_text() -> None:
    result = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"})
    assert result.exit_code == 0
    assert "…" not in result.output
    text = "".join(result.output.split())
    for name, info in RunConfig.model_fields.items():
        assert f"--{name.replace('_', '-')}" in result.output
        assert "".join((info.description or "").split()) in text, name
    assert "".join(MODEL_SPEC_HELP.split()) in text  # the model examples, whole


def test_every_option_reaches_its_field(captured: list[RunConfig]) -> None:
    for name, (args, expected) in SAMPLES.items():
        assert RunConfig.model_fields[name].get_default(call_default_factory=True) != expected
        extra = ["--task-runner", "dask"] if name == "dask_address" else []
        result = runner.invoke(app, ["run", *args, *extra])
        assert result.exit_code == 0, (name, result.output)
        assert getattr(captured[-1], name) == expected, name


def test_errors_name_the_option_as_typed(captured: list[RunConfig]) -> None:
    for args, shown in (
        (["--rpm", "0"], "--rpm 0: Input should be greater than or equal to 1"),
        (["--requests-per-minute=0"], "--requests-per-minute 0: Input should be greater"),
        (["--tpm", "x"], "--tpm x: Input should be a valid integer"),
        (["--token-budget", "0"], "--token-budget 0: Input should be greater than or equal to 1"),
        (["--feedback", "some"], "--feedback some: Input should be 'visible' or 'all'"),
        (["--target", "5"], "--target 5: the target is a fraction in (0, 1]"),
    ):
        result = runner.invoke(app, ["run", *args])
        assert result.exit_code == 2, result.output
        (line,) = result.output.splitlines()
        assert line.startswith(f"error: {shown}"), line
    assert not captured


def test_report_takes_target_and_output_from_the_same_fields(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", "r", "--output", str(tmp_path), "--target", "1.5"])
    assert result.exit_code == 2
    assert "--target 1.5: the target is a fraction in (0, 1]" in result.output
    result = runner.invoke(app, ["report", "r", "--output", str(tmp_path)])
    assert "run 'r': no such run under" in result.output and result.exit_code == 2


def _earlier_run(tmp_path: Path) -> RunConfig:
    replay = write_replay_file(tmp_path / "replay.jsonl", limit=2)
    config = RunConfig(
        suite="basic", limit=2, arms=("A", "C"), reps=2, retry_limit=2, model=f"replay:{replay}",
        run_id="first-1", output=tmp_path / "runs", feedback="all", token_budget=None,
        temperature=0.3, max_tokens=128, verifier_policy="fail_closed", reviewers=3,
        quorum_threshold=2, stagnation_patience=1, cache=False, cache_dir=tmp_path / "cache",
        max_calls_in_flight=1, requests_per_minute=30, tokens_per_minute=9000,
        prices=tmp_path / "prices.json", target=0.6,
    )  # fmt: skip
    start_run(config)  # writes the runs row of the start, as a real run does
    return config


def _stored(output: Path, run_id: str) -> dict[str, Any]:
    (row,) = ResultStore(output).run_rows(run_id)
    settings: dict[str, Any] = json.loads(row["config_json"])
    return settings


def test_like_reuses_every_setting_of_the_earlier_run(
    tmp_path: Path, captured: list[RunConfig]
) -> None:
    earlier = _earlier_run(tmp_path)
    result = runner.invoke(app, ["run", "--like", "first-1", "--output", str(earlier.output)])
    assert result.exit_code == 0, result.output
    (again,) = captured
    assert again.run_id != earlier.run_id
    stored = {k: v for k, v in _stored(earlier.output, "first-1").items() if k != "run_id"}
    assert {k: v for k, v in again.model_dump(mode="json").items() if k != "run_id"} == stored
    assert again.experiment_hash() == earlier.experiment_hash()


def test_like_with_overrides_changes_only_those(tmp_path: Path, captured: list[RunConfig]) -> None:
    earlier = _earlier_run(tmp_path)
    args = ["--like", "first-1", "--output", str(earlier.output), "--reps", "1", "--limit", "none"]
    result = runner.invoke(app, ["run", *args, "--run-id", "second-1"])
    assert result.exit_code == 0, result.output
    before = _stored(earlier.output, "first-1")
    after = captured[0].model_dump(mode="json")
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {"run_id", "reps", "limit"}
    assert (after["reps"], after["limit"]) == (1, None)


def test_like_an_unknown_run_is_one_line(tmp_path: Path, captured: list[RunConfig]) -> None:
    result = runner.invoke(app, ["run", "--like", "nope", "--output", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"error: --like nope: no such run under {tmp_path}; `critiquebench list --output "
        f"{tmp_path}` lists the runs there (give --output to look in another folder)"
    )


def test_runs_row_has_a_column_per_setting(tmp_path: Path) -> None:
    earlier = _earlier_run(tmp_path)
    (row,) = ResultStore(earlier.output).run_rows("first-1")
    columns = {column.name for column in TABLES["runs"]}
    for name, value in earlier.model_dump(mode="json").items():
        column = CONFIG_COLUMN_NAMES.get(name, name)
        assert column in columns, name
        expected = ",".join(value) if isinstance(value, list) else value
        assert row[column] == expected, name
    assert RunConfig.model_validate_json(row["config_json"]) == earlier


def test_flow_parameters_are_the_fields() -> None:
    from flows.ab_matrix import ab_matrix, config_from_parameters

    parameters = inspect.signature(ab_matrix).parameters
    assert list(parameters) == list(RunConfig.model_fields)
    for name, info in RunConfig.model_fields.items():
        computed = info.default is PydanticUndefined
        assert parameters[name].default == (None if computed else info.default), name
    # What `prefect deployment run ... --param limit=5` hands the flow: flat values.
    checked = ab_matrix.validate_parameters({"limit": 5, "arms": ["A", "B"]})
    config = config_from_parameters(checked)
    assert (config.limit, config.arms, config.output) == (5, ("A", "B"), RunConfig().output)


def test_deployments_set_flat_flow_parameters() -> None:
    from flows.ab_matrix import ab_matrix, config_from_parameters

    declared = yaml.safe_load((PROJECT / "prefect.yaml").read_text())
    for deployment in declared["deployments"]:
        parameters = deployment["parameters"]
        assert set(parameters) <= set(RunConfig.model_fields), deployment["name"]
        checked = ab_matrix.validate_parameters({**parameters, "limit": 5})
        assert config_from_parameters(checked).limit == 5


def test_execution_fields_are_fields() -> None:
    assert set(RunConfig.model_fields) >= EXECUTION_FIELDS
    assert {"target", "prices", "task_runner", "dask_address"} <= EXECUTION_FIELDS


def test_importing_the_cli_imports_no_heavy_library() -> None:
    code = (
        "import sys, critiquebench.cli; heavy = ('prefect', 'langgraph', 'duckdb', "
        "'great_expectations', 'pyarrow', 'altair', 'numpy'); "
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_the_preflight_of_a_new_run_loads_no_parquet_library(tmp_path: Path) -> None:
    """The CLI starts Prefect's server right after the preflight: nothing to resume, so
    the store's pyarrow (~0.2 s) is left for later, when it loads alongside the server."""
    code = (
        "import sys; from pathlib import Path; from critiquebench.pipeline import RunConfig, "
        "preflight; config = RunConfig(suite='basic', limit=2, model='sim:fix=0.5', "
        "output=Path(sys.argv[1]), run_id='new'); print(len(preflight(config)), "
        "'pyarrow' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], env=env, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "False"]


def test_report_uses_the_runs_own_target_unless_given(tmp_path: Path) -> None:
    from critiquebench.pipeline import finish_run, run_unit

    replay = write_replay_file(tmp_path / "replay.jsonl", limit=2)
    config = RunConfig(
        suite="basic", limit=2, model=f"replay:{replay}", run_id="t-1",
        output=tmp_path / "runs", cache=False, target=0.6,
    )  # fmt: skip
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    finish_run(plan, failed=0)
    report_json = config.output / "t-1" / "report.json"
    for args, target in (([], 0.6), (["--target", "0.9"], 0.9)):
        result = runner.invoke(app, ["report", "t-1", "--output", str(config.output), *args])
        assert result.exit_code == 0, result.output
        assert json.loads(report_json.read_text())["target"] == target
