"""Files that grow with batches, not units: a batch writes one file per table, a run's
end compacts them into one part per table, and every reader sees the same rows in the
layout of earlier runs (one file per unit), with batches, and compacted."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from critiquebench.analysis import connect
from critiquebench.pipeline import (
    UNIT_TABLES,
    BatchWriter,
    ResultStore,
    RunConfig,
    Unit,
    compact_run,
    live_files,
    parquet_files,
)
from critiquebench.pipeline import _compaction as compaction
from critiquebench.pipeline._store import write_table
from tests.unit.analysis.synthetic_run import Call, FakeUnit, rows_of, write_run

RUN = "r"
CONTENTS = {
    "cases": "SELECT * EXCLUDE (finished_at) FROM cases ORDER BY case_id, arm, rep",
    "attempts": "SELECT * FROM attempts ORDER BY case_id, arm, rep, iteration",
    "calls": "SELECT * FROM calls ORDER BY case_id, arm, rep, call_index",
}


def _units(count: int) -> list[FakeUnit]:
    arms = itertools.cycle(("A", "B"))
    return [
        FakeUnit(
            f"c/{n // 2:03d}", next(arms), defects=(n % 3, 0), calls=(Call(0, 10, 5), Call(1, 7, 3))
        )
        for n in range(count)
    ]


def _contents(output: Path) -> dict[str, list[tuple[object, ...]]]:
    db = connect(output, [RUN])
    return {table: db.execute(query).fetchall() for table, query in CONTENTS.items()}


def _write_batches(output: Path, units: list[FakeUnit], size: int) -> None:
    store = ResultStore(output)
    for start in range(0, len(units), size):
        batch = [
            (Unit(u.case_id, u.arm, u.rep), rows_of(RUN, u)) for u in units[start : start + size]
        ]
        store.write_units(RUN, f"20260102T030405000000Z-b{start:05d}", batch)


def _file_counts(output: Path) -> dict[str, int]:
    return {table: len(parquet_files(output / RUN / table)) for table in UNIT_TABLES}


@pytest.fixture()
def per_unit(tmp_path: Path) -> Path:
    """A run of 20 units in the layout of earlier versions: one file per unit."""
    output = tmp_path / "per-unit"
    write_run(output, RUN, _units(20))
    for table in UNIT_TABLES:  # write_unit now writes a batch of one: name it by its unit
        for path in parquet_files(output / RUN / table):
            path.unlink()
    store = ResultStore(output)
    for unit in _units(20):
        rows = rows_of(RUN, unit)
        key = Unit(unit.case_id, unit.arm, unit.rep).key
        for table in ("attempts", "calls", "transcripts"):
            write_table(store.table_dir(RUN, table) / f"{key}.parquet", table, getattr(rows, table))
        write_table(store.table_dir(RUN, "cases") / f"{key}.parquet", "cases", [rows.case])
    return output


def test_batches_and_their_compaction_read_as_the_layout_of_earlier_runs(
    per_unit: Path, tmp_path: Path
) -> None:
    expected = _contents(per_unit)
    assert len(expected["cases"]) == 20 and expected["attempts"] and expected["calls"]
    assert _file_counts(per_unit)["cases"] == 20

    batched = tmp_path / "batched"
    write_run(batched, RUN, [])
    _write_batches(batched, _units(20), size=8)
    assert _file_counts(batched) == dict.fromkeys(UNIT_TABLES, 3)  # 8 + 8 + 4 units
    assert _contents(batched) == expected
    store = ResultStore(batched)
    assert store.unit_errors(RUN) == ResultStore(per_unit).unit_errors(RUN)

    done = compact_run(batched, RUN)
    assert done is not None and (done.units, done.replaced) == (20, 3)
    assert _file_counts(batched) == dict.fromkeys(UNIT_TABLES, 1)
    assert _contents(batched) == expected
    assert store.unit_errors(RUN) == ResultStore(per_unit).unit_errors(RUN)
    assert compact_run(batched, RUN) is None  # compact already: nothing to do

    # An old run resumed: its units' own files stay as they are, beside the new part.
    _write_batches(per_unit, [FakeUnit("c/100", "A")], size=1)
    assert compact_run(per_unit, RUN) is not None
    assert _file_counts(per_unit)["cases"] == 21
    assert len(_contents(per_unit)["cases"]) == 21


def test_batches_gathered_in_blocks_compact_to_the_same_rows(
    per_unit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batch tables are copied into blocks as they are read (``_FILES_PER_BLOCK``) and
    row groups written past ``_ROW_GROUP_BYTES``: three batches a block, a few rows a
    row group, and the part still holds every row once, a unit run twice its last rows."""
    monkeypatch.setattr(compaction, "_FILES_PER_BLOCK", 3)
    monkeypatch.setattr(compaction, "_ROW_GROUP_BYTES", 4096)
    expected = _contents(per_unit)
    batched = tmp_path / "batched"
    write_run(batched, RUN, [])
    units = _units(20)
    _write_batches(batched, units, size=2)  # ten batches: three blocks and one left over
    again = FakeUnit(units[1].case_id, units[1].arm, defects=(5,))  # a cluster ran it again
    ResultStore(batched).write_units(
        RUN,
        "20260102T030405000000Z-b99999",
        [(Unit(again.case_id, again.arm, 0), rows_of(RUN, again))],
    )

    done = compact_run(batched, RUN)

    assert done is not None and (done.units, done.replaced) == (20, 11)
    found = _contents(batched)
    rerun = (again.case_id, again.arm)
    for table, rows in expected.items():  # every other unit's rows, in full, once
        assert [r for r in found[table] if r[1:3] != rerun] == [r for r in rows if r[1:3] != rerun]
    db = connect(batched, [RUN])
    assert db.execute(
        "SELECT defects_final FROM cases WHERE case_id = ? AND arm = ?", list(rerun)
    ).fetchall() == [(5,)]


def test_a_unit_written_twice_is_kept_once_and_the_other_rows_set_aside(
    tmp_path: Path,
) -> None:
    write_run(tmp_path, RUN, [])
    units = _units(4)
    _write_batches(tmp_path, units, size=4)
    store = ResultStore(tmp_path)
    again = FakeUnit(units[1].case_id, units[1].arm, defects=(5,))  # a cluster ran it again
    store.write_units(
        RUN,
        "20260102T030405000000Z-b99999",
        [(Unit(again.case_id, again.arm, 0), rows_of(RUN, again))],
    )
    compact_run(tmp_path, RUN)
    db = connect(tmp_path, [RUN])
    assert db.execute(
        "SELECT count(*), count(DISTINCT (case_id, arm, rep)) FROM cases"
    ).fetchone() == (4, 4)
    assert db.execute(
        "SELECT defects_final FROM cases WHERE case_id = ? AND arm = ?", [again.case_id, again.arm]
    ).fetchall() == [(5,)]
    aside = list((tmp_path / RUN / "superseded").glob("*/*/cases.parquet"))
    assert len(aside) == 1


def test_a_compaction_cut_short_changes_nothing_a_reader_sees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_run(tmp_path, RUN, [])
    _write_batches(tmp_path, _units(12), size=4)
    expected = _contents(tmp_path)
    publish = compaction._PartWriter.publish

    def crash_at_cases(self: compaction._PartWriter) -> None:
        if "cases" in str(self.path):
            raise KeyboardInterrupt  # killed before the part was put in effect
        publish(self)

    monkeypatch.setattr(compaction._PartWriter, "publish", crash_at_cases)
    with pytest.raises(KeyboardInterrupt):
        compact_run(tmp_path, RUN)
    monkeypatch.undo()
    assert _contents(tmp_path) == expected  # the parts of other tables are not counted
    assert compact_run(tmp_path, RUN) is not None
    assert _contents(tmp_path) == expected


def test_files_a_part_replaced_do_not_count_while_they_are_still_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_run(tmp_path, RUN, [])
    _write_batches(tmp_path, _units(12), size=4)
    expected = _contents(tmp_path)
    monkeypatch.setattr(compaction, "delete_file", lambda path: None)  # killed before deleting
    compact_run(tmp_path, RUN)
    monkeypatch.undo()
    assert _file_counts(tmp_path)["cases"] == 4  # three batches and the part
    assert _contents(tmp_path) == expected
    live = [path.name for path in live_files(tmp_path / RUN)["cases"]]
    assert len(live) == 1 and live[0].endswith("-part-n12.parquet")
    compact_run(tmp_path, RUN)  # the next compaction deletes them
    assert _file_counts(tmp_path) == dict.fromkeys(UNIT_TABLES, 1)


def test_a_batch_writes_when_it_ends_or_once_a_unit_waited_long_enough(tmp_path: Path) -> None:
    config = RunConfig(suite="basic", model="sim", output=tmp_path, run_id=RUN)
    now = [0.0]
    units = _units(5)
    with BatchWriter(config, "20260102T030405000000Z-b00000", 10.0, lambda: now[0]) as batch:
        for index, unit in enumerate(units):
            batch.add(Unit(unit.case_id, unit.arm, unit.rep), rows_of(RUN, unit))
            now[0] += 4.0 if index < 3 else 0.0  # the fourth finds the first waited 12 s
        assert [p.name for p in parquet_files(tmp_path / RUN / "cases")] == [
            "20260102T030405000000Z-b00000-c000-n4.parquet"
        ]
    assert [p.name for p in parquet_files(tmp_path / RUN / "cases")][1] == (
        "20260102T030405000000Z-b00000-c001-n1.parquet"
    )
    assert len(ResultStore(tmp_path).unit_errors(RUN)) == 5
