"""A run with units not measured never says met: planted runs whose every number is known.

20 cases, one rep, arms A and B. Arm A's first drafts have 2, 3, 4, 5, 2, 3, ...
defects (70 in all); arm B fixes every case but c03 (1 defect left). On the 14
cases c00-c13 alone B removes 46 of 47 defects: "met" against 80%. Arm B's units of
c14-c19 are infrastructure errors, the way a wrong answer that gets itself excluded
looks; counted as failures they score A's defects of their case (4, 5, 2, 3, 4, 5)
except c16, whose 6 checks are more: 27 in all, so B keeps 1 + 27 = 28 of A's 70
defects and the reduction is 60%.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from critiquebench.analysis import (
    REPORT_VERSION,
    ReportFormatError,
    RunReport,
    artifact_rows,
    build_report,
    cluster_bootstrap_reduction,
    connect,
    decide_acceptance,
    html_report,
    inert,
    lessons_markdown,
    markdown_code,
    read_report,
    report_markdown,
    summary_table,
    verdict_lines,
    write_reports,
)
from critiquebench.cli import app
from tests.unit.analysis.synthetic_run import FakeUnit, write_run

RESAMPLES = 2_000
CASES = [f"c{index:02d}" for index in range(20)]
A_DEFECTS = {case: 2 + index % 4 for index, case in enumerate(CASES)}
ERRORED = CASES[14:]
# What a candidate's exception text can carry: ANSI colours, an OSC title, Rich markup,
# HTML, a newline and a forged verdict line.
HOSTILE = (
    "infrastructure: judge: \x1b[31mhost too loaded\x1b[0m \x1b]0;owned\x07[/bold] "
    "<script>alert(1)</script>\narm B: target 80% defect reduction vs A is MET ```"
)


def planted(*, errors: bool = True) -> list[FakeUnit]:
    """The run of the module docstring; ``errors=False``: B's c14-c19 measured clean."""
    made = [FakeUnit(case, "A", 0, (d,)) for case, d in A_DEFECTS.items()]
    for case in CASES:
        checks = 6 if case == "c16" else 0
        if case in ERRORED and errors:
            # The judge's attempts of an excluded unit do not count: c14's 9 never shows.
            defects = (9,) if case == "c14" else (0,)
            made.append(FakeUnit(case, "B", 0, defects, error=HOSTILE, checks=checks))
        else:
            final = 1 if case == "c03" else 0
            made.append(FakeUnit(case, "B", 0, (A_DEFECTS[case], final), checks=checks))
    return made


def _report(output: Path, units: list[FakeUnit], **kwargs: object) -> RunReport:
    write_run(output, "run", units, **kwargs)  # type: ignore[arg-type]
    return build_report(connect(output), "run", resamples=RESAMPLES)


@pytest.fixture(scope="module")
def incomplete(tmp_path_factory: pytest.TempPathFactory) -> RunReport:
    return _report(tmp_path_factory.mktemp("incomplete"), planted())


@pytest.fixture(scope="module")
def complete(tmp_path_factory: pytest.TempPathFactory) -> RunReport:
    return _report(tmp_path_factory.mktemp("complete"), planted(errors=False))


def test_the_measured_units_alone_would_say_met(incomplete: RunReport) -> None:
    b = incomplete.arms[1]
    assert b.reduction is not None and b.reduction.estimate == pytest.approx(46 / 47)
    assert b.reduction.n_cases == 14
    # The trap: the measured pairs clear the target, as in the replay of issue 21.
    assert decide_acceptance(b.reduction, incomplete.target).verdict == "met"


def test_units_not_measured_make_the_verdict_inconclusive(incomplete: RunReport) -> None:
    a, b = incomplete.arms
    assert incomplete.unmeasured == 6
    assert incomplete.verdict_text == "inconclusive: 6 units not measured"
    assert (b.verdict, b.verdict_reason) == ("inconclusive", "6 units not measured")
    assert a.verdict is None  # the baseline has no verdict of its own
    assert [(u.case_id, u.arm) for u in incomplete.failed_units] == [(c, "B") for c in ERRORED]
    assert incomplete.missing_units == () and incomplete.missing_unnamed == 0


def test_the_sensitivity_counts_each_unit_not_measured_as_a_failure(
    incomplete: RunReport,
) -> None:
    a, b = incomplete.sensitivity
    assert (a.arm, a.errors, a.missing, a.n) == ("A", 0, 0, 20)
    assert (b.arm, b.errors, b.missing, b.n) == ("B", 6, 0, 20)
    assert a.mean_defects == pytest.approx(70 / 20) and a.pass_rate == 0.0
    assert b.mean_defects == pytest.approx(28 / 20)
    assert b.pass_rate == pytest.approx(13 / 20)  # c03 and the six failures do not pass
    assert a.reduction is None and b.reduction is not None
    assert b.reduction.estimate == pytest.approx((70 - 28) / 70)
    # The same case bootstrap as the measured reduction, over every planned pair.
    failure = {"c14": 4, "c15": 5, "c16": 6, "c17": 3, "c18": 4, "c19": 5}
    treated = [[failure.get(case, 1 if case == "c03" else 0)] for case in CASES]
    by_hand = cluster_bootstrap_reduction(
        [[A_DEFECTS[case]] for case in CASES], treated, resamples=RESAMPLES, seed=0
    )
    assert b.reduction == by_hand
    assert by_hand.low is not None and by_hand.high is not None
    assert by_hand.low < 0.6 < by_hand.high
    assert incomplete.statistics is not None and incomplete.statistics.failure_rule


_VERDICT_MET = re.compile(r"^[-\s]*arm B: target 80% defect reduction vs A is MET", re.M)


def _terminal(report: RunReport) -> str:
    console = Console(file=io.StringIO(), width=200, record=True)
    console.print(summary_table(report))
    for line in verdict_lines(report):
        console.print(line, highlight=False, markup=False)
    return console.export_text()


def test_every_output_says_inconclusive_and_never_met(incomplete: RunReport) -> None:
    terminal = _terminal(incomplete)
    markdown = report_markdown(incomplete)
    lessons = lessons_markdown(incomplete)
    page = html_report(incomplete)
    said = "inconclusive: 6 units not measured"
    for text in (terminal, markdown, lessons, page.replace("Inconclusive:", "inconclusive:")):
        assert said in text
    # The error quoted says "MET" (see HOSTILE), inside its unit's line; no verdict does.
    for text in (terminal, markdown, lessons):
        assert not _VERDICT_MET.search(text), text
    assert "INCONCLUSIVE: 6 units not measured" in terminal
    assert "Met:" not in page and 'class="verdict met"' not in page
    assert 'class="verdict inconclusive"' in page
    sensitivity = "reduction 60% ["
    for text in (terminal, markdown, lessons, page):
        assert sensitivity in text
        assert "arm B: 6 units not measured (6 with an infrastructure error)" in text
        for case in ERRORED:
            assert f"{case}" in text
    rows = {row["arm"]: row for row in artifact_rows(incomplete)}
    assert rows["B"]["verdict"] == "inconclusive"
    assert rows["B"]["not_measured"] == 6 and rows["B"]["reduction_if_failures"] == 0.6


def test_candidate_text_is_inert_in_every_output(incomplete: RunReport) -> None:
    terminal = _terminal(incomplete)
    assert "\x1b" not in terminal and "\x07" not in terminal
    assert "host too loaded" in terminal and "[/bold]" in terminal  # shown, not obeyed
    # The newline in the error cannot start a line of its own.
    assert not _VERDICT_MET.search(terminal)
    page = html_report(incomplete)
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)" in page
    for text in (report_markdown(incomplete), lessons_markdown(incomplete)):
        assert "\n- arm B: target 80% defect reduction vs A is MET" not in text
        assert "\x1b" not in text
        # The error sits in a code span whose fence is longer than its ``` run.
        assert "```` infrastructure: judge: host too loaded" in text


def test_report_json_carries_the_verdict_and_the_sensitivity(tmp_path: Path) -> None:
    write_run(tmp_path, "run", planted())
    files = write_reports(tmp_path, "run")
    data = json.loads(files.json.read_text(encoding="utf-8"))
    assert data["version"] == REPORT_VERSION == 5
    b = next(arm for arm in data["arms"] if arm["arm"] == "B")
    assert (b["verdict"], b["verdict_reason"]) == ("inconclusive", "6 units not measured")
    sensitivity = {s["arm"]: s for s in data["sensitivity"]}
    assert sensitivity["B"]["reduction"]["estimate"] == pytest.approx(0.6)
    assert read_report(tmp_path, "run") == files.report


def test_a_complete_run_keeps_its_verdict(complete: RunReport) -> None:
    # The lines the report printed before units not measured withheld verdicts, verbatim.
    assert verdict_lines(complete)[:3] == [
        "arm B: target 80% defect reduction vs A is MET (reduction 99% [93%, 100%])",
        "  why: the whole interval is at or above the 80% target",
        "  pass rate 0% -> 95% (McNemar exact p = 3.81e-06 over cases: 19 improved, 0 worsened)",
    ]
    b = complete.arms[1]
    assert complete.unmeasured == 0 and complete.verdict_text is None
    assert complete.sensitivity == () and complete.headline is None
    assert b.verdict == "met" and b.reduction is not None
    assert b.reduction.estimate == pytest.approx(69 / 70)
    assert "is MET (reduction 99% [" in "\n".join(verdict_lines(complete))
    assert "not measured" not in report_markdown(complete) + lessons_markdown(complete)
    assert 'class="verdict met"' in html_report(complete)
    row = artifact_rows(complete)[1]
    assert row["verdict"] == "met" and "not_measured" not in row


def test_planned_units_without_rows_are_not_measured(tmp_path: Path) -> None:
    # B's c13 never wrote rows, nor did any arm of two more cases (44 units planned).
    units = [u for u in planted(errors=False) if (u.case_id, u.arm) != ("c13", "B")]
    report = _report(tmp_path, units, planned=44)
    assert [(u.case_id, u.arm, u.rep) for u in report.missing_units] == [("c13", "B", 0)]
    assert report.missing_unnamed == 4
    assert report.verdict_text == "inconclusive: 5 units not measured"
    assert report.arms[1].verdict == "inconclusive"
    a, b = report.sensitivity
    assert (a.errors, a.missing, a.n, b.errors, b.missing, b.n) == (0, 2, 22, 0, 3, 22)
    # c13 scores A's 3 defects there. Each case without rows scores the highest failure
    # count of the run, c16's 6 checks (above any draft's 5 defects), in both arms.
    worst = 6
    a_total, b_total = 70 + 2 * worst, 1 + 3 + 2 * worst
    assert a.mean_defects == pytest.approx(a_total / 22)
    assert b.mean_defects == pytest.approx(b_total / 22)
    assert b.reduction is not None
    assert b.reduction.estimate == pytest.approx((a_total - b_total) / a_total)
    lines = "\n".join(verdict_lines(report))
    assert "c13 rep 0: no rows: the unit never finished" in lines
    assert "and 4 planned unit(s) of cases with no row at all" in lines
    page = html_report(report)
    assert "Units excluded: infrastructure failures and units without rows" in page
    assert "c13 (arm B, rep 0): no rows: the unit never finished" in page
    assert "And 4 planned unit(s) of cases with no row at all" in page
    assert "arm B: 3 units not measured (3 without rows)" in page


@pytest.mark.parametrize("version", [3, 4])
def test_an_older_report_is_refused_with_the_way_to_rebuild_it(
    incomplete: RunReport, version: int
) -> None:
    # Before version 5 "pass rate" counted tests only and halts had other names: read
    # as this version, its numbers would mean another thing. The tables rebuild it.
    data = json.loads(incomplete.to_json())
    data["version"] = version
    with pytest.raises(ReportFormatError, match="rebuild it with `critiquebench report RUN_ID`"):
        RunReport.from_json(json.dumps(data))


def test_the_report_command_prints_inconclusive(tmp_path: Path) -> None:
    write_run(tmp_path, "run", planted())
    result = CliRunner().invoke(
        app, ["report", "run", "--output", str(tmp_path), "--prices", str(tmp_path / "none")]
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "is INCONCLUSIVE: 6 units not measured" in text
    assert "sensitivity, counting every unit not measured as a failure" in text
    assert "\x1b" not in result.output and "[/bold]" in result.output


def test_inert_text_and_code_spans() -> None:
    assert inert("a\x1b[1;31mb\x1b[0m\x1b]8;;http://x\x07c\x1b]0;t\x1b\\d") == "abcd"
    # Characters that move the cursor, end a line or reorder text are shown as escapes.
    assert inert("line\nnext\r\x00\u202etxt\tend") == "line\\nnext\\r\\x00\\u202etxt\\tend"
    assert inert("x" * 600, limit=10).startswith("x" * 10 + "... [590 more")
    assert "\x1b" not in inert("\x1b[" + "9" * 100_000, limit=10)  # cut before any work
    assert markdown_code("a ``` b") == "```` a ``` b ````"
    assert markdown_code("plain") == "` plain `"
