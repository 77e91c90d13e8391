"""Wording and number formats shared by every rendering of a run report."""

from __future__ import annotations

from critiquebench.analysis.report import ArmSummary, RunReport
from critiquebench.judges import inert_text, is_full_sandbox, markdown_code_span

_INERT_LIMIT = 500


def inert(text: str, limit: int = _INERT_LIMIT) -> str:
    """``text`` (e.g. an error message quoting a candidate) safe to print on one line:
    the judges' :func:`~critiquebench.judges.inert_text`, cut to ``limit`` characters."""
    return inert_text(text, limit=limit)


def markdown_code(text: str) -> str:
    """``text`` made inert as a Markdown code span that nothing inside it can close."""
    return markdown_code_span(text, limit=_INERT_LIMIT)


def pct(value: float | None) -> str:
    """A fraction as a whole percentage; ``n/a`` when undefined."""
    return "n/a" if value is None else f"{value:.0%}"


def usd(value: float) -> str:
    """A cost in US dollars, to the hundredth of a cent."""
    return f"${value:.4f}"


def reduction_text(summary: ArmSummary) -> str:
    """``53% [15%, 88%]``, ``baseline`` for arm A, ``n/a`` when undefined."""
    if summary.arm == "A":
        return "baseline"
    estimate = summary.reduction
    if estimate is None or estimate.estimate is None:
        return "n/a"
    if estimate.low is None or estimate.high is None:
        return pct(estimate.estimate)
    return f"{pct(estimate.estimate)} [{pct(estimate.low)}, {pct(estimate.high)}]"


def defects_text(summary: ArmSummary) -> str:
    """Mean defects of the answer kept with its interval: ``1.42 [0.80, 2.10]``."""
    ci = summary.defects_ci
    if ci is None or ci.low is None or ci.high is None:
        return f"{summary.mean_defects:.2f}"
    return f"{summary.mean_defects:.2f} [{ci.low:.2f}, {ci.high:.2f}]"


def kinds_label(report: RunReport) -> str:
    """The header of the per-group means: the run's defect groups, e.g. ``tests/lint/types``."""
    return "/".join(report.defect_groups) or "kinds"


def kinds_text(summary: ArmSummary, groups: tuple[str, ...]) -> str:
    """Mean defects of the kept answers per group, in ``groups`` order: ``0.50/1.00/0.00``."""
    means = summary.defects_by_group
    return "/".join(f"{means.get(group, 0.0):.2f}" for group in groups) or "-"


def verdict_sentence(summary: ArmSummary, target: float, *, measured_only: bool = False) -> str:
    """The acceptance verdict of one arm in plain words; empty for an arm without one.

    ``measured_only``: the reduction alone, said to be of the measured units, without a
    verdict (the run has units not measured, so its verdict is inconclusive anyway).
    """
    estimate = summary.reduction
    if estimate is None:
        return ""
    said = f"arm {summary.arm} reduces defects by {pct(estimate.estimate)} "
    said += f"({estimate.confidence:.0%} CI {pct(estimate.low)} to {pct(estimate.high)}, "
    said += f"{estimate.n_cases} cases, {estimate.n_pairs} pairs)"
    if measured_only:
        note = f" Note: {estimate.note}." if estimate.note else ""
        return f"On the measured units alone, {said}.{note}"
    verdict = summary.verdict or "inconclusive"
    if summary.verdict_reason:
        return f"{verdict.capitalize()}: {said}; {summary.verdict_reason}." + (
            f" Note: {estimate.note}." if estimate.note else ""
        )
    said = {
        "met": f"Met: {said}; the whole interval is at or above the {target:.0%} target.",
        "not met": f"Not met: {said}; the whole interval is below the {target:.0%} target.",
    }.get(
        verdict,
        f"Inconclusive: {said}; the interval does not settle the {target:.0%} target either "
        "way, so more cases or reps are needed.",
    )
    return said + (f" Note: {estimate.note}." if estimate.note else "")


def meta_line(report: RunReport) -> str:
    """The run's settings and state in one line; empty when the runs row is missing."""
    m = report.meta
    if m is None:
        return ""
    line = (
        f"suite {m.suite}, model {m.model}, arms {m.arms}, reps {m.reps}, "
        f"retry limit {m.retry_limit}, feedback {m.feedback}; status {m.status}, "
        f"started {m.started_at}"
    )
    if m.finished_at:
        line += f", finished {m.finished_at}"
    if m.units_landed < m.units_planned:
        line += f"; {m.units_planned - m.units_landed} of {m.units_planned} units have no rows"
    if m.sandbox:
        line += f". Judge: {m.sandbox}"
    return line


def sandbox_warning(report: RunReport) -> str:
    """A warning when the judge ran without its full sandbox; empty otherwise."""
    sandbox = report.meta.sandbox if report.meta else ""
    if not sandbox or is_full_sandbox(sandbox):
        return ""
    return f"WARNING: the judge ran without bubblewrap. {sandbox}"


def cost_note(report: RunReport) -> str:
    """What the cost columns mean, and what this run paid."""
    cost = report.cost
    if cost is None:
        return ""
    note = (
        "Cost = the experiment's cost: every call priced at its original tokens, cache hits "
        f"included (prices: {cost.prices_source}). Paid in this run: {usd(cost.paid)} "
        f"({cost.cached_calls} of {cost.calls} calls answered from the cache)."
    )
    if cost.unknown_models:
        note += f" Not in the price table, so priced at 0: {', '.join(cost.unknown_models)}."
    return note


_SUCCESS_HALTS = ("visible_clean", "critic_ok")

PASS_MEANING = "no measured defect of any kind"
"""What "pass" means in every output: the answer kept has no measured defect of any
kind (tests, lint, types, and every other kind its judge measures)."""


def halt_explanation(summary: ArmSummary) -> str:
    """Why an arm's ``visible_clean`` halts and its pass rate can differ, in its own numbers.

    Both count units (case x rep). A halt says why the loop stopped: ``visible_clean``
    / ``critic_ok`` when what the loop was shown (feedback checks, lint, types; or the
    critic) was clean. The pass rate is the share of units whose answer kept has no
    measured defect of any kind, the held-out checks the loop never saw included.
    """
    n = summary.n
    passed = (
        f"{summary.units_passed} of {n} units pass ({PASS_MEANING}: {pct(summary.pass_rate)}; "
        f"tests pass rate {pct(summary.tests_pass_rate)})"
    )
    green = sum(summary.halts.get(reason, 0) for reason in _SUCCESS_HALTS)
    if set(summary.halts) == {"single_draft"}:
        return f"arm {summary.arm} makes one draft per unit (single_draft); {passed}."
    said = (
        f"arm {summary.arm}: {green} of {n} units stopped because what the loop was shown "
        f"(feedback checks or critic) was clean; {passed}, held-out checks included"
    )
    if summary.green_but_failed:
        said += (
            f"; {summary.green_but_failed} unit(s) stopped clean yet have defects the loop "
            "was not shown"
        )
    unclean = summary.units_passed - (green - summary.green_but_failed)
    if unclean > 0:
        said += (
            f"; {unclean} unit(s) pass although the loop stopped for another "
            "reason (e.g. a critic that kept objecting)"
        )
    return said + "."
