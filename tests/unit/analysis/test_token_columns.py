"""The tokens of ``calls`` are named for what they hold (schema v9): paid in this run,
or the experiment's; a run written before keeps answering under both spellings."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from critiquebench.analysis import connect, views_sql
from critiquebench.pipeline import LEGACY_COLUMNS, SCHEMA_VERSION, arrow_schema
from tests.unit.analysis.synthetic_run import Call, FakeUnit, write_run

OLD_NAMES = {new: old for old, new in LEGACY_COLUMNS["calls"].items()}


def _as_v8(path: Path) -> None:
    """Rewrite a calls file as schema v8 wrote it: the tokens under their old names."""
    table = pq.read_table(path)
    renamed = table.rename_columns([OLD_NAMES.get(name, name) for name in table.column_names])
    pq.write_table(renamed.replace_schema_metadata({b"schema_version": b"8"}), path)


def _write(tmp_path: Path, run_id: str) -> None:
    # One draft paid for (100 in, 40 out), one cache hit of the same (0 paid, 100/40 spent).
    calls = (Call(0, 100, 40), Call(0, 100, 40, cached=True))
    unit = FakeUnit("c1", "A", 0, (0,), calls=calls, roles=("actor", "actor"))
    write_run(tmp_path, run_id, [unit])


TOTALS = ("SELECT sum(paid_tokens_in), sum(paid_tokens_out), sum(experiment_tokens_in), "
          "sum(experiment_tokens_out), sum(tokens_in), sum(original_tokens_out) FROM calls "
          "WHERE run_id = ?")  # fmt: skip


def test_paid_and_experiment_tokens_read_the_same_from_old_and_new_runs(
    tmp_path: Path,
) -> None:
    _write(tmp_path, "new")
    _write(tmp_path, "old")
    for path in (tmp_path / "old" / "calls").glob("*.parquet"):
        _as_v8(path)
    new_file = next((tmp_path / "new" / "calls").glob("*.parquet"))
    assert {"paid_tokens_in", "experiment_tokens_in"} <= set(pq.read_schema(new_file).names)
    assert "tokens_in" not in pq.read_schema(new_file).names
    assert pq.read_schema(new_file).metadata[b"schema_version"] == str(SCHEMA_VERSION).encode()

    expected = (100, 40, 200, 80, 100, 80)  # the old names: aliases of the new
    db = connect(tmp_path)  # both runs in one view: files of both schemas united
    for run in ("new", "old"):
        assert db.execute(TOTALS, [run]).fetchone() == expected
    for run in ("new", "old"):  # each alone, as a report opens it
        assert connect(tmp_path, [run]).execute(TOTALS, [run]).fetchone() == expected
        snapshot = connect(tmp_path, [run], snapshot=True)
        assert snapshot.execute(TOTALS, [run]).fetchone() == expected

    # The duckdb CLI's views (critiquebench sql --views) answer the same.
    cli = duckdb.connect()
    for statement in views_sql(tmp_path).splitlines():
        if statement.startswith("CREATE"):
            cli.execute(statement)
    for run in ("new", "old"):
        assert cli.execute(TOTALS, [run]).fetchone() == expected


def test_the_schema_documents_which_tokens_each_column_holds() -> None:
    docs = {field.name: field.metadata[b"doc"].decode() for field in arrow_schema("calls")}
    assert (
        "paid in this run" in docs["paid_tokens_in"]
        and "0 for a cache hit" in docs["paid_tokens_in"]
    )
    assert "without the cache" in docs["experiment_tokens_in"]
    assert not {"tokens_in", "tokens_out", "original_tokens_in"} & set(docs)
    assert pa.int64() == arrow_schema("calls").field("experiment_tokens_out").type
