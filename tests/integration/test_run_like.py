"""`critiquebench run --like RUN_ID`, end to end: the new run's stored configuration is
the earlier run's, but for its id (and the overrides given)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from critiquebench.pipeline import ResultStore, RunConfig, start_run

pytestmark = pytest.mark.slow

_CLI = str(Path(sys.executable).with_name("critiquebench"))


def _stored(output: Path, run_id: str) -> dict[str, Any]:
    rows = ResultStore(output).run_rows(run_id)
    settings: dict[str, Any] = json.loads(rows[0]["config_json"])
    return settings


def test_like_stores_exactly_the_earlier_configuration(
    tmp_path: Path, prefect_api_url: str
) -> None:
    output = tmp_path / "runs"
    earlier = RunConfig(
        suite="basic", limit=1, arms=("A", "B"), reps=1, retry_limit=2, model="sim:fix=0.6",
        run_id="earlier-1", output=output, feedback="all", token_budget=None, temperature=0.2,
        max_tokens=64, verifier_policy="fail_closed", reviewers=3, quorum_threshold=2,
        stagnation_patience=1, cache=False, cache_dir=tmp_path / "cache",
        max_calls_in_flight=1, requests_per_minute=600, tokens_per_minute=900_000,
        prices=tmp_path / "prices.json", target=0.6,
    )  # fmt: skip
    start_run(earlier)  # its runs row, as the first start of a run writes it
    # The session's Prefect API: what is stored does not depend on who started it.
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PREFECT_API_URL": prefect_api_url,
    }
    done = subprocess.run(
        [_CLI, "run", "--like", "earlier-1", "--output", str(output), "--run-id", "again-1"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = _stored(output, "earlier-1"), _stored(output, "again-1")
    assert {k: v for k, v in after.items() if before[k] != v} == {"run_id": "again-1"}
    rows = ResultStore(output).run_rows("again-1")
    assert rows[-1]["status"] == "completed"
    assert rows[-1]["experiment_hash"] == earlier.experiment_hash()
