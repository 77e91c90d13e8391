"""Every unit's story, read a chunk of cases and reps at a time from three tables
sorted and merged (``all_stories``), is the story ``show`` reads for that unit alone,
and the units page writes its story scripts as it makes them, the same files as a
page held in memory."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import pytest

from critiquebench.analysis import load_stories, units_page, write_units_page
from critiquebench.analysis.render import _transcript_view
from critiquebench.analysis.render._transcript_view import all_stories
from critiquebench.analysis.render._units_page import (
    STORIES_INDEX,
    UNITS_FOLDER,
    write_units_stories,
)
from critiquebench.pipeline import SIDE_TABLES, ResultStore, Unit
from critiquebench.pipeline._store import write_table
from tests.unit.analysis.synthetic_run import FakeUnit, _unit_rows, write_run

# Text that sorts differently by code point than by a locale or by UTF-16 units, so a
# merge whose order disagreed with DuckDB's would drop or misplace some unit's rows.
CASES = ("a", "B", "b", "ä", "z", "Ω", "\U0001f600", "a0", "a\u00ff", "é1")


def _transcript(run_id: str, unit: FakeUnit, entry: int, iteration: int) -> dict[str, object]:
    values: dict[str, object] = {
        "run_id": run_id, "case_id": unit.case_id, "arm": unit.arm, "rep": unit.rep,
        "entry": entry, "kind": "call", "call_index": entry, "iteration": iteration,
        "role": "actor" if iteration == 0 else "fixer", "model": "fake", "cached": False,
        "messages": json.dumps([{"role": "user", "content": f"ask {unit.case_id} {entry}"}]),
        "reply": f"reply {unit.case_id} {unit.arm} {unit.rep} {entry}", "parsed": None,
        "error": None, "chars": 1, "truncated": False,
    }  # fmt: skip
    return {column.name: values.get(column.name) for column in SIDE_TABLES["transcripts"]}


def _write(output: Path, run_id: str) -> list[FakeUnit]:
    """Units of CASES x A, B x 2 reps, written as batches in an order unlike the sort's,
    with transcripts, plus rows of a unit that has no cases row (never a story); the
    units with a story."""
    units = [
        FakeUnit(case, arm, rep, defects=(2, 1, 0)[: 1 + (rep + len(case)) % 3])
        for rep in (1, 0)
        for case in reversed(CASES)
        for arm in "BA"
    ]
    write_run(output, run_id, [], reps=2, arms="A,B", planned=len(units))  # the runs row
    store = ResultStore(output)
    batches = [units[index : index + 3] for index in range(0, len(units), 3)]
    for number, batch in enumerate(batches):
        written = []
        for unit in batch:
            rows = _unit_rows(run_id, unit)
            talk = [_transcript(run_id, unit, i, i) for i in range(len(unit.defects))]
            written.append(
                (
                    Unit(unit.case_id, unit.arm, unit.rep),
                    dataclasses.replace(rows, transcripts=talk),
                )
            )
        store.write_units(run_id, f"20260101T000000000000Z-t{number:03d}", written)
    # A batch whose cases file lacks one of its units: that unit's attempts and
    # transcripts count as rows of the run, but with no cases row they are no story.
    orphan, kept = FakeUnit("b", "A", 3), FakeUnit("Z", "A", 3)
    written = [
        (Unit(unit.case_id, unit.arm, unit.rep), dataclasses.replace(
            _unit_rows(run_id, unit), transcripts=[_transcript(run_id, unit, 0, 0)]))
        for unit in (orphan, kept)
    ]  # fmt: skip
    name = store.write_units(run_id, "20260101T000000000000Z-orphan", written)
    write_table(store.table_dir(run_id, "cases") / name, "cases", [written[1][1].case])
    return [*units, kept]


def test_streamed_stories_are_the_stories_of_each_unit_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_transcript_view, "STORY_CHUNK_UNITS", 3)  # many chunks, cut anywhere
    units = _write(tmp_path, "r")
    groups = list(all_stories(tmp_path, "r"))
    keys = [(stories[0].case_id, stories[0].rep) for stories in groups]
    assert keys == sorted({(unit.case_id, unit.rep) for unit in units})
    for stories in groups:
        alone = load_stories(tmp_path, "r", stories[0].case_id, rep=stories[0].rep)
        assert stories == alone
        assert [story.arm for story in stories] == sorted(story.arm for story in stories)
    rounds = {(s.case_id, s.arm, s.rep): s.rounds for group in groups for s in group}
    # Each round has its own call, whatever batch and fetch the rows came in.
    for unit in units:
        story_rounds = rounds[(unit.case_id, unit.arm, unit.rep)]
        assert len(story_rounds) == len(unit.defects)
        for index, round_ in enumerate(story_rounds):
            reply = f"reply {unit.case_id} {unit.arm} {unit.rep} {index}"
            assert [call.reply for call in round_.calls] == [reply]


def test_stories_written_as_made_are_the_files_of_a_page_held_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from critiquebench.analysis.render import _units_page

    monkeypatch.setattr(_units_page, "STORIES_PER_FILE", 3)
    _write(tmp_path, "r")
    held = units_page(tmp_path, "r")
    folder = write_units_page(tmp_path, "r", held)
    expected = {path.name: path.read_text() for path in folder.glob("*.js")}
    assert sorted(expected) == sorted(held.scripts) and len(expected) > 2
    (folder / "99.js").write_text("stale")  # a script of an earlier, larger render
    (folder / "0.js").unlink()
    streamed = write_units_stories(tmp_path, "r")
    assert streamed.written and not streamed.scripts
    assert streamed.rows == held.rows and streamed.rows_json() == held.rows_json()
    assert {path.name: path.read_text() for path in folder.glob("*.js")} == expected
    # Writing a page written already leaves its scripts as they are.
    assert write_units_page(tmp_path, "r", streamed) == tmp_path / "r" / UNITS_FOLDER
    assert sorted(path.name for path in folder.glob("*.js")) == sorted(expected)


def test_stories_of_unchanged_results_are_rendered_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from critiquebench.analysis.render import _units_page

    monkeypatch.setattr(_units_page, "STORIES_PER_FILE", 3)
    _write(tmp_path, "r")
    first = write_units_stories(tmp_path, "r")
    folder = tmp_path / "r" / UNITS_FOLDER
    scripts = {path.name: path.read_text() for path in folder.glob("*.js")}
    rendered = []
    render = _units_page._story_files

    def counted(*args: object) -> object:
        rendered.append(1)
        return render(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_units_page, "_story_files", counted)
    again = write_units_stories(tmp_path, "r")
    assert not rendered, "the same results rendered twice"
    assert again.rows == first.rows and again.written
    assert {path.name: path.read_text() for path in folder.glob("*.js")} == scripts

    # A script gone: rendered again, the same files.
    (folder / "0.js").unlink()
    assert write_units_stories(tmp_path, "r").rows == first.rows and len(rendered) == 1
    assert {path.name: path.read_text() for path in folder.glob("*.js")} == scripts

    # A unit run again (a rerun after an infrastructure error): its row is new.
    store = ResultStore(tmp_path)
    rerun = FakeUnit("z", "A", 0, defects=(0,))
    rows = _unit_rows("r", rerun)
    later = dataclasses.replace(
        rows, case={**rows.case, "finished_at": rows.case["finished_at"] + dt.timedelta(1)}
    )
    store.write_units("r", "20260102T000000000000Z-again", [(Unit("z", "A", 0), later)])
    write_units_stories(tmp_path, "r")
    assert len(rendered) == 2

    # A new unit: rendered again, its row there.
    new = FakeUnit("new", "A", 0, defects=(1, 0))
    store.write_units(
        "r", "20260103T000000000000Z-new", [(Unit("new", "A", 0), _unit_rows("r", new))]
    )
    page = write_units_stories(tmp_path, "r")
    assert len(rendered) == 3 and ("new", "A", 0) in {(r.case_id, r.arm, r.rep) for r in page.rows}
    assert write_units_stories(tmp_path, "r").rows == page.rows and len(rendered) == 3


def test_a_damaged_story_index_is_rendered_again(tmp_path: Path) -> None:
    _write(tmp_path, "r")
    first = write_units_stories(tmp_path, "r")
    index = tmp_path / "r" / UNITS_FOLDER / STORIES_INDEX
    recorded = json.loads(index.read_text())
    for damaged in ("{not json", json.dumps({"key": recorded["key"]}), "[]"):
        index.write_text(damaged)
        assert write_units_stories(tmp_path, "r").rows == first.rows
        assert json.loads(index.read_text()) == recorded
