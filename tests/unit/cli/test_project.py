"""Defaults resolve against the project root; outside a project the CLI still works
and leaves nothing of Prefect's behind."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest

from critiquebench._cli._interrupt import resume_command
from critiquebench.pipeline import RunConfig, store_root
from critiquebench.runtime.project import (
    PACKAGED_PRICES,
    default_cache_dir,
    default_output,
    default_prefect_home,
    default_prices,
    find_project_root,
    local_cache_dir,
    project_root,
)
from tests.integration.replay_run import build_replay_run
from tests.prefect_state import DATABASE, seed_home
from tests.unit.cli.conftest import CLI, OWN_VARIABLES, SIM_RUN, ProjectRun, outside_env


@pytest.fixture()
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*OWN_VARIABLES, "CRITIQUEBENCH_PRICES"):
        monkeypatch.delenv(name, raising=False)


def test_root_is_found_by_marker_or_pyproject_table(tmp_path: Path, clean_env: None) -> None:
    marked = tmp_path / "marked"
    (marked / "a" / "b").mkdir(parents=True)
    (marked / ".critiquebench").touch()
    assert find_project_root(marked / "a" / "b") == marked.resolve()
    declared = tmp_path / "declared"
    (declared / "sub").mkdir(parents=True)
    (declared / "pyproject.toml").write_text("[tool.critiquebench]\n")
    assert find_project_root(declared / "sub") == declared.resolve()
    other = tmp_path / "other"
    other.mkdir()
    (other / "pyproject.toml").write_text("[tool.black]\nline-length = 80\n")
    assert find_project_root(other) is None  # another project's pyproject.toml marks nothing
    assert project_root(environ={}, cwd=other) == other.resolve()  # no project: here


def test_defaults_resolve_against_the_root_from_a_subfolder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None
) -> None:
    (tmp_path / ".critiquebench").touch()
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    root = tmp_path.resolve()
    assert default_output() == root / "data" / "runs"
    assert default_cache_dir() == root / "data" / "cache"
    assert default_prefect_home() == root / ".prefect"
    assert default_prices() == PACKAGED_PRICES  # the project has no table of its own
    (root / "data").mkdir()
    (root / "data" / "prices.json").write_text('{"models": {}}')
    assert default_prices() == root / "data" / "prices.json"


def test_environment_variables_set_each_path(tmp_path: Path, clean_env: None) -> None:
    env = {
        "CRITIQUEBENCH_HOME": str(tmp_path / "home"),
        "CRITIQUEBENCH_OUTPUT": "/r",
        "CRITIQUEBENCH_PRICES": "/p.json",
    }
    assert default_output(env) == Path("/r")
    assert default_prices(env) == Path("/p.json")  # named, so used even if missing
    assert default_cache_dir(env) == (tmp_path / "home").resolve() / "data" / "cache"
    assert default_prefect_home(env) == (tmp_path / "home").resolve() / ".prefect"


def test_an_output_url_in_the_environment_is_the_store_of_every_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None
) -> None:
    monkeypatch.setenv("CRITIQUEBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("CRITIQUEBENCH_OUTPUT", "s3://bucket/runs")
    monkeypatch.setenv("CRITIQUEBENCH_CACHE_DIR", "memory://shared/cache")
    config = RunConfig(suite="basic", model="sim")
    assert not isinstance(config.output, Path)  # Path would make it s3:/bucket/runs
    assert str(config.output) == "s3://bucket/runs"
    assert str(config.cache_dir) == "memory://shared/cache"
    assert local_cache_dir() == tmp_path.resolve() / "data" / "cache"  # mypy's stays local
    assert resume_command("r1", config.output, store_root(default_output())) == (
        "critiquebench resume r1"
    )
    assert resume_command("r1", store_root("s3://other/runs"), config.output).endswith(
        "--output s3://other/runs"
    )


def test_outside_a_project_prefect_state_goes_to_the_user_state_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None
) -> None:
    monkeypatch.chdir(tmp_path)
    assert find_project_root(tmp_path) is None
    home = default_prefect_home({"XDG_STATE_HOME": str(tmp_path / "state")})
    assert home == tmp_path / "state" / "critiquebench" / "prefect"


def test_report_outside_the_project_prices_with_the_table_the_run_stored(tmp_path: Path) -> None:
    work = tmp_path / "elsewhere"
    (work / "data").mkdir(parents=True)
    build_replay_run(work / "data" / "runs", "r-1", limit=2, reps=1)
    done = subprocess.run(
        [CLI, "report", "r-1"], cwd=work, env=outside_env(tmp_path),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "no price table" not in done.stdout + done.stderr
    report = json.loads((work / "data" / "runs" / "r-1" / "report.json").read_text())
    # The table the run read when it started, stored with it: the same wherever reported.
    assert report["cost"]["prices_source"].endswith(" as stored with run r-1")
    assert not (work / ".prefect").exists()


@pytest.mark.slow
def test_a_run_outside_the_project_leaves_no_prefect_folder(
    tmp_path: Path, sim_run_in_a_project: ProjectRun, migrated_prefect_state: Path | None
) -> None:
    work, done = sim_run_in_a_project.project, sim_run_in_a_project.done
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no price table" not in done.stdout + done.stderr
    assert (work / "data" / "runs" / "out-1" / "report.json").is_file()
    assert not (work / "sub" / ".prefect").exists() and (work / ".prefect").is_dir()
    # No project at all: Prefect's state goes to the user's state folder, not here.
    # The user's state folder holds a migrated database already (as after a first run,
    # which the shared run above makes on an empty home): the run's flow must land in it.
    state = seed_home(
        tmp_path / "home" / ".local" / "state" / "critiquebench" / "prefect", migrated_prefect_state
    )
    bare = tmp_path / "bare"
    bare.mkdir()
    done = subprocess.run(
        [*SIM_RUN, "--run-id", "bare-1"], cwd=bare, env=outside_env(tmp_path),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (bare / ".prefect").exists()
    with closing(sqlite3.connect(state / DATABASE)) as database:
        assert database.execute("SELECT count(*) FROM flow_run").fetchone() == (1,)
    assert (bare / "data" / "runs" / "bare-1" / "report.json").is_file()
