"""report.html: the run report as a self-contained page (opens offline), from a RunReport."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

import jinja2
from markupsafe import Markup

from critiquebench.analysis.render import _charts
from critiquebench.analysis.render._figures import report_figures
from critiquebench.analysis.render._format import (
    cost_note,
    halt_explanation,
    inert,
    kinds_label,
    kinds_text,
    meta_line,
    pct,
    reduction_text,
    sandbox_warning,
    usd,
    verdict_sentence,
)
from critiquebench.analysis.render._trigger_table import TRIGGER_HEADERS, TRIGGER_NOTE, trigger_rows
from critiquebench.analysis.render._units_page import STORIES_PER_FILE, UNITS_FOLDER, UnitsPage
from critiquebench.analysis.render._withheld import (
    excluded_by_arm,
    excluded_summary,
    sensitivity_text,
    withheld_arms,
)
from critiquebench.analysis.report import ArmSummary, RunReport, resample_lines
from critiquebench.analysis.views import canary_text, critic_accuracy_text, fix_break_cells

_KINDS = "<kinds>"  # the run's defect groups, e.g. "tests/lint/types kept"
_HEADERS = ("arm", "n", "cases", "defects first draft", "defects kept", "95% CI",
            _KINDS, "reduction vs A", "pass", "tests pass", "p50/p90 s", "tokens in/out",
            "calls", "cost/unit",
            "cost", "paid in this run", "escal.", "verif.err", "killed")  # fmt: skip


@functools.cache
def _template() -> jinja2.Template:
    source = resources.files("critiquebench.analysis.render").joinpath("templates/report.html.j2")
    environment = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True
    )
    return environment.from_string(source.read_text(encoding="utf-8"))


def _cells(a: ArmSummary, groups: tuple[str, ...]) -> tuple[str, ...]:
    ci = a.defects_ci
    bounds = None if ci is None or ci.low is None or ci.high is None else (ci.low, ci.high)
    interval = "" if bounds is None else f"{bounds[0]:.2f} to {bounds[1]:.2f}"
    return (a.arm, str(a.n), str(a.n_cases), f"{a.mean_defects_initial:.2f}",
            f"{a.mean_defects:.2f}", interval, kinds_text(a, groups), reduction_text(a),
            pct(a.pass_rate), pct(a.tests_pass_rate),
            f"{a.p50_latency_s:.2f}/{a.p90_latency_s:.2f}",
            f"{a.mean_tokens_in:.0f}/{a.mean_tokens_out:.0f}", f"{a.mean_calls:.1f}",
            f"${a.cost_per_unit:.6f}",
            usd(a.cost_experiment), usd(a.cost_run), str(a.escalated),
            str(a.verifier_errors), str(a.findings_killed))  # fmt: skip


_ROUND_HEADERS = ("round", "units that ran it", "defects of the answer kept",
                  "defects of the latest attempt", "gain", "correct -> incorrect",
                  "pass rate of the answer kept", "mean tokens spent",
                  "failing answers fixed", "passing answers broken")  # fmt: skip


@dataclass(frozen=True)
class _ArmRounds:
    arm: str
    rows: list[tuple[str, ...]]
    note: str


def _curve_lines(report: RunReport) -> list[str]:
    lines = []
    for arm, curves in report.curves.items():
        if len(curves.kept.mean_defects) < 2:
            continue
        kept = " → ".join(f"{m:.2f}" for m in curves.kept.mean_defects)
        latest = " → ".join(f"{m:.2f}" for m in curves.latest.mean_defects)
        lines.append(f"Arm {arm}, defects by round: answer kept {kept}; latest attempt {latest}.")
    return lines


def _arm_rounds(report: RunReport) -> list[_ArmRounds]:
    """Per arm, what each round bought: the terminal's "defects by round", as a table."""
    result = []
    for arm, curves in report.curves.items():
        kept, latest = curves.kept, curves.latest
        if len(kept.mean_defects) < 2:
            result.append(_ArmRounds(arm, [], f"Arm {arm}: one draft per unit, no fix round."))
            continue
        tokens = {p.round: p for p in curves.pass_vs_tokens}
        rows: list[tuple[str, ...]] = [
            (str(r), str(kept.active[r]), f"{kept.mean_defects[r]:.2f}",
             f"{latest.mean_defects[r]:.2f}",
             "" if kept.marginal_gain[r] is None else f"{kept.marginal_gain[r]:.2f}",
             str(kept.flips[r]),
             pct(tokens[r].pass_rate) if r in tokens else "",
             f"{tokens[r].mean_tokens:,.0f}" if r in tokens else "",
             *fix_break_cells(report.fix_break, arm, r))
            for r in range(len(kept.mean_defects))
        ]  # fmt: skip
        note = (
            f"Arm {arm}: recommended max_iters {kept.recommended_max_iters} (the last round "
            f"whose gain is at least {kept.threshold_fraction:.0%} of the first draft's defects)."
        )
        result.append(_ArmRounds(arm, rows, note))
    return result


def _halts(report: RunReport) -> list[dict[str, str]]:
    return [
        {
            "counts": f"halts {a.arm}: " + ", ".join(f"{k}={v}" for k, v in a.halts.items()),
            "why": halt_explanation(a),
        }
        for a in report.arms
    ]


def _details(report: RunReport) -> list[str]:
    """What the terminal says beside the verdicts: the paired pass-rate test, caveats."""
    lines = [sandbox_warning(report)]
    for a in report.arms:
        if a.mcnemar is not None:
            m = a.mcnemar
            lines.append(
                f"Arm {a.arm}: pass rate {m.pass_rate_baseline:.0%} -> {m.pass_rate_treatment:.0%} "
                f"(McNemar exact p = {m.p_value:.3g} over cases: {m.c} improved, {m.b} worsened)."
            )
    if report.arms and not any(a.arm == "A" for a in report.arms):
        lines.append("No arm A in this run: reductions need the baseline.")
    lines.append(report.bounded_text or "")  # None unless some unit's count was bounded
    return [line for line in lines if line]


def _verdicts(report: RunReport) -> list[dict[str, str]]:
    """Each arm's verdict sentence; while units are not measured, every arm other than
    A says inconclusive and why, with its sensitivity line."""
    withheld = report.not_measured_text
    if withheld is None:
        return [
            {"css": (a.verdict or "inconclusive").replace(" ", "-"),
             "text": verdict_sentence(a, report.target), "sensitivity": ""}
            for a in report.arms
            if a.reduction is not None
        ]  # fmt: skip
    summaries = {a.arm: a for a in report.arms}
    verdicts = []
    for arm in withheld_arms(report):
        summary = summaries.get(arm)
        measured = (
            verdict_sentence(summary, report.target, measured_only=True)
            if summary is not None and summary.reduction is not None
            else f"No unit of arm {arm} was measured beside its arm A pair."
        )
        verdicts.append(
            {"css": "inconclusive", "text": f"Inconclusive: {withheld}. {measured}",
             "sensitivity": sensitivity_text(report, arm) or ""}
        )  # fmt: skip
    return verdicts


def _excluded(report: RunReport) -> list[dict[str, object]]:
    """The units not measured per arm, each with its reason made inert (and escaped by
    the template): every one, where the terminal shows the first few."""
    return [
        {"summary": excluded_summary(group),
         "units": [f"{inert(case)} (arm {group.arm}, rep {rep}): {inert(reason)}"
                   for case, rep, reason in group.units]}
        for group in excluded_by_arm(report)
    ]  # fmt: skip


_UNITS_STYLE = """
.filters { display: flex; flex-wrap: wrap; gap: 1em; align-items: center; margin: 0.5em 0; }
.units { max-height: 32em; overflow-y: auto; } tr.unit { cursor: pointer; }
tr.unit:hover, tr.unit:focus { background: #eef3fb; }
tr.flipped td:first-child { font-weight: 600; }
.story-box table { table-layout: fixed; width: 100%; } .story-box td { text-align: left;
  vertical-align: top; white-space: normal; } .story-box pre { white-space: pre-wrap;
  overflow-wrap: anywhere; margin: 0.2em 0 0.6em; font-size: 12px; }
.story-box p { font-weight: 600; margin: 0.3em 0 0; } .story-box .picked { background: #fbf8e6; }
.story-box pre.failure, .story-box pre.finding { color: #b3261e; }
"""


@functools.cache
def _units_script() -> str:
    source = resources.files("critiquebench.analysis.render").joinpath("templates/units.js")
    text = source.read_text(encoding="utf-8").replace("__FOLDER__", UNITS_FOLDER)
    return text.replace("__PER_FILE__", str(STORIES_PER_FILE))


def _units(page: UnitsPage | None) -> dict[str, object] | None:
    """What the template's units section needs, or None for a page without it."""
    if page is None or not page.rows:
        return None
    return {
        "count": len(page.rows),
        "folder": UNITS_FOLDER,
        "arms": sorted({row.arm for row in page.rows}),
        "halts": sorted({row.halt for row in page.rows}),
        "flipped": sum(row.flipped for row in page.rows),
        "rows_json": Markup(page.rows_json()),
        "script": Markup(_units_script()),
    }


def html_report(report: RunReport, units: UnitsPage | None = None) -> str:
    """The page of ``report``, with the units table of ``units`` when given (its stories
    are written beside the page: see ``write_units_page``); the same input gives the
    same bytes."""
    figures = report_figures(report)
    verdicts = _verdicts(report)
    section = _units(units)
    notes = [
        "n = units counted, cases = distinct cases; defects kept = mean defects of the answer "
        "the loop returned, with a 95% CI from a bootstrap over cases. Reduction = "
        "(mean_A - mean_X) / mean_A over pairs of the same case and rep; its CI resamples "
        "cases, a case's reps moving together. Latency is the unit's time with cached calls "
        "at their original latency. Pass = the answer kept has no measured defect of any "
        "kind (tests, lint, types, ...); tests pass = it passes every check, lint and type "
        "findings not counted.",
        report.not_compared_text or "",
        cost_note(report),
        *_curve_lines(report),
    ]
    return _template().render(
        title=f"critiquebench run {report.run_id}",
        meta=meta_line(report),
        headline=report.headline or "",
        target=pct(report.target),
        verdicts=verdicts,
        headers=[f"{kinds_label(report)} kept" if h == _KINDS else h for h in _HEADERS],
        rows=[_cells(a, report.defect_groups) for a in report.arms],
        trigger_headers=TRIGGER_HEADERS,
        trigger_rows=trigger_rows(report),
        trigger_note=TRIGGER_NOTE,
        notes=[note for note in notes if note],
        details=[
            *_details(report),
            *resample_lines(report.against_resample),
            *filter(None, [canary_text(report.canaries)]),
            *filter(None, [critic_accuracy_text(report.critic_accuracy)]),
        ],
        rounds=_arm_rounds(report),
        round_headers=_ROUND_HEADERS,
        halts=_halts(report),
        figures=figures,
        escalations=report.escalations,
        excluded=_excluded(report),
        missing_unnamed=report.missing_unnamed,
        rows_missing=bool(report.missing_units or report.missing_unnamed),
        units=section,
        style=Markup(_charts.PAGE_STYLE + (_UNITS_STYLE if section is not None else "")),
        bundle=Markup(_charts.vega_bundle()),
        # embed_script escapes "<" in the data, so no value can close the script tag.
        embed=Markup(_charts.embed_script([figure.spec for figure in figures])),
    )
