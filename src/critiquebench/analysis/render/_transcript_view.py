"""One unit's story from a run's tables, for ``critiquebench show``.

Each round: an excerpt of what the model was asked, what it answered, the judge's
result per check, the critic's findings, the diff to the previous attempt; then why
the loop stopped. Several arms of one case and rep are laid side by side by round.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from critiquebench.analysis.views import (
    READABLE_TABLES,
    connect,
    define_tables,
    spilling_connection,
    table_files,
)
from critiquebench.pipeline import Root

EXCERPT_LINES = 12
"""Lines of a prompt shown in a round (its end: where the request and feedback are)."""
DIFF_LINES = 40
"""Lines of a diff shown in a round."""


class StoryError(LookupError):
    """The unit asked for is not in the run; the message lists what is."""


@dataclass(frozen=True)
class CallStep:
    """One model call of a round."""

    role: str
    cached: bool
    prompt: str
    reply: str | None
    parsed: str | None
    error: str | None


@dataclass(frozen=True)
class Round:
    """One attempt: the calls that made and reviewed it, and what the judge found."""

    iteration: int
    calls: tuple[CallStep, ...]
    artifact: str
    checks_passed: int
    checks_total: int
    defects_total: int | None
    failures: tuple[str, ...]
    critic_verdict: str | None
    critic_findings: tuple[str, ...]
    diff: tuple[str, ...]
    feedback: tuple[str, ...] = ()


@dataclass(frozen=True)
class UnitStory:
    """A unit's rounds and how it ended."""

    case_id: str
    arm: str
    rep: int
    halt: str
    passed: bool
    defects_initial: int | None
    defects_final: int | None
    error: str | None
    rounds: tuple[Round, ...] = field(default_factory=tuple)
    tests_passed: bool = False
    loops: int = 0
    tokens: int = 0
    """The experiment's tokens of the unit (cache hits at what they first cost)."""


def _connection(output: Root, run_id: str) -> duckdb.DuckDBPyConnection:
    if not (output / run_id / "cases").is_dir():
        raise StoryError(f"no run {run_id!r} under {output} (no cases folder)")
    connection = duckdb.connect()
    files = table_files(output, [run_id], READABLE_TABLES)
    define_tables(connection, files, "VIEW", READABLE_TABLES)
    return connection


def _dicts(
    connection: duckdb.DuckDBPyConnection, query: str, params: list[Any]
) -> list[dict[str, Any]]:
    cursor = connection.execute(query, params)
    names = [column[0] for column in cursor.description or []]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def unit_list(output: Root, run_id: str) -> list[dict[str, Any]]:
    """Every unit of the run: case, arm, rep, halt reason, passed and final defects."""
    connection = _connection(output, run_id)
    return _dicts(
        connection,
        "SELECT case_id, arm, rep, halt_reason, passed, "
        "coalesce(defects_total_final, defects_final) AS defects FROM cases "
        "ORDER BY case_id, rep, arm",
        [],
    )


def _failure_line(failure: dict[str, Any]) -> str:
    where = f"line {failure['line']}" if failure.get("line") else ""
    source = f" `{failure['source']}`" if failure.get("source") else ""
    text = f"[{failure.get('kind')}] {where}{source}".rstrip()
    if failure.get("expected") is not None or failure.get("actual") is not None:
        text += f": expected {failure.get('expected')}, got {failure.get('actual')}"
    elif failure.get("message"):
        text += f": {str(failure['message']).splitlines()[0]}"
    return text


def _prompt(messages: str | None) -> str:
    if not messages:
        return ""
    listed = json.loads(messages)
    return str(listed[-1]["content"]) if listed else ""


def _diff(previous: str | None, current: str) -> tuple[str, ...]:
    if previous is None:
        return ()
    lines = difflib.unified_diff(
        previous.splitlines(), current.splitlines(), "previous", "this", lineterm="", n=1
    )
    return tuple(lines)


def load_stories(
    output: Root, run_id: str, case_id: str, arm: str | None = None, rep: int = 0
) -> list[UnitStory]:
    """The stories of ``case_id`` at ``rep`` in ``run_id``: of ``arm``, or of every arm."""
    connection = _connection(output, run_id)
    where, params = "case_id = ? AND rep = ?", [case_id, rep]
    if arm is not None:
        where, params = where + " AND arm = ?", [*params, arm]
    cases = _dicts(connection, f"SELECT * FROM cases WHERE {where} ORDER BY arm", params)
    if not cases:
        known = _dicts(connection, "SELECT DISTINCT case_id, arm, rep FROM cases", [])
        ids = sorted({row["case_id"] for row in known})
        arms = sorted({row["arm"] for row in known})
        reps = sorted({row["rep"] for row in known})
        raise StoryError(
            f"run {run_id!r} has no unit case={case_id!r} arm={arm or '*'} rep={rep}; "
            f"its cases: {', '.join(ids[:10])}{' ...' if len(ids) > 10 else ''}; "
            f"arms: {', '.join(arms)}; reps: {', '.join(map(str, reps))}"
        )
    attempts = _dicts(connection, f"SELECT * FROM attempts WHERE {where}", params)
    entries = _dicts(connection, f"SELECT * FROM transcripts WHERE {where}", params)
    return [_story(case, attempts, entries) for case in cases]


STORY_CHUNK_UNITS = 4_000
"""About how many units' stories ``all_stories`` reads at once (whole cases and reps)."""

_ORDER = "ORDER BY case_id, rep, arm"
# The cases and reps of one chunk, from (low case, low rep) to (high case, high rep).
_IN_CHUNK = """WHERE run_id = $run_id
    AND (case_id > $low_case OR (case_id = $low_case AND rep >= $low_rep))
    AND (case_id < $high_case OR (case_id = $high_case AND rep <= $high_rep))"""


def all_stories(
    output: Root, run_id: str, tables: duckdb.DuckDBPyConnection | None = None
) -> Iterator[list[UnitStory]]:
    """Every unit's story in ``run_id``, a list per case and rep (its arms, sorted), the
    groups in order of case and rep.

    ``tables`` is the run's measured tables already open (the report's snapshot, see
    ``connect``); without it they are read here. The stories are read a chunk of cases
    and reps at a time (``STORY_CHUNK_UNITS``), each table's rows of the chunk sorted
    and merged: what is held, and what DuckDB sorts, is one chunk's rows whatever the
    run's size. The stories of a 10,000-unit run's report had held every row of the
    three tables; sorting whole tables instead ran out of DuckDB's memory at 98,400.
    """
    if tables is None:
        tables = connect(output, [run_id], snapshot=True)
    side = spilling_connection()
    try:
        define_tables(side, table_files(output, [run_id], ["transcripts"]), "VIEW", ["transcripts"])
        for low, high in _chunks(tables, run_id):
            params = {"run_id": run_id, "low_case": low[0], "low_rep": low[1],
                      "high_case": high[0], "high_rep": high[1]}  # fmt: skip
            cases = _rows(tables, f"SELECT {_CASE_COLUMNS} FROM cases {_IN_CHUNK} {_ORDER}", params)
            attempts = _Sorted(
                _rows(
                    tables, f"SELECT {_ATTEMPT_COLUMNS} FROM attempts {_IN_CHUNK} {_ORDER}", params
                )
            )
            entries = _Sorted(
                _rows(
                    side,
                    f"SELECT {_TRANSCRIPT_COLUMNS} FROM transcripts {_IN_CHUNK} {_ORDER}",
                    params,
                )
            )
            units: list[dict[str, Any]] = []
            for case in cases:
                if units and _key(case) != _key(units[0]):
                    yield _group(units, attempts, entries)
                    units = []
                units.append(case)
            if units:
                yield _group(units, attempts, entries)
    finally:
        side.close()


def _chunks(
    tables: duckdb.DuckDBPyConnection, run_id: str
) -> Iterator[tuple[tuple[str, int], tuple[str, int]]]:
    """Consecutive ranges of the run's (case, rep) pairs, in DuckDB's order, each of
    about ``STORY_CHUNK_UNITS`` units: the first pair and the last of each."""
    counts = tables.sql(
        "SELECT case_id, rep, count(*) FROM cases WHERE run_id = $run_id "
        "GROUP BY case_id, rep ORDER BY case_id, rep",
        params={"run_id": run_id},
    ).fetchall()
    first: tuple[str, int] | None = None
    units = 0
    for case_id, rep, count in counts:
        first = first or (case_id, rep)
        units += count
        if units >= STORY_CHUNK_UNITS:
            yield first, (case_id, rep)
            first, units = None, 0
    if first is not None:
        yield first, (counts[-1][0], counts[-1][1])


def _rows(
    connection: duckdb.DuckDBPyConnection, query: str, params: dict[str, Any]
) -> list[dict[str, Any]]:
    """The rows of ``query`` (a chunk's: a few thousand units) as dicts, read in one go."""
    rows: list[dict[str, Any]] = connection.sql(query, params=params).to_arrow_table().to_pylist()
    return rows


# The columns a story shows (``_story``): only these are sorted and made Python
# values. Converting every column had taken an eighth of the stories' CPU.
_CASE_COLUMNS = (
    "case_id, arm, rep, halt_reason, passed, defects_total_initial, defects_initial, "
    "defects_total_final, defects_final, error, tests_passed, loops, tokens_in, tokens_out"
)
_ATTEMPT_COLUMNS = (
    "case_id, arm, rep, iteration, failures, artifact, checks_passed, checks_total, "
    "defects_total, critic_verdict, critic_findings"
)
_TRANSCRIPT_COLUMNS = (
    "case_id, rep, arm, iteration, entry, kind, role, cached, messages, reply, parsed, error"
)


def _key(row: dict[str, Any]) -> tuple[str, int]:
    return (row["case_id"], row["rep"])


def _group(units: list[dict[str, Any]], attempts: _Sorted, entries: _Sorted) -> list[UnitStory]:
    key = _key(units[0])
    mine, talk = attempts.take(key), entries.take(key)
    return [_story(case, mine, talk) for case in units]


class _Sorted:
    """Rows sorted by (case_id, rep), taken one key at a time in ascending order.

    DuckDB sorts text by its UTF-8 bytes, which is the order of Python's ``str``
    comparison, so a key the rows skip (a unit with no cases row) is passed over.
    """

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self._rows = iter(rows)
        self._next = next(self._rows, None)

    def take(self, key: tuple[str, int]) -> list[dict[str, Any]]:
        """The rows of ``key``, after dropping those of smaller keys."""
        taken: list[dict[str, Any]] = []
        while self._next is not None and _key(self._next) <= key:
            if _key(self._next) == key:
                taken.append(self._next)
            self._next = next(self._rows, None)
        return taken


def _story(
    case: dict[str, Any], attempts: list[dict[str, Any]], entries: list[dict[str, Any]]
) -> UnitStory:
    mine = sorted((a for a in attempts if a["arm"] == case["arm"]), key=lambda a: a["iteration"])
    talk = sorted((e for e in entries if e["arm"] == case["arm"]), key=lambda e: e["entry"])
    rounds: list[Round] = []
    previous: str | None = None
    last = mine[-1]["iteration"] if mine else 0
    for attempt in mine:
        iteration = attempt["iteration"]
        calls = tuple(
            CallStep(
                e["role"],
                bool(e["cached"]),
                _prompt(e["messages"]),
                e["reply"],
                e["parsed"],
                e["error"],
            )
            for e in talk
            if e["kind"] == "call" and e["iteration"] == iteration
        )
        shown = next(
            (e["parsed"] for e in talk if e["kind"] == "feedback" and e["iteration"] == iteration),
            None,
        )
        failures = json.loads(attempt["failures"] or "[]")
        rounds.append(
            Round(
                iteration=iteration,
                calls=calls,
                artifact=attempt["artifact"],
                checks_passed=attempt["checks_passed"],
                checks_total=attempt["checks_total"],
                defects_total=attempt.get("defects_total"),
                failures=tuple(_failure_line(f) for f in failures),
                critic_verdict=attempt.get("critic_verdict"),
                critic_findings=tuple(json.loads(attempt.get("critic_findings") or "[]")),
                diff=_diff(previous, attempt["artifact"]),
                # the last attempt's feedback reached no fixer: the loop stopped there
                feedback=tuple(item["text"] for item in json.loads(shown or "[]"))
                if iteration < last
                else (),
            )
        )
        previous = attempt["artifact"]
    return UnitStory(
        case_id=case["case_id"],
        arm=case["arm"],
        rep=case["rep"],
        halt=case["halt_reason"],
        passed=bool(case["passed"]),
        # the total of every kind; a run from before v3 measured tests only
        defects_initial=_first(case.get("defects_total_initial"), case.get("defects_initial")),
        defects_final=_first(case.get("defects_total_final"), case.get("defects_final")),
        error=case.get("error"),
        rounds=tuple(rounds),
        tests_passed=bool(case.get("tests_passed")),
        loops=int(case.get("loops") or 0),
        tokens=int(case.get("tokens_in") or 0) + int(case.get("tokens_out") or 0),
    )


def _first(*values: int | None) -> int | None:
    return next((value for value in values if value is not None), None)


def _excerpt(text: str, lines: int = EXCERPT_LINES) -> str:
    kept = text.splitlines()
    if len(kept) <= lines:
        return text
    return f"[... {len(kept) - lines} earlier line(s)]\n" + "\n".join(kept[-lines:])


@dataclass(frozen=True)
class Block:
    """One piece of a round's story, as both the terminal and report.html show it.

    ``part`` says what it is (prompt, reply, parsed, checks, failure, critic, finding,
    diff, feedback); ``heading`` marks the labels (bold in the terminal).
    """

    part: str
    text: str
    heading: bool = False


def round_blocks(round_: Round) -> list[Block]:
    """One round as blocks: calls, checks, critic, diff, feedback shown."""
    parts: list[Block] = []
    for call in round_.calls:
        label = f"{call.role}{' (cache hit)' if call.cached else ''}"
        if call.role in ("actor", "fixer"):
            parts.append(Block("prompt", f"asked ({label}):", heading=True))
            parts.append(Block("prompt", _excerpt(call.prompt)))
        reply = call.reply if call.reply is not None else f"(no reply: {call.error})"
        shown_reply = (
            _excerpt(reply, 3 * EXCERPT_LINES) if call.role in ("actor", "fixer") else reply
        )
        parts.append(Block("reply", f"answer ({label}):", heading=True))
        parts.append(Block("reply", shown_reply))
        if call.parsed and call.role in ("critic", "reviewer"):
            parts.append(Block("parsed", f"read as: {call.parsed}"))
    checks = f"checks: {round_.checks_passed}/{round_.checks_total} passed"
    if round_.defects_total is not None:
        checks += f"; {round_.defects_total} defect(s) measured"
    parts.append(Block("checks", checks, heading=True))
    parts.extend(Block("failure", f"  {line}") for line in round_.failures)
    if round_.critic_verdict is not None:
        parts.append(Block("critic", f"critic: {round_.critic_verdict}", heading=True))
        parts.extend(Block("finding", f"  - {finding}") for finding in round_.critic_findings)
    if round_.diff:
        parts.append(Block("diff", "diff to the previous attempt:", heading=True))
        shown = round_.diff[:DIFF_LINES]
        more = len(round_.diff) - len(shown)
        parts.append(
            Block("diff", "\n".join(shown) + (f"\n[... {more} more line(s)]" if more else ""))
        )
    elif round_.iteration > 0:
        parts.append(Block("diff", "diff to the previous attempt: (none: the same artifact)"))
    if round_.feedback:
        parts.append(Block("feedback", "feedback shown to the fixer:", heading=True))
        parts.extend(Block("feedback", f"  {line.splitlines()[0]}") for line in round_.feedback)
    return parts


def render_round(round_: Round) -> RenderableType:
    """One round as text blocks: calls, checks, critic, diff, feedback."""
    return Group(
        *(Text(b.text, style="bold") if b.heading else Text(b.text) for b in round_blocks(round_))
    )


def round_name(round_: Round) -> str:
    """The round's name: first draft, or round N."""
    return "first draft" if round_.iteration == 0 else f"round {round_.iteration}"


def ending_line(story: UnitStory) -> str:
    """How the unit ended: halt, pass, defects first draft -> kept, error."""
    verdict = "passed" if story.passed else "not passed"
    line = (
        f"halt: {story.halt}; {verdict}; defects {story.defects_initial} -> {story.defects_final}"
    )
    return line + (f"; error: {story.error}" if story.error else "")


def render_story(story: UnitStory) -> RenderableType:
    """A unit's story: one panel per round, then the halt line."""
    title = f"{story.case_id}  arm {story.arm}  rep {story.rep}"
    panels: list[RenderableType] = [Text(title, style="bold underline")]
    for round_ in story.rounds:
        panels.append(Panel(render_round(round_), title=round_name(round_), title_align="left"))
    panels.append(Text(ending_line(story), style="bold"))
    return Group(*panels)


def render_side_by_side(stories: Sequence[UnitStory]) -> RenderableType:
    """Arms of one case and rep in columns, aligned by round, with each arm's halt."""
    # Text, not str: a case id like "x[bold]" is shown as written, never as markup
    table = Table(show_lines=True, title=Text(f"{stories[0].case_id}  rep {stories[0].rep}"))
    table.add_column("round")
    for story in stories:
        table.add_column(Text(f"arm {story.arm}"), overflow="fold")
    rounds = max(len(story.rounds) for story in stories)
    for index in range(rounds):
        cells: list[RenderableType] = [Text("first draft" if index == 0 else f"round {index}")]
        for story in stories:
            cells.append(
                render_round(story.rounds[index]) if index < len(story.rounds) else Text("")
            )
        table.add_row(*cells)
    table.add_row(Text("halt"), *(Text(ending_line(story)) for story in stories))
    return table


def render_units(units: list[dict[str, Any]], run_id: str) -> RenderableType:
    """The run's units, for choosing one to show."""
    table = Table(title=Text(f"units of {run_id} (critiquebench show {run_id} CASE)"))
    for name in ("case", "arm", "rep", "halt", "passed", "defects"):
        table.add_column(name)
    for unit in units:
        table.add_row(
            Text(str(unit["case_id"])), Text(str(unit["arm"])), Text(str(unit["rep"])),
            Text(str(unit["halt_reason"])), Text("yes" if unit["passed"] else "no"),
            Text(str(unit["defects"])),
        )  # fmt: skip
    return table
