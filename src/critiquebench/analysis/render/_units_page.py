"""report.html's units table and the stories its rows open, from ``show``'s story model.

The page carries one small row per unit; the stories (a case and rep, its arms side by
side) are scripts in ``report_units/`` beside the page, ``STORIES_PER_FILE`` to a file,
the file of a row loaded when the row is clicked. A page opened from ``file://`` may
not ``fetch`` its neighbours, but it may load them as scripts; a 1,000-unit run's page
stays as small as its rows, and its stories take a few files, not one per unit.

A unit's story never changes once its rows have landed, so the scripts are rendered
once per state of the run's results: ``STORIES_INDEX`` records what they were rendered
from (``stories_key``) with the units table's rows, and a report of the same results
reads those instead of rendering every story again. Rendering was most of a large
run's report: ~30 of a 98,400-unit report's 34 CPU-s.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import duckdb
from markupsafe import escape

from critiquebench.analysis.render._transcript_view import (
    UnitStory,
    all_stories,
    ending_line,
    round_blocks,
    round_name,
)
from critiquebench.analysis.views import connect
from critiquebench.pipeline import ResultStore, Root

UNITS_FOLDER = "report_units"
"""The folder beside report.html holding one story script per case and rep."""
STORIES_PER_FILE = 25
"""Stories (cases and reps) in one script: ~10 KB each on HumanEval, so a click loads
a few hundred KB at most, and a 1,000-unit run writes ~20 files."""
STORY_CALLBACK = "critiquebenchStory"
"""The function each story script calls with its group number and its HTML."""
STORIES_INDEX = "index.json"
"""Beside the scripts: their ``stories_key``, their file names and the units table's rows."""


@dataclass(frozen=True, slots=True)
class UnitRow:
    """One row of the units table: a unit and the story group (case and rep) it opens.

    Slotted: the page holds one per unit of the run (a 100,000-unit run's rows)."""

    case_id: str
    arm: str
    rep: int
    halt: str
    passed: bool
    tests_passed: bool
    defects: int | None
    rounds: int
    tokens: int
    group: int
    flipped: bool
    """Its case's pass differs between the arms at this rep (measured units only)."""

    def cells(self) -> list[object]:
        """The row as the page's JSON array (the order the page's script reads)."""
        return [self.case_id, self.arm, self.rep, self.halt, self.passed, self.tests_passed,
                self.defects, self.rounds, self.tokens, self.group, self.flipped]  # fmt: skip


@dataclass(frozen=True)
class UnitsPage:
    """The rows for report.html and the story scripts to write beside it."""

    rows: tuple[UnitRow, ...]
    scripts: dict[str, str]
    """File name under ``UNITS_FOLDER`` -> its text (``story_file``); empty when the
    scripts were written as they were made (``written``)."""
    written: bool = False
    """The scripts are in the run's ``UNITS_FOLDER`` already (``write_units_stories``)."""

    def rows_json(self) -> str:
        """The rows as JSON safe inside a script element ("<" escaped)."""
        text = json.dumps([row.cells() for row in self.rows], separators=(",", ":"))
        return text.replace("<", "\\u003c")


def flipped(stories: Sequence[UnitStory]) -> bool:
    """Whether the measured arms of one case and rep disagree on pass."""
    return len({story.passed for story in stories if story.error is None}) > 1


def _blocks_html(story: UnitStory, index: int) -> str:
    if index >= len(story.rounds):
        return ""
    parts = []
    for block in round_blocks(story.rounds[index]):
        tag = "p" if block.heading else "pre"
        parts.append(f'<{tag} class="{block.part}">{escape(block.text)}</{tag}>')
    return "".join(parts)


def story_html(stories: Sequence[UnitStory]) -> str:
    """The arms of one case and rep side by side, aligned by round, as ``show`` prints
    them: every round's prompt excerpt, answers, checks, critic, diff and feedback."""
    first = stories[0]
    head = "".join(f'<th data-arm="{escape(s.arm)}">arm {escape(s.arm)}</th>' for s in stories)
    rows = [f"<tr><th>round</th>{head}</tr>"]
    for index in range(max(len(story.rounds) for story in stories)):
        named = next(s.rounds[index] for s in stories if index < len(s.rounds))
        cells = "".join(
            f'<td data-arm="{escape(s.arm)}">{_blocks_html(s, index)}</td>' for s in stories
        )
        rows.append(f"<tr><th>{escape(round_name(named))}</th>{cells}</tr>")
    endings = "".join(
        f'<td data-arm="{escape(s.arm)}" class="halt">{escape(ending_line(s))}</td>'
        for s in stories
    )
    rows.append(f"<tr><th>halt</th>{endings}</tr>")
    title = f"{first.case_id}  rep {first.rep}"
    return f'<h3>{escape(title)}</h3><table class="story">{"".join(rows)}</table>'


def story_file(group: int) -> str:
    """The script under ``UNITS_FOLDER`` holding story ``group`` (as the page computes it)."""
    return f"{group // STORIES_PER_FILE}.js"


def _script(group: int, html: str) -> str:
    # ensure_ascii and the escaped "<": the text is inert whatever the model wrote.
    payload = json.dumps(html).replace("<", "\\u003c")
    return f"{STORY_CALLBACK}({group}, {payload});\n"


def _story_files(
    output: Root, run_id: str, tables: duckdb.DuckDBPyConnection | None
) -> Iterator[tuple[list[UnitRow], str, str]]:
    """The units table of ``run_id`` one story script at a time: the rows whose stories
    the script holds, its file name and its text (``STORIES_PER_FILE`` groups)."""
    rows: list[UnitRow] = []
    parts: list[str] = []
    name = story_file(0)
    for group, stories in enumerate(all_stories(output, run_id, tables)):
        if story_file(group) != name:
            yield rows, name, "".join(parts)
            rows, parts, name = [], [], story_file(group)
        changed = flipped(stories)
        rows.extend(
            UnitRow(
                case_id=story.case_id,
                arm=story.arm,
                rep=story.rep,
                halt=story.halt,
                passed=story.passed,
                tests_passed=story.tests_passed,
                defects=story.defects_final,
                rounds=story.loops,
                tokens=story.tokens,
                group=group,
                flipped=changed,
            )
            for story in stories
        )
        parts.append(_script(group, story_html(stories)))
    if parts:
        yield rows, name, "".join(parts)


def units_page(
    output: Root, run_id: str, tables: duckdb.DuckDBPyConnection | None = None
) -> UnitsPage:
    """The units table of ``run_id`` and a story script per case and rep, held in memory
    (``write_units_stories`` writes the scripts as it goes instead); ``tables``: the
    run's tables already open, as for ``all_stories``."""
    rows: list[UnitRow] = []
    scripts: dict[str, str] = {}
    for file_rows, name, text in _story_files(output, run_id, tables):
        rows.extend(file_rows)
        scripts[name] = text
    return UnitsPage(tuple(rows), scripts)


def write_units_stories(
    output: Root, run_id: str, tables: duckdb.DuckDBPyConnection | None = None
) -> UnitsPage:
    """The units table of ``run_id``, its story scripts written into the run's
    ``UNITS_FOLDER`` one by one as they are made (see ``write_units_page``): what the
    page keeps is its rows, a few dozen bytes a unit, not its stories (~10 KB a case
    and rep, which a report of a 10,000-unit run had held all at once).

    When the folder holds the scripts of the same results already (its ``STORIES_INDEX``
    has this ``stories_key``), they are kept and only the rows are read back."""
    if tables is None:
        with closing(connect(output, [run_id], snapshot=True)) as own:
            return write_units_stories(output, run_id, own)
    store = ResultStore(output)
    folder = output / run_id / UNITS_FOLDER
    key = stories_key(tables, run_id)
    kept = _kept_stories(folder, key)
    if kept is not None:
        return kept
    # Gone before any script changes: an index outliving a render cut short would
    # vouch for scripts that no longer match it.
    (folder / STORIES_INDEX).unlink(missing_ok=True)
    rows: list[UnitRow] = []
    names: set[str] = set()
    for file_rows, name, text in _story_files(output, run_id, tables):
        rows.extend(file_rows)
        names.add(name)
        _write_script(store, run_id, name, text)
    _remove_stale(folder, names)
    index = {"key": key, "scripts": sorted(names), "rows": [row.cells() for row in rows]}
    store.write_text(run_id, f"{UNITS_FOLDER}/{STORIES_INDEX}", json.dumps(index))
    return UnitsPage(tuple(rows), {}, written=True)


def stories_key(tables: duckdb.DuckDBPyConnection, run_id: str) -> str:
    """What the stories of ``run_id`` in ``tables`` are rendered from: every execution
    of its units (a unit's ``finished_at`` is new when it runs again, and its rounds,
    checks and transcript landed with that row) and the code that renders them."""
    [(count, total)] = tables.sql(
        "SELECT count(*), sum(hash(case_id, arm, rep, finished_at)::HUGEINT)::VARCHAR "
        "FROM cases WHERE run_id = $run_id",
        params={"run_id": run_id},
    ).fetchall()
    digest = hashlib.sha256(f"{run_id}\0{count}\0{total}".encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()


def _kept_stories(folder: Root, key: str) -> UnitsPage | None:
    """The units table recorded beside scripts rendered from ``key``, if all are there."""
    try:
        index = json.loads((folder / STORIES_INDEX).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    if not isinstance(index, dict) or index.get("key") != key:
        return None
    try:  # the key matched, so this version wrote it; a damaged file is rendered again
        if not set(index["scripts"]) <= {path.name for path in folder.glob("*.js")}:
            return None
        return UnitsPage(tuple(UnitRow(*cells) for cells in index["rows"]), {}, written=True)
    except (KeyError, TypeError):
        return None


def _write_script(store: ResultStore, run_id: str, name: str, text: str) -> None:
    # A script left as it was keeps its time stamp (and a browser's cache).
    path = store.run_dir(run_id) / UNITS_FOLDER / name
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        store.write_text(run_id, f"{UNITS_FOLDER}/{name}", text)


def _remove_stale(folder: Root, keep: set[str]) -> None:
    """Remove the scripts of an earlier render that this one did not write."""
    if not folder.is_dir():
        return
    for stale in folder.glob("*.js"):
        if stale.name not in keep:
            stale.unlink()


def write_units_page(output: Root, run_id: str, page: UnitsPage) -> Root:
    """Write the story scripts of ``page`` into the run's ``UNITS_FOLDER``, removing any
    left from an earlier render, and return the folder (a page whose scripts were
    written as they were made is left as it is)."""
    store = ResultStore(output)
    folder = output / run_id / UNITS_FOLDER
    if page.written:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    (folder / STORIES_INDEX).unlink(missing_ok=True)  # it vouches for other scripts
    _remove_stale(folder, set(page.scripts))
    for name, text in page.scripts.items():
        _write_script(store, run_id, name, text)
    return folder
