"""Paired comparison of two runs: planted differences, refusals, flipped cases."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pytest
from typer.testing import CliRunner

from critiquebench.analysis import PairingRefused, comparison_json, paired_comparison
from critiquebench.cli import app
from tests.integration.replay_run import build_replay_run


def _tables(
    units: dict[str, list[tuple[str, str, int, int]]], suites: dict[str, tuple[str, str]]
) -> duckdb.DuckDBPyConnection:
    """runs/cases/calls of runs whose units are (case, arm, rep, defects)."""
    db = duckdb.connect()
    db.execute(
        "CREATE TABLE runs (run_id VARCHAR, suite VARCHAR, content_json VARCHAR, "
        "invocation_started_at TIMESTAMP)"
    )
    db.execute(
        "CREATE TABLE cases (run_id VARCHAR, case_id VARCHAR, arm VARCHAR, rep INTEGER, "
        "defects_total_final INTEGER, defects_final INTEGER, passed BOOLEAN, latency_s DOUBLE, "
        "tokens_in BIGINT, tokens_out BIGINT, calls INTEGER, error VARCHAR)"
    )
    db.execute(
        "CREATE TABLE calls (run_id VARCHAR, case_id VARCHAR, arm VARCHAR, rep INTEGER, "
        "model VARCHAR, experiment_tokens_in BIGINT, experiment_tokens_out BIGINT)"
    )
    for run, (suite, digest) in suites.items():
        content = json.dumps({"suite": {"path": suite, "sha256": digest}})
        db.execute("INSERT INTO runs VALUES (?, ?, ?, now())", [run, suite, content])
        for case, arm, rep, defects in units[run]:
            row = [run, case, arm, rep, defects, defects, defects == 0, 1.0 + defects, 10, 5, 1]
            db.execute("INSERT INTO cases VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)", row)
            db.execute("INSERT INTO calls VALUES (?, ?, ?, ?, 'm', 10, 5)", [run, case, arm, rep])
    return db


def _planted(shift: float, seed: int) -> duckdb.DuckDBPyConnection:
    rng = np.random.default_rng(seed)
    a, b = [], []
    for index in range(40):
        difficulty = rng.uniform(1.5, 4.0)  # cases differ: the pairing takes that out
        for rep in range(2):
            case = f"c{index:02d}"
            a.append((case, "B", rep, int(rng.poisson(difficulty))))
            b.append((case, "B", rep, int(rng.poisson(difficulty - shift))))
    return _tables({"a": a, "b": b}, {"a": ("basic", "x"), "b": ("basic", "x")})


def test_a_planted_difference_is_covered_by_the_interval_and_zero_is_not() -> None:
    result = paired_comparison(_planted(1.0, seed=7), "a", "b", resamples=4000)
    (arm,) = result.arms
    estimate = arm.defects_difference
    assert estimate.low is not None and estimate.high is not None
    assert estimate.low <= -1.0 <= estimate.high
    assert estimate.high < 0
    assert arm.pairs == 80 and arm.cases == 40
    assert arm.defects[1] < arm.defects[0]
    plain = json.loads(json.dumps(comparison_json(result)))["arms"][0]
    assert plain["defects_difference"]["low"] == estimate.low and plain["pairs"] == 80


def test_no_planted_difference_gives_an_interval_around_zero() -> None:
    result = paired_comparison(_planted(0.0, seed=11), "a", "b", resamples=4000)
    estimate = result.arms[0].defects_difference
    assert estimate.low is not None and estimate.high is not None
    assert estimate.low <= 0.0 <= estimate.high


def test_flipped_cases_are_listed_with_their_direction() -> None:
    a = [("c1", "B", 0, 0), ("c2", "B", 0, 2), ("c3", "B", 0, 0)]
    b = [("c1", "B", 0, 1), ("c2", "B", 0, 0), ("c3", "B", 0, 0)]
    db = _tables({"a": a, "b": b}, {"a": ("s", "x"), "b": ("s", "x")})
    (arm,) = paired_comparison(db, "a", "b", resamples=200).arms
    assert dict(arm.flipped) == {"c1": "a: passed -> b: failed", "c2": "a: failed -> b: passed"}
    assert (arm.mcnemar.b, arm.mcnemar.c) == (1, 1)


def test_runs_of_other_suites_or_case_sets_are_refused_with_the_reason() -> None:
    a = [("c1", "B", 0, 0), ("c2", "B", 0, 1)]
    b = [("c1", "B", 0, 0)]
    other_suite = _tables({"a": a, "b": a}, {"a": ("basic", "x"), "b": ("json", "y")})
    with pytest.raises(PairingRefused, match="suites differ: a ran 'basic', b ran 'json'"):
        paired_comparison(other_suite, "a", "b", resamples=50)
    with pytest.raises(PairingRefused, match="suites differ"):
        paired_comparison(other_suite, "a", "b", resamples=50, intersect=True)
    changed = _tables({"a": a, "b": a}, {"a": ("basic", "x" * 16), "b": ("basic", "y" * 16)})
    with pytest.raises(PairingRefused, match="changed between them"):
        paired_comparison(changed, "a", "b", resamples=50)
    fewer = _tables({"a": a, "b": b}, {"a": ("basic", "x"), "b": ("basic", "x")})
    with pytest.raises(PairingRefused, match=r"case sets differ: only a has c2.*--intersect"):
        paired_comparison(fewer, "a", "b", resamples=50)
    common = paired_comparison(fewer, "a", "b", resamples=50, intersect=True)
    assert common.arms[0].pairs == 1 and common.intersected is not None


def test_compare_prints_the_paired_rows_and_refuses_other_case_sets(tmp_path: Path) -> None:
    output = tmp_path / "runs"
    build_replay_run(output, "p-3", limit=3, reps=1)
    build_replay_run(output, "p-2", limit=2, reps=1)
    runner = CliRunner()
    refused = runner.invoke(app, ["compare", "p-3", "p-2", "--output", str(output)])
    assert refused.exit_code != 0
    assert "case sets differ: only p-3 has basic/003" in refused.output
    assert "--intersect" in refused.output
    paired = runner.invoke(
        app, ["compare", "p-3", "p-2", "--output", str(output), "--intersect"],
        env={"COLUMNS": "200"},
    )  # fmt: skip
    assert paired.exit_code == 0, paired.output
    rows = ("mean defects", "pass rate", "McNemar over cases", "tokens per unit",
            "calls per unit", "cost $ (experiment)", "p50 latency s", "p90 latency s")  # fmt: skip
    assert all(row in paired.output for row in rows), paired.output
    # the same replayed answers: nothing differs and nothing flipped
    assert "+0.00" in paired.output and "arm A: no case flipped" in paired.output
    assert "--intersect: paired the common units only" in paired.output
