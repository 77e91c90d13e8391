"""The README's SQL views section: its examples run, and its columns are the views'."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from critiquebench.analysis import connect
from tests.unit.analysis.synthetic_run import write_run
from tests.unit.analysis.test_fix_break import UNITS as ROUND_UNITS
from tests.unit.analysis.test_kind_groups import MIXED
from tests.unit.analysis.test_trigger_report import UNITS as TRIGGER_UNITS

README = Path(__file__).resolve().parents[3] / "README.md"


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    return text[text.index("### SQL views") : text.index("## Commands")]


def test_every_sql_example_runs_and_answers(tmp_path: Path) -> None:
    write_run(tmp_path, "mixed", MIXED)
    write_run(tmp_path, "trig", TRIGGER_UNITS)
    write_run(tmp_path, "rounds", ROUND_UNITS)
    db = connect(tmp_path)
    queries = re.findall(r"```sql\n(.*?)```", _section(), re.DOTALL)
    assert len(queries) == 3
    by_group, near_misses, rounds = (db.execute(query).fetchall() for query in queries)
    # Both runs together: arm B's sql units kept 1 defect over 2 units.
    assert ("B", "sql", 0.5, 1.5) in by_group
    # pdf: n1 and n2 are near misses; n1 triggered in both first drafts, and only
    # arm A kept it. csv: n3 triggered only in arm B's answer kept.
    assert near_misses == [("csv", "A", 1, 0, 0), ("csv", "B", 1, 0, 1),
                           ("pdf", "A", 2, 1, 1), ("pdf", "B", 2, 1, 0)]  # fmt: skip
    # The rounds of test_fix_break's run, as fixed/failing and broken/passing.
    assert rounds == [("B", 1, "2/3", "0/0"), ("B", 2, "0/1", "0/0"),
                      ("C", 1, "2/2", "1/2"), ("C", 2, "1/1", "1/1")]  # fmt: skip


def test_the_views_table_names_their_columns(tmp_path: Path) -> None:
    write_run(tmp_path, "mixed", MIXED)
    db = connect(tmp_path)
    rows = re.findall(r"^\| `(\w+)` \| [^|]+ \| (.+) \|$", _section(), re.M)
    assert [view for view, _ in rows] == [
        "findings", "defects_by_kind", "trigger_decisions", "fix_break", "canaries"
    ]  # fmt: skip
    for view, described in rows:
        columns = [c[0] for c in db.execute(f"DESCRIBE {view}").fetchall()]
        # The columns the row names in backticks before its first parenthesis or colon.
        named = re.findall(r"`(\w+)`", described)
        assert named[: len(columns)] == columns, (view, named, columns)


def test_sql_help_names_every_view_connect_creates(tmp_path: Path) -> None:
    from critiquebench.cli import SQL_VIEWS, app

    write_run(tmp_path, "mixed", MIXED)
    made = (
        connect(tmp_path)
        .execute("SELECT table_name FROM information_schema.tables WHERE table_type = 'VIEW'")
        .fetchall()
    )
    assert sorted(SQL_VIEWS) == sorted(name for (name,) in made)
    helped = CliRunner().invoke(app, ["sql", "--help"], env={"COLUMNS": "200"})
    assert ", ".join(SQL_VIEWS) in " ".join(helped.output.split())
