"""The ``transcripts`` side table: every call's messages and reply, the verdicts read
from critics, the feedback each attempt was shown, stored per unit with the run."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from critiquebench.analysis import connect
from critiquebench.cli import app
from critiquebench.pipeline import (
    SCHEMA_VERSION,
    TRANSCRIPT_CHAR_LIMIT,
    UNIT_TABLES,
    RunConfig,
    Unit,
    finish_run,
    run_unit,
    start_run,
)
from tests.helpers import unit_rows
from tests.integration.replay_run import build_replay_run

runner = CliRunner()


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("transcripts") / "runs"
    build_replay_run(folder, "tr-1", limit=3, reps=1)
    return folder


def _rows(output: Path, run_id: str, where: str) -> list[dict[str, object]]:
    db = connect(output, [run_id])
    cursor = db.execute(f"SELECT * FROM transcripts WHERE {where} ORDER BY entry")
    names = [column[0] for column in cursor.description or []]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_a_fixed_unit_keeps_its_prompts_replies_and_the_feedback_between(
    replayed: Path,
) -> None:
    # case 1 of the replay script answers a hollow draft, then the reference solution
    db = connect(replayed, ["tr-1"])
    case_id = db.execute("SELECT min(case_id) FROM cases WHERE loops = 1").fetchone()
    assert case_id is not None
    rows = _rows(replayed, "tr-1", f"arm = 'B' AND case_id = '{case_id[0]}'")
    assert [(r["kind"], r["role"], r["iteration"]) for r in rows] == [
        ("call", "actor", 0),
        ("feedback", "feedback", 0),
        ("call", "fixer", 1),
        ("feedback", "feedback", 1),
    ]
    actor, shown, fixer, last = rows
    assert "return None" in str(actor["reply"])
    asked = json.loads(str(actor["messages"]))
    assert [m["role"] for m in asked] == ["system", "user"]
    feedback = json.loads(str(shown["parsed"]))
    assert feedback and all(item["text"] for item in feedback)
    # the fixer was asked with exactly that feedback in its prompt
    fix_prompt = json.loads(str(fixer["messages"]))[-1]["content"]
    assert all(item["text"].splitlines()[0] in fix_prompt for item in feedback)
    assert json.loads(str(last["parsed"])) == []
    artifacts = db.execute(
        "SELECT artifact FROM attempts WHERE arm = 'B' AND case_id = ? ORDER BY iteration",
        [case_id[0]],
    ).fetchall()
    assert artifacts[1][0] in str(fixer["reply"])


def test_transcripts_are_queried_with_sql_and_compressed(replayed: Path) -> None:
    query = "SELECT arm, count(*) AS n FROM transcripts WHERE kind = 'call' GROUP BY arm"
    result = runner.invoke(app, ["sql", query, "--output", str(replayed)])
    assert result.exit_code == 0, result.output
    assert "2 row(s)" in result.output
    files = sorted((replayed / "tr-1" / "transcripts").glob("*.parquet"))
    assert len(files) == 1  # the run's one part, as the other unit tables
    meta = pq.ParquetFile(files[0]).metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"
    assert pq.read_schema(files[0]).metadata[b"schema_version"] == str(SCHEMA_VERSION).encode()


def test_a_run_from_before_transcripts_reads_as_none(replayed: Path, tmp_path: Path) -> None:
    old = tmp_path / "runs"
    (old / "old-1").mkdir(parents=True)
    for table in ("runs", "cases", "attempts", "calls"):
        target = old / "old-1" / table
        target.mkdir()
        for path in (replayed / "tr-1" / table).glob("*.parquet"):
            target.joinpath(path.name).write_bytes(path.read_bytes())
    db = connect(old, ["old-1"])
    assert db.execute("SELECT count(*) FROM transcripts").fetchone() == (0,)
    assert db.execute("SELECT count(*) FROM cases").fetchone() == (6,)
    result = runner.invoke(
        app, ["sql", "SELECT count(*) AS n FROM transcripts", "--output", str(old)]
    )
    assert result.exit_code == 0, result.output


def test_critic_verdicts_and_cache_hits_are_kept_as_what_the_call_answered(
    tmp_path: Path,
) -> None:
    config = RunConfig.model_validate(
        {
            "suite": "basic", "limit": 2, "reps": 1, "arms": "A,C", "model": "sim:seed=3",
            "output": tmp_path / "runs", "run_id": "tr-2", "cache_dir": tmp_path / "cache",
        }
    )  # fmt: skip
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    finish_run(plan, failed=0)
    db = connect(tmp_path / "runs", ["tr-2"])
    pairs = db.execute(
        "SELECT a.reply, c.reply, c.cached FROM transcripts a JOIN transcripts c "
        "USING (case_id, rep) WHERE a.arm = 'A' AND c.arm = 'C' AND a.role = 'actor' "
        "AND c.role = 'actor'"
    ).fetchall()
    assert len(pairs) == 2
    assert any(cached for *_, cached in pairs)  # the arms shared the first draft
    assert all(first == second and first for first, second, _ in pairs)
    critics = db.execute("SELECT parsed, reply FROM transcripts WHERE role = 'critic'").fetchall()
    assert len(critics) == 2
    for parsed, reply in critics:
        assert reply
        assert json.loads(parsed)["verdict"] in ("pass", "warn", "fail")
    counted = db.execute(
        "SELECT (SELECT count(*) FROM calls), "
        "(SELECT count(*) FROM transcripts WHERE kind = 'call')"
    ).fetchone()
    assert counted is not None and counted[0] == counted[1]


def test_a_long_reply_is_cut_to_the_limit_keeping_head_and_tail() -> None:
    from critiquebench.pipeline._transcripts import cut

    text = "HEAD" + "x" * (3 * TRANSCRIPT_CHAR_LIMIT) + "TAIL"
    kept = cut(text)
    assert len(kept.text) <= TRANSCRIPT_CHAR_LIMIT
    assert kept.text.startswith("HEAD") and kept.text.endswith("TAIL")
    assert kept.truncated and kept.chars == len(text)
    assert f"{len(text) - TRANSCRIPT_CHAR_LIMIT} characters cut" in kept.text
    assert cut("short") == type(kept)("short", 5)


def test_the_views_name_the_side_table(replayed: Path) -> None:
    db = connect(replayed, ["tr-1"])
    columns = {row[0] for row in db.execute("DESCRIBE transcripts").fetchall()}
    assert {"messages", "reply", "parsed", "kind", "entry", "truncated"} <= columns
    with pytest.raises(duckdb.CatalogException):
        connect(replayed, ["tr-1"], snapshot=True).execute("SELECT * FROM transcripts")


def _show(output: Path, *args: str) -> str:
    result = runner.invoke(app, ["show", *args, "--output", str(output)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_show_tells_one_units_story_round_by_round(replayed: Path) -> None:
    db = connect(replayed, ["tr-1"])
    row = db.execute("SELECT min(case_id) FROM cases WHERE loops = 2 AND arm = 'B'").fetchone()
    assert row is not None and row[0]
    printed = _show(replayed, "tr-1", row[0], "--arm", "B")
    # first draft, two fix rounds, then the halt line; each with its checks and diff
    assert "first draft" in printed and "round 1" in printed and "round 2" in printed
    assert printed.count("asked (") == 3 and printed.count("answer (") == 3
    assert "return None" in printed and "return 0" in printed  # the replies themselves
    assert printed.count("checks: ") == 3
    assert "diff to the previous attempt:" in printed
    assert "-    return None" in printed and "+    return 0" in printed
    assert printed.count("feedback shown to the fixer:") == 2  # none after the last round
    assert "halt: visible_clean; passed" in printed


def test_show_without_an_arm_sets_the_arms_side_by_side(replayed: Path) -> None:
    db = connect(replayed, ["tr-1"])
    row = db.execute("SELECT min(case_id) FROM cases WHERE loops = 1 AND arm = 'B'").fetchone()
    assert row is not None
    printed = _show(replayed, "tr-1", row[0])
    header = next(line for line in printed.splitlines() if "arm A" in line)
    assert "arm B" in header  # one column per arm, in one table
    assert "halt: single_draft" in printed and "halt: visible_clean" in printed


def test_show_lists_units_and_names_what_exists_when_asked_for_what_does_not(
    replayed: Path,
) -> None:
    listed = _show(replayed, "tr-1")
    assert "single_draft" in listed and listed.count("basic/") >= 6
    result = runner.invoke(app, ["show", "tr-1", "nope", "--output", str(replayed)])
    assert result.exit_code != 0
    assert "no unit case='nope'" in result.output and "arms: A, B" in result.output


def _unit_rows(run_dir: Path, unit: Unit) -> dict[str, list[dict[str, object]]]:
    return {table: unit_rows(run_dir, unit, table) for table in UNIT_TABLES}


def test_a_transcript_is_written_before_the_cases_row_and_superseded_with_it(
    replayed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from critiquebench.pipeline import ResultStore, UnitRows, _store, compact_run

    store = ResultStore(tmp_path / "runs")
    source = next((replayed / "tr-1" / "cases").glob("*.parquet"))
    row = pq.read_table(source).to_pylist()[0]
    unit = Unit(str(row["case_id"]), str(row["arm"]), int(str(row["rep"])))
    rows = _unit_rows(replayed / "tr-1", unit)
    unit_rows = UnitRows(
        case=rows["cases"][0], attempts=rows["attempts"], calls=rows["calls"],
        transcripts=rows["transcripts"],
    )  # fmt: skip
    written = _store.write_table

    def cases_fail(path: Path, table: str, data: list[dict[str, object]]) -> None:
        if table == "cases":
            raise OSError("disk full")
        written(path, table, data)

    monkeypatch.setattr(_store, "write_table", cases_fail)
    with pytest.raises(OSError):
        store.write_unit("tr-x", unit, unit_rows)
    # the transcript landed, the cases row did not: the unit reads as not written
    assert list((tmp_path / "runs" / "tr-x" / "transcripts").glob("*.parquet"))
    assert store.unit_errors("tr-x") == {}
    monkeypatch.setattr(_store, "write_table", written)
    store.write_unit("tr-x", unit, unit_rows)
    store.write_unit("tr-x", unit, unit_rows)  # a rerun of the unit: the first is kept aside
    compact_run(tmp_path / "runs", "tr-x")
    aside = tmp_path / "runs" / "tr-x" / "superseded" / unit.key
    kept = list(aside.glob("*/transcripts.parquet"))
    assert len(kept) == 1
    assert pq.read_table(kept[0]).num_rows == len(rows["transcripts"]) > 0
