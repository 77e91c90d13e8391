"""Trigger metrics from the rows to report.json, the terminal, Markdown and HTML.

The run below is small enough to count by hand; every expected number is derived
in the comments beside it.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from critiquebench.analysis import RunReport, build_report, connect, html_report, report_markdown
from critiquebench.analysis.render._terminal import summary_table
from critiquebench.analysis.report._trigger_metrics import trigger_metrics, trigger_rates
from critiquebench.judges import Failure, JudgeResult, JudgeSet, artifact_format
from critiquebench.loop import LoopDependencies, run_loop
from critiquebench.models import ScriptedProvider
from critiquebench.pipeline import ResultStore, RunConfig, Unit
from critiquebench.pipeline._units import outcome_rows
from critiquebench.suites import Case, Check
from tests.unit.analysis.synthetic_run import FakeUnit, write_run

LABELS = {"t1": "trigger", "t2": "trigger", "n1": "near_miss", "n2": "near_miss",
          "c1": "clear_miss"}  # fmt: skip
EXPECT_TRIGGER = {"t1", "t2"}


def _unit(case: str, arm: str, decisions: tuple[str, ...], skill: str = "pdf") -> FakeUnit:
    """A trigger unit: one defect per wrong decision (no decision is wrong too)."""
    label = LABELS.get(case, "near_miss")
    wrong = tuple(
        int(d.strip().lower() != ("trigger" if label == "trigger" else "no_trigger"))
        for d in decisions
    )
    return FakeUnit(
        case_id=case, arm=arm, defects=wrong, artifacts=decisions, judge="trigger",
        judge_data={"skill": skill, "description": f"{skill} skill", "query": "q", "expect": label},
        kind_counts=tuple({"trigger": n} for n in wrong),
        # n3 in arm B: the loop (e.g. a critic) saw a problem in a right first draft and
        # kept a wrong second one.
        visible=(1, 0) if (case, arm) == ("n3", "B") else None,
    )  # fmt: skip


# Arm A, one draft: t1 right, t2 missed, n1 false trigger, n2 right, c1 no decision.
# Arm B: the same first drafts, every answer kept right. Skill csv: one near miss.
UNITS = [
    _unit("t1", "A", ("trigger",)),
    _unit("t2", "A", ("no_trigger",)),
    _unit("n1", "A", ("Trigger\n",)),  # decisions are read trimmed, in any case
    _unit("n2", "A", ("no_trigger",)),
    _unit("c1", "A", ("maybe",)),  # not a decision: counts as none
    _unit("n3", "A", ("no_trigger",), skill="csv"),
    _unit("t1", "B", ("trigger",)),
    _unit("t2", "B", ("no_trigger", "trigger")),
    _unit("n1", "B", ("trigger", "no_trigger")),
    _unit("n2", "B", ("no_trigger",)),
    _unit("c1", "B", ("", "no_trigger")),
    _unit("n3", "B", ("no_trigger", "trigger"), skill="csv"),
]


@pytest.fixture
def report(tmp_path: Path) -> RunReport:
    write_run(tmp_path, "trig", UNITS)
    return build_report(connect(tmp_path), "trig", resamples=100)


def test_decisions_view_reads_skill_label_and_both_decisions(tmp_path: Path) -> None:
    write_run(tmp_path, "trig", UNITS)
    rows = (
        connect(tmp_path)
        .execute(
            "SELECT arm, case_id, skill, expect, decision_initial, decision_final "
            "FROM trigger_decisions WHERE case_id IN ('n1', 'c1', 'n3') ORDER BY arm, case_id"
        )
        .fetchall()
    )
    assert rows == [
        ("A", "c1", "pdf", "clear_miss", "", ""),
        ("A", "n1", "pdf", "near_miss", "trigger", "trigger"),
        ("A", "n3", "csv", "near_miss", "no_trigger", "no_trigger"),
        ("B", "c1", "pdf", "clear_miss", "", "no_trigger"),
        ("B", "n1", "pdf", "near_miss", "trigger", "no_trigger"),
        ("B", "n3", "csv", "near_miss", "no_trigger", "trigger"),
    ]


def test_metrics_per_skill_and_arm_match_the_hand_count(report: RunReport) -> None:
    by_key = {(m.skill, m.arm): m for m in report.triggers}
    assert sorted(by_key) == [("csv", "A"), ("csv", "B"), ("pdf", "A"), ("pdf", "B")]
    a = by_key["pdf", "A"]
    assert (a.units, a.should_trigger, a.near_misses, a.clear_misses) == (5, 2, 2, 1)
    # Triggered: t1 and n1. Precision 1/2, recall 1/2 (t2 missed), near misses 1/2
    # (n1), clear misses 0/1; c1 made no decision.
    assert (a.kept.triggered, a.kept.true_triggers, a.kept.no_decision) == (2, 1, 1)
    assert a.kept.precision == a.kept.recall == a.kept.near_miss_false_trigger_rate == 0.5
    assert a.kept.clear_miss_false_trigger_rate == 0.0
    assert a.first_draft == a.kept  # one draft per unit
    b = by_key["pdf", "B"]
    assert b.first_draft == a.kept  # the same first drafts...
    # ...and every answer kept right: t1, t2 triggered; no miss triggered.
    assert (b.kept.precision, b.kept.recall) == (1.0, 1.0)
    assert b.kept.near_miss_false_trigger_rate == b.kept.clear_miss_false_trigger_rate == 0.0
    assert b.kept.no_decision == 0
    # csv has no should-trigger case: recall is undefined; A never triggers, so its
    # precision is undefined too; B's kept answer triggered on the near miss.
    csv_a, csv_b = by_key["csv", "A"], by_key["csv", "B"]
    assert (csv_a.kept.precision, csv_a.kept.recall) == (None, None)
    assert csv_a.kept.near_miss_false_trigger_rate == 0.0
    assert csv_a.kept.clear_miss_false_trigger_rate is None
    assert (csv_b.kept.precision, csv_b.kept.near_miss_false_trigger_rate) == (0.0, 1.0)
    assert csv_b.first_draft.near_miss_false_trigger_rate == 0.0


def test_trigger_defects_are_their_own_group(report: RunReport) -> None:
    assert report.defect_groups == ("trigger",)
    a, b = report.arms
    # A: t2, n1, c1 wrong of 6 units; B kept: only n3 wrong.
    assert a.defects_by_group == {"trigger": pytest.approx(3 / 6)}
    assert b.defects_by_group == {"trigger": pytest.approx(1 / 6)}
    assert b.defects_initial_by_group == {"trigger": pytest.approx(3 / 6)}
    assert sum(b.defects_by_group.values()) == pytest.approx(b.mean_defects)


def test_report_json_keeps_the_metrics(report: RunReport) -> None:
    assert RunReport.from_json(report.to_json()) == report


def _render(report: RunReport, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, record=True)
    console.print(summary_table(report))
    return console.export_text()


@pytest.mark.parametrize("width", [80, 120])
def test_the_terminal_shows_a_trigger_table_that_fits(report: RunReport, width: int) -> None:
    text = _render(report, width)
    assert "…" not in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= width
    assert "trigger decisions" in text
    cells = [[cell.strip() for cell in line.split("│")[1:-1]] for line in text.splitlines()]
    rows = [row for row in cells if len(row) == 7 and row[0] in ("pdf", "csv")]
    assert rows == [
        ["csv", "A", "1", "—", "—", "0%→0%", "—"],
        ["csv", "B", "1", "—→0%", "—", "0%→100%", "—"],
        ["pdf", "A", "5", "50%→50%", "50%→50%", "50%→50%", "0%→0%"],
        ["pdf", "B", "5", "50%→100%", "50%→100%", "50%→0%", "0%→0%"],
    ]
    # The per-arm table names the run's only group.
    assert any(re.search(r"┃ +trigger ┃", line) for line in text.splitlines()), text
    assert "tests/lint/types" not in text


def test_markdown_and_html_show_the_same_rows(report: RunReport) -> None:
    markdown = report_markdown(report)
    assert "| pdf | B | 5 | 50%→100% | 50%→100% | 50%→0% | 0%→0% |" in markdown
    page = html_report(report)
    assert "<h2>Trigger decisions</h2>" in page and "trigger kept" in page
    row = "<tr><td>pdf</td><td>B</td><td>5</td><td>50%→100%</td><td>50%→100%</td>"
    assert row in page


def test_a_run_without_trigger_cases_has_no_trigger_table(tmp_path: Path) -> None:
    write_run(tmp_path, "py", [FakeUnit("x", "A", defects=(1,))])
    report = build_report(connect(tmp_path), "py", resamples=50)
    assert report.triggers == ()
    assert "trigger decisions" not in _render(report, 120)
    assert "Trigger decisions" not in html_report(report)


def test_rates_edge_cases() -> None:
    nothing = trigger_rates([])
    assert nothing.precision is nothing.recall is None
    assert nothing.near_miss_false_trigger_rate is nothing.clear_miss_false_trigger_rate is None
    # Units with a label outside the contract are left out of every count.
    [only] = trigger_metrics([("s", "A", "trigger", "", "trigger"),
                              ("s", "A", "unknown", "trigger", "trigger")])  # fmt: skip
    assert only.units == 1 and only.kept.precision == 1.0 and only.first_draft.recall == 0.0
    assert only.first_draft.no_decision == 1 and only.first_draft.precision is None


class _StandInTriggerJudge:
    """The trigger contract (the real judge is built elsewhere): a wrong decision is
    one ``trigger`` defect, seen by the loop."""

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        want = "trigger" if case.judge_data["expect"] == "trigger" else "no_trigger"
        got = artifact.strip()
        wrong = () if got == want else (
            Failure(kind="trigger", code="false_trigger", message="wrong decision",
                    origin="feedback", source="decision", expected=want, actual=got),
        )  # fmt: skip
        return JudgeResult(wrong, checks_total=1, checks_passed=1 - len(wrong), duration_s=0.0)


def test_rows_the_pipeline_writes_feed_the_view_and_the_metrics(tmp_path: Path) -> None:
    output = tmp_path / "runs"
    write_run(output, "real", [])  # the runs row; the units below come from the real loop
    config = RunConfig(arms=("A", "B"), run_id="real", suite="synthetic")
    case = Case(id="t/near", prompt="Does the pdf skill trigger for: PDF of a normal law?",
                judge="trigger", checks=(Check(source="decision", origin="feedback"),),
                judge_data={"skill": "pdf", "query": "q", "expect": "near_miss"})  # fmt: skip
    judges = JudgeSet({"trigger": _StandInTriggerJudge()})
    store = ResultStore(output)
    for arm, replies in {"A": ["trigger"], "B": ["trigger", "no_trigger"]}.items():
        fence = artifact_format("trigger").fenced
        deps = LoopDependencies(
            provider=ScriptedProvider([fence(r) for r in replies]), judge=judges
        )
        unit = Unit(case.id, arm, 0)
        outcome = run_loop(case, deps, config.loop_settings(arm), rep=0)
        store.write_unit("real", unit, outcome_rows(case, unit, outcome, config, 1.0, "scripted"))

    db = connect(output)
    decisions = db.execute(
        "SELECT arm, skill, expect, decision_initial, decision_final FROM trigger_decisions "
        "ORDER BY arm"
    ).fetchall()
    assert decisions == [
        ("A", "pdf", "near_miss", "trigger", "trigger"),
        ("B", "pdf", "near_miss", "trigger", "no_trigger"),
    ]
    report = build_report(db, "real", resamples=50)
    assert report.defect_groups == ("trigger",)
    a, b = report.triggers
    assert a.kept.near_miss_false_trigger_rate == 1.0
    assert (b.first_draft.near_miss_false_trigger_rate, b.kept.near_miss_false_trigger_rate) == (
        1.0,
        0.0,
    )
    assert a.kept.precision == 0.0 and b.kept.precision is None  # B triggered nowhere
