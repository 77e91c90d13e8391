"""The run report on runs whose every number is known by hand."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from critiquebench.analysis import (
    REPORT_VERSION,
    Price,
    PriceTable,
    ReportFormatError,
    RunReport,
    build_report,
    connect,
    html_report,
    lessons_markdown,
    read_report,
    units_page,
    write_reports,
)
from critiquebench.pipeline import TABLES
from tests.unit.analysis.synthetic_run import MODEL, Call, FakeUnit, write_run

# USD per million tokens: an actor call (100 in, 10 out) costs $0.0013, a fix call
# (50 in, 20 out) $0.0011.
PRICES = PriceTable({MODEL: Price(10.0, 30.0)}, source="test prices")


def _calls(attempts: int, *, cached: bool = False) -> tuple[Call, ...]:
    first = Call(0, 100, 10, cached)
    return (first, *(Call(i, 50, 20, cached) for i in range(1, attempts)))


def units(*, cached_a: bool = True, cached_b: bool = False) -> list[FakeUnit]:
    """Three cases x two reps in arms A and B; A's calls are cache hits by default."""
    a = {("c1", 0): 2, ("c1", 1): 2, ("c2", 0): 0, ("c2", 1): 1, ("c3", 0): 3, ("c3", 1): 3}
    b: dict[tuple[str, int], tuple[tuple[int, ...], tuple[int, ...] | None]] = {
        ("c1", 0): ((2, 0), None),
        ("c1", 1): ((2, 1), None),
        ("c2", 0): ((0,), None),
        ("c2", 1): ((1, 0), None),
        # Round 2 is worse than round 1 on every check: the loop keeps round 1.
        ("c3", 0): ((3, 1, 2), (2, 0, 1)),
        # A tie on visible defects: the loop keeps the latest attempt, the worse one.
        ("c3", 1): ((3, 3), (1, 1)),
    }
    made = [
        FakeUnit(case, "A", rep, (d,), calls=_calls(1, cached=cached_a))
        for (case, rep), d in a.items()
    ]
    made += [
        FakeUnit(case, "B", rep, defects, visible, calls=_calls(len(defects), cached=cached_b),
                 latency_s=float(index + 1))
        for index, ((case, rep), (defects, visible)) in enumerate(b.items())
    ]  # fmt: skip
    return made


@pytest.fixture
def report(tmp_path: Path) -> RunReport:
    write_run(tmp_path, "known", units(), reps=2)
    return build_report(connect(tmp_path), "known", prices=PRICES, resamples=2_000)


def test_arm_numbers_match_hand_counts(report: RunReport) -> None:
    a, b = report.arms
    assert (a.arm, a.n, a.n_cases, b.n, b.n_cases) == ("A", 6, 3, 6, 3)
    assert a.mean_defects == pytest.approx(11 / 6)
    assert b.mean_defects_initial == pytest.approx(11 / 6)
    assert b.mean_defects == pytest.approx(5 / 6)
    assert (a.pass_rate, b.pass_rate) == (pytest.approx(1 / 6), pytest.approx(3 / 6))
    assert (b.p50_latency_s, b.p90_latency_s) == (pytest.approx(3.5), pytest.approx(5.5))
    assert b.mean_calls == 2.0 and b.mean_loops == 1.0
    assert b.halts == {"visible_clean": 3, "retry_limit": 3}
    assert b.reduction is not None and b.reduction.estimate == pytest.approx(6 / 11)
    assert b.reduction.n_pairs == 6
    assert b.mcnemar is not None and (b.mcnemar.b, b.mcnemar.c) == (0, 2)
    assert b.verdict == "inconclusive"
    assert a.defects_ci is not None and a.defects_ci.n_cases == 3
    assert a.defects_ci.low is not None and a.defects_ci.high is not None
    assert a.defects_ci.low <= a.mean_defects <= a.defects_ci.high


def test_cost_is_the_experiments_with_what_this_run_paid_apart(report: RunReport) -> None:
    a, b = report.arms
    # A's calls were all cache hits: they cost the experiment, this run paid nothing.
    assert a.cost_experiment == pytest.approx(6 * 0.0013)
    assert a.cost_run == 0.0 and a.cached_calls == a.calls == 6
    assert b.cost_experiment == b.cost_run == pytest.approx(6 * 0.0013 + 6 * 0.0011)
    assert report.cost is not None
    assert report.cost.experiment == pytest.approx(0.0222)
    assert report.cost.paid == pytest.approx(0.0144)
    assert (report.cost.calls, report.cost.cached_calls) == (18, 6)
    # B spends $0.0011 more per unit and removes one defect per unit.
    assert b.cost_per_defect_removed == pytest.approx(0.0011)


def test_curves_on_the_kept_answer_and_on_the_latest_attempt(report: RunReport) -> None:
    curves = report.curves["B"]
    assert curves.kept.mean_defects == pytest.approx((11 / 6, 5 / 6, 5 / 6))
    assert curves.latest.mean_defects == pytest.approx((11 / 6, 5 / 6, 1.0))
    # The kept curve ends where the table's mean defects are.
    assert curves.kept.mean_defects[-1] == pytest.approx(report.arms[1].mean_defects)
    assert [p.round for p in curves.pass_vs_tokens] == [0, 1, 2]
    assert [p.mean_tokens for p in curves.pass_vs_tokens] == pytest.approx([110, 1010 / 6, 180])
    assert [p.pass_rate for p in curves.pass_vs_tokens] == pytest.approx([1 / 6, 3 / 6, 3 / 6])
    assert report.curves["A"].kept.mean_defects == pytest.approx((11 / 6,))


def test_escalations_regressions_and_failure_kinds(report: RunReport) -> None:
    assert [(u.case_id, u.rep, u.defects_final) for u in report.escalations] == [
        ("c1", 1, 1),
        ("c3", 0, 1),
        ("c3", 1, 3),
    ]
    assert report.escalations[0].record.startswith("escalations/c1-")
    assert [(r.case_id, r.rep, r.iteration, r.previous, r.defects) for r in report.regressions] == [
        ("c3", 0, 2, 1, 2)
    ]
    kinds = {
        (k.arm, k.kind): (k.count, k.units, k.first_draft, k.fixed) for k in report.failure_kinds
    }
    # One "assertion" failure per defect, counted in the answer kept of each unit (not over
    # every attempt, which gave B 11 + 5 + 2 = 18 for trying more): A keeps 2+2+0+1+3+3 in
    # 5 units; B keeps 0+1+0+0+1+3 in 3 units, after fixing 2+1+0+1+2+0 of its first drafts'.
    assert kinds == {("A", "assertion"): (11, 5, 11, 0), ("B", "assertion"): (5, 3, 11, 6)}
    text = lessons_markdown(report)
    assert "- synthetic, arm B: assertion x5 (in 3 units)" in text
    assert (
        "- synthetic, arm B: assertion: 11 in first drafts, 6 fixed, 5 in the answers kept" in text
    )
    assert "- c3 (arm B, rep 0): round 2 went 1 -> 2" in text
    assert "- arm B: visible_clean x3" in text


def test_run_settings_come_from_the_runs_row(report: RunReport) -> None:
    assert report.meta is not None
    assert (report.meta.suite, report.meta.reps, report.meta.status) == (
        "synthetic",
        2,
        "completed",
    )
    assert report.meta.started_at == "2026-01-02 03:04:05 UTC"
    assert report.meta.finished_at == "2026-01-02 03:09:05 UTC"
    assert (report.meta.units_planned, report.meta.units_landed) == (12, 12)


def test_infrastructure_failures_change_nothing_but_their_count(tmp_path: Path) -> None:
    partner = FakeUnit("c4", "A", 0, (2,), calls=_calls(1))
    broken = FakeUnit(
        "c4", "B", 0, (9, 9), calls=_calls(2), error="replay: no answer for case c4",
        kinds=("not_run",),
    )  # fmt: skip
    write_run(tmp_path / "with", "run", [*units(), partner, broken], reps=2)
    write_run(tmp_path / "without", "run", [*units(), partner], reps=2)
    failed = build_report(connect(tmp_path / "with"), "run", prices=PRICES, resamples=500)
    clean = build_report(connect(tmp_path / "without"), "run", prices=PRICES, resamples=500)

    assert [(u.case_id, u.arm, u.error) for u in failed.failed_units] == [
        ("c4", "B", "replay: no answer for case c4")
    ]
    assert failed.arms[1].infra_errors == 1 and clean.arms[1].infra_errors == 0
    # Every number is the same as if the unit had never run: means, pairs, curves, cost;
    # only the verdict is withheld while the unit is not measured.
    for left, right in zip(failed.arms, clean.arms, strict=True):
        withheld = {"infra_errors": 0, "verdict": right.verdict}
        withheld["verdict_reason"] = right.verdict_reason
        assert left.__dict__ | withheld == right.__dict__
    assert (failed.arms[1].verdict, failed.arms[1].verdict_reason) == (
        "inconclusive",
        "1 unit not measured",
    )
    assert failed.arms[1].mean_defects == pytest.approx(5 / 6)
    assert failed.curves == clean.curves
    assert failed.cost == clean.cost
    assert failed.failure_kinds == clean.failure_kinds
    assert failed.regressions == clean.regressions
    assert failed.headline == (
        "inconclusive: 1 unit not measured (1 failed for infrastructure reasons): excluded "
        "from every number, so no arm is met or not met; rerun with --run-id run"
    )
    assert clean.headline is None
    assert failed.headline in lessons_markdown(failed)
    page = html_report(failed)
    assert failed.headline in page and "replay: no answer for case c4" in page


def _reversed_connection(output: Path) -> duckdb.DuckDBPyConnection:
    """The same views as ``connect``, over the files in the opposite order."""
    connection = duckdb.connect()
    for table in TABLES:
        files = sorted(output.glob(f"*/{table}/*.parquet"), reverse=True)
        listing = ", ".join(f"'{path}'" for path in files)
        connection.execute(
            f"CREATE VIEW {table} AS SELECT * FROM read_parquet([{listing}], union_by_name = true)"
        )
    return connection


def test_the_same_tables_give_the_same_bytes(tmp_path: Path) -> None:
    write_run(tmp_path, "known", units(), reps=2)
    first = build_report(connect(tmp_path), "known", prices=PRICES, resamples=500)
    second = build_report(_reversed_connection(tmp_path), "known", prices=PRICES, resamples=500)
    assert first.to_json() == second.to_json()
    assert html_report(first) == html_report(second)


def test_report_json_reads_back_and_renders_the_same(tmp_path: Path) -> None:
    write_run(tmp_path, "known", units(), reps=2)
    files = write_reports(tmp_path, "known", prices=PRICES)
    assert files.json == tmp_path / "known" / "report.json"
    loaded = read_report(tmp_path, "known")
    assert loaded == files.report
    assert loaded.to_json() == files.json.read_text(encoding="utf-8")
    # The page is report.json's numbers and the units table, read from the tables.
    page = html_report(loaded, units_page(tmp_path, "known"))
    assert page == files.html.read_text(encoding="utf-8")
    assert lessons_markdown(loaded) == files.lessons.read_text(encoding="utf-8")


def test_a_report_of_another_version_is_refused_with_the_fix(report: RunReport) -> None:
    text = report.to_json().replace(f'"version": {REPORT_VERSION}', '"version": 99')
    with pytest.raises(ReportFormatError, match=r"report version 99.*critiquebench report"):
        RunReport.from_json(text)
    with pytest.raises(ReportFormatError, match=r"x\.json: not JSON"):
        RunReport.from_json("{", source="x.json")


def test_a_run_with_no_rows_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no results for run 'nope'"):
        write_reports(tmp_path, "nope")


def test_the_judges_fences_are_stated_and_a_fallback_is_a_warning(tmp_path: Path) -> None:
    from critiquebench.analysis import report_markdown, verdict_lines

    write_run(tmp_path, "strong", units())
    strong = build_report(connect(tmp_path), "strong")
    assert strong.meta is not None and strong.meta.sandbox.startswith("bubblewrap")
    assert not any(line.startswith("WARNING") for line in verdict_lines(strong))
    fallback = "FALLBACK fences (bubblewrap unavailable): resource limits"
    write_run(tmp_path, "weak", units(), sandbox=fallback)
    weak = build_report(connect(tmp_path), "weak")
    assert any(fallback in line and "WARNING" in line for line in verdict_lines(weak))
    assert fallback in report_markdown(weak)
