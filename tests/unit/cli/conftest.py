"""A real ``critiquebench run`` in a user's project, shared by the CLI tests that read it."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

CLI = str(Path(sys.executable).with_name("critiquebench"))
OWN_VARIABLES = ("CRITIQUEBENCH_HOME", "CRITIQUEBENCH_OUTPUT", "CRITIQUEBENCH_CACHE_DIR")
SIM_RUN = [CLI, "run", "--model", "sim:fix=0.6", "--limit", "1"]


def outside_env(root: Path) -> dict[str, str]:
    """The environment of a user outside this project, whose home is ``root / "home"``."""
    env = {k: v for k, v in os.environ.items() if k not in (*OWN_VARIABLES, "PREFECT_HOME")}
    env.pop("CRITIQUEBENCH_PRICES", None)
    env["HOME"] = str(root / "home")
    env.pop("XDG_STATE_HOME", None)
    return env


@dataclass(frozen=True)
class ProjectRun:
    """A finished ``run`` started from ``project / "sub"``, a subfolder of a user's project."""

    root: Path
    project: Path
    done: subprocess.CompletedProcess[str]


@pytest.fixture(scope="package")
def sim_run_in_a_project(tmp_path_factory: pytest.TempPathFactory) -> ProjectRun:
    """One small sim run through the installed CLI, with the user's defaults (no paths given).

    It starts the CLI's own Prefect server and writes tables and reports, so it costs
    ~25 s; the tests that only read what it left share it (one file: under `--dist
    loadfile` each worker that ran a file using it would pay for it again).
    """
    root = tmp_path_factory.mktemp("outside")
    project = root / "elsewhere"
    (project / "sub").mkdir(parents=True)
    (project / ".critiquebench").touch()  # a project of the user's: results go to its root
    done = subprocess.run(
        [*SIM_RUN, "--run-id", "out-1"], cwd=project / "sub", env=outside_env(root),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return ProjectRun(root, project, done)
