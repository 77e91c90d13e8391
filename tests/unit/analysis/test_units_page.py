"""report.html's units table: the story of a case and rep as ``show`` tells it, made
inert whatever the model wrote, and the flipped cases marked."""

from __future__ import annotations

import json
from pathlib import Path

from critiquebench.analysis import UnitRow, UnitsPage, UnitStory, story_html, units_page
from critiquebench.analysis.render._transcript_view import CallStep, Round, round_blocks
from tests.unit.analysis.synthetic_run import FakeUnit, write_run

HOSTILE = '</script><script>alert("x")</script><b onmouseover=alert(1)>'


def _round(iteration: int, reply: str, passed: int) -> Round:
    return Round(
        iteration=iteration,
        calls=(
            CallStep("actor" if iteration == 0 else "fixer", False, "do it", reply, None, None),
        ),
        artifact=reply,
        checks_passed=passed,
        checks_total=3,
        defects_total=3 - passed,
        failures=("[assertion] line 1 `assert f() == 1`: expected 1, got None",)
        if passed < 3
        else (),
        critic_verdict=None,
        critic_findings=(),
        diff=() if iteration == 0 else ("-old", "+new"),
    )


def _story(arm: str, rounds: tuple[Round, ...], passed: bool) -> UnitStory:
    return UnitStory("c<1>", arm, 0, "retry_limit", passed, 3, 0 if passed else 3, None, rounds)


def test_the_arms_stand_side_by_side_round_by_round_and_nothing_is_markup() -> None:
    a = _story("A", (_round(0, HOSTILE, 0),), passed=False)
    b = _story("B", (_round(0, HOSTILE, 0), _round(1, "fixed", 3)), passed=True)
    page = story_html([a, b])
    assert "<script" not in page and "<b " not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(&#34;x&#34;)" in page
    assert "<h3>c&lt;1&gt;  rep 0</h3>" in page
    rows = page.split("<tr>")[1:]
    assert [row.split("</th>")[0] for row in rows] == [
        "<th>round", "<th>first draft", "<th>round 1", "<th>halt"
    ]  # fmt: skip
    # Round 1: A has none (an empty cell), B shows its fix, its checks and its diff.
    assert '<td data-arm="A"></td>' in rows[2]
    assert "checks: 3/3 passed; 0 defect(s) measured" in rows[2] and "+new" in rows[2]
    # Every block the terminal prints is in the page, in the same order.
    texts = [block.text for block in round_blocks(b.rounds[1])]
    cell = rows[2].split('<td data-arm="B">')[1]
    positions = [cell.index(text.replace(">", "&gt;")) for text in texts]
    assert positions == sorted(positions)


def test_rows_are_json_a_script_element_cannot_be_closed_by() -> None:
    row = UnitRow(HOSTILE, "A", 0, "single_draft", False, True, 2, 0, 120, 0, True)
    text = UnitsPage((row,), {}).rows_json()
    assert "<" not in text
    assert json.loads(text) == [[HOSTILE, "A", 0, "single_draft", False, True, 2, 0, 120, 0, True]]


def test_a_case_flips_when_its_measured_arms_disagree_on_pass() -> None:
    from dataclasses import replace

    from critiquebench.analysis.render._units_page import flipped

    a = _story("A", (_round(0, "x", 0),), passed=False)
    b = _story("B", (_round(0, "x", 3),), passed=True)
    assert flipped([a, b]) and not flipped([a, replace(b, passed=False)])
    # A unit stopped by an infrastructure error was not measured: it flips nothing.
    assert not flipped([replace(a, error="provider: timeout"), b])


def test_stories_go_to_the_file_the_page_loads_for_their_row(tmp_path: Path) -> None:
    from critiquebench.analysis.render._units_page import STORIES_PER_FILE, story_file

    cases = [f"c{index:02d}" for index in range(STORIES_PER_FILE + 1)]
    write_run(tmp_path, "many", [FakeUnit(case, arm) for case in cases for arm in "AB"])
    page = units_page(tmp_path, "many")
    assert len(page.rows) == 2 * len(cases)
    assert sorted(page.scripts) == ["0.js", "1.js"]
    for row in page.rows:
        script = page.scripts[story_file(row.group)]
        assert f"critiquebenchStory({row.group}, " in script
        title = json.dumps(f"<h3>{row.case_id}  rep 0</h3>")[1:-1]
        assert title.replace("<", "\\u003c") in script
    # The halt line counts the defects of every kind, as the run's tables hold them.
    assert "defects 0 -&gt; 0" in page.scripts["0.js"] and "None" not in page.scripts["0.js"]
