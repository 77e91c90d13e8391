"""The real embedded model (SmolLM2-135M via llama.cpp) through the real flow."""

from __future__ import annotations

from pathlib import Path

import pytest

from critiquebench.analysis import connect
from critiquebench.pipeline import RunConfig
from tests.integration.lazy_flow import run_ab_matrix

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_harness")]


def test_local_model_smoke_two_cases_arms_a_and_b(tmp_path: Path) -> None:
    output = tmp_path / "runs"
    config = RunConfig(
        suite="basic",
        limit=2,
        model="local",
        output=output,
        run_id="local-1",
        cache_dir=tmp_path / "cache",
    )
    run_ab_matrix(config)
    db = connect(output)
    rows = db.execute(
        "SELECT arm, count(*), min(tokens_in), min(tokens_out), min(calls) FROM cases "
        "GROUP BY arm ORDER BY arm"
    ).fetchall()
    assert [row[:2] for row in rows] == [("A", 2), ("B", 2)]
    assert all(
        tokens_in > 0 and tokens_out > 0 and calls >= 1 for *_, tokens_in, tokens_out, calls in rows
    )
    models = db.execute("SELECT DISTINCT model FROM calls").fetchall()
    assert models == [("local:SmolLM2-135M-Instruct.Q4_1",)]
