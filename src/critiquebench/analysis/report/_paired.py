"""Paired comparison of two runs: the same units (case, arm, rep) in both, differenced.

Each unit of run B is set against the same unit of run A, so a case's difficulty
cancels out. The mean difference in defects and in pass rate gets the report's
case-clustered BCa bootstrap interval (``cluster_bootstrap_mean`` over the pairs'
differences, a case's reps moving together), and McNemar's test counts cases, not
pairs (``clustered_mcnemar``). Runs of different suites or case sets are refused
with the reason, unless the caller asks for the units they have in common.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from critiquebench.analysis.report._cost import PriceTable, call_cost
from critiquebench.analysis.stats import (
    McNemarResult,
    MeanEstimate,
    cluster_bootstrap_mean,
    clustered_mcnemar,
)

Key = tuple[str, str, int]  # case, arm, rep


class PairingRefused(ValueError):
    """The two runs cannot be paired as asked; the message says why and what to do."""


@dataclass(frozen=True)
class UnitValues:
    """What one unit of one run measured and cost."""

    defects: float
    passed: bool
    latency_s: float
    tokens: int
    calls: int
    cost: float


@dataclass(frozen=True)
class PairedArm:
    """One arm's paired numbers: run A, run B, and B minus A."""

    arm: str
    pairs: int
    cases: int
    defects: tuple[float, float]
    defects_difference: MeanEstimate
    pass_rate: tuple[float, float]
    pass_difference: MeanEstimate
    mcnemar: McNemarResult
    flipped: tuple[tuple[str, str], ...]
    """(case, "A->B: passed -> failed" style text) for cases whose reps passed differently."""
    tokens: tuple[float, float]
    calls: tuple[float, float]
    cost: tuple[float, float]
    latency_p50: tuple[float, float]
    latency_p90: tuple[float, float]


@dataclass(frozen=True)
class PairedComparison:
    """Two runs paired unit by unit, arm by arm."""

    run_a: str
    run_b: str
    arms: tuple[PairedArm, ...]
    left_out: int = 0
    """Pairs dropped because a unit of either run has an infrastructure error."""
    intersected: str | None = None
    """What --intersect dropped (None: the runs had the same units)."""
    unpaired_arms: tuple[str, ...] = field(default_factory=tuple)


def _suite_of(connection: duckdb.DuckDBPyConnection, run: str) -> tuple[str, str | None]:
    row = connection.execute(
        "SELECT suite, content_json FROM runs WHERE run_id = ? "
        "ORDER BY invocation_started_at LIMIT 1",
        [run],
    ).fetchone()
    if row is None:
        raise PairingRefused(f"no run {run!r}: it has no runs row")
    digest = None
    if row[1]:
        digest = json.loads(row[1]).get("suite", {}).get("sha256")
    return str(row[0]), digest


def _units(
    connection: duckdb.DuckDBPyConnection, run: str, prices: PriceTable | None
) -> tuple[dict[Key, UnitValues], set[Key]]:
    costs: dict[Key, float] = defaultdict(float)
    if prices is not None:
        for case_id, arm, rep, model, tokens_in, tokens_out in connection.execute(
            "SELECT case_id, arm, rep, model, sum(experiment_tokens_in), "
            "sum(experiment_tokens_out) FROM calls WHERE run_id = ? GROUP BY ALL",
            [run],
        ).fetchall():
            costs[(case_id, arm, rep)] += call_cost(model, int(tokens_in), int(tokens_out), prices)
    found: dict[Key, UnitValues] = {}
    errored: set[Key] = set()
    for case_id, arm, rep, defects, passed, latency, tokens, calls, error in connection.execute(
        "SELECT case_id, arm, rep, coalesce(defects_total_final, defects_final), passed, "
        "latency_s, tokens_in + tokens_out, calls, error FROM cases WHERE run_id = ?",
        [run],
    ).fetchall():
        key = (case_id, arm, int(rep))
        if error is not None:
            errored.add(key)
            continue
        found[key] = UnitValues(
            float(defects), bool(passed), float(latency), int(tokens), int(calls), costs[key]
        )
    return found, errored


def _listing(items: set[str], limit: int = 5) -> str:
    shown = sorted(items)[:limit]
    return ", ".join(shown) + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _check_same(
    run_a: str,
    run_b: str,
    suites: tuple[tuple[str, str | None], tuple[str, str | None]],
    keys: tuple[set[Key], set[Key]],
) -> str | None:
    """Why the runs cannot be paired as they are (None: they can)."""
    (suite_a, digest_a), (suite_b, digest_b) = suites
    if suite_a != suite_b:
        return f"their suites differ: {run_a} ran {suite_a!r}, {run_b} ran {suite_b!r}"
    if digest_a and digest_b and digest_a != digest_b:
        return (
            f"suite {suite_a!r} changed between them (SHA-256 {digest_a[:12]} in {run_a}, "
            f"{digest_b[:12]} in {run_b})"
        )
    cases_a = {key[0] for key in keys[0]}
    cases_b = {key[0] for key in keys[1]}
    if cases_a != cases_b:
        parts = []
        if cases_a - cases_b:
            parts.append(f"only {run_a} has {_listing(cases_a - cases_b)}")
        if cases_b - cases_a:
            parts.append(f"only {run_b} has {_listing(cases_b - cases_a)}")
        return "their case sets differ: " + "; ".join(parts)
    arms = {key[1] for key in keys[0]} & {key[1] for key in keys[1]}
    mine_a = {key for key in keys[0] if key[1] in arms}
    mine_b = {key for key in keys[1] if key[1] in arms}
    if mine_a != mine_b:
        odd = {f"{c} arm {a} rep {r}" for c, a, r in mine_a ^ mine_b}
        return f"their units differ (reps): {_listing(odd)} is in one run only"
    return None


def _quantile(values: list[float], q: float) -> float:
    return float(np.quantile(values, q)) if values else 0.0


def _flip_text(run_a: str, run_b: str, passed_a: int, passed_b: int, reps: int) -> str:
    def state(passed: int) -> str:
        return "passed" if passed == reps else ("failed" if passed == 0 else f"{passed}/{reps}")

    return f"{run_a}: {state(passed_a)} -> {run_b}: {state(passed_b)}"


def _paired_arm(
    arm: str,
    keys: list[Key],
    a: Mapping[Key, UnitValues],
    b: Mapping[Key, UnitValues],
    names: tuple[str, str],
    resamples: int,
    seed: int,
) -> PairedArm:
    by_case: dict[str, list[Key]] = defaultdict(list)
    for key in sorted(keys):
        by_case[key[0]].append(key)
    cases = sorted(by_case)
    defect_diffs = [[b[k].defects - a[k].defects for k in by_case[c]] for c in cases]
    pass_diffs = [[float(b[k].passed) - float(a[k].passed) for k in by_case[c]] for c in cases]
    passes_a = [[a[k].passed for k in by_case[c]] for c in cases]
    passes_b = [[b[k].passed for k in by_case[c]] for c in cases]
    flipped = tuple(
        (case, _flip_text(*names, sum(pa), sum(pb), len(pa)))
        for case, pa, pb in zip(cases, passes_a, passes_b, strict=True)
        if sum(pa) != sum(pb)
    )

    def mean(side: Mapping[Key, UnitValues], attribute: str) -> float:
        return float(np.mean([getattr(side[k], attribute) for k in keys]))

    def both(attribute: str) -> tuple[float, float]:
        return mean(a, attribute), mean(b, attribute)

    latencies = ([a[k].latency_s for k in keys], [b[k].latency_s for k in keys])
    return PairedArm(
        arm=arm,
        pairs=len(keys),
        cases=len(cases),
        defects=both("defects"),
        defects_difference=cluster_bootstrap_mean(defect_diffs, resamples=resamples, seed=seed),
        pass_rate=both("passed"),
        pass_difference=cluster_bootstrap_mean(pass_diffs, resamples=resamples, seed=seed),
        mcnemar=clustered_mcnemar(passes_a, passes_b),
        flipped=flipped,
        tokens=both("tokens"),
        calls=both("calls"),
        cost=(sum(a[k].cost for k in keys), sum(b[k].cost for k in keys)),
        latency_p50=(_quantile(latencies[0], 0.5), _quantile(latencies[1], 0.5)),
        latency_p90=(_quantile(latencies[0], 0.9), _quantile(latencies[1], 0.9)),
    )


def paired_comparison(
    connection: duckdb.DuckDBPyConnection,
    run_a: str,
    run_b: str,
    *,
    prices: Mapping[str, PriceTable | None] | None = None,
    intersect: bool = False,
    resamples: int = 10_000,
    seed: int = 0,
) -> PairedComparison:
    """Pair the units of ``run_b`` with those of ``run_a`` (tables ``runs``, ``cases``,
    ``calls`` of both in ``connection``) and difference them arm by arm (B minus A).

    Raises :class:`PairingRefused` when the runs' suites, case sets or units differ,
    unless ``intersect``: then only the units both runs have are paired (a changed
    suite is refused even so: the same case id may ask something else).
    """
    prices = prices or {}
    suites = (_suite_of(connection, run_a), _suite_of(connection, run_b))
    units_a, errored_a = _units(connection, run_a, prices.get(run_a))
    units_b, errored_b = _units(connection, run_b, prices.get(run_b))
    keys = (set(units_a) | errored_a, set(units_b) | errored_b)
    problem = _check_same(run_a, run_b, suites, keys)
    intersected = None
    if problem is not None:
        if not intersect or suites[0] != suites[1]:
            hint = "" if intersect else "; --intersect pairs the units both runs have"
            raise PairingRefused(f"cannot pair {run_a} with {run_b}: {problem}{hint}")
        intersected = problem
    common = keys[0] & keys[1]
    usable = [key for key in common if key in units_a and key in units_b]
    arms_a, arms_b = {k[1] for k in keys[0]}, {k[1] for k in keys[1]}
    arms = []
    for arm in sorted(arms_a & arms_b):
        mine = [key for key in usable if key[1] == arm]
        if mine:
            arms.append(_paired_arm(arm, mine, units_a, units_b, (run_a, run_b), resamples, seed))
    if not arms:
        raise PairingRefused(f"{run_a} and {run_b} have no measured unit in common")
    return PairedComparison(
        run_a=run_a,
        run_b=run_b,
        arms=tuple(arms),
        left_out=len(common) - len(usable),
        intersected=intersected,
        unpaired_arms=tuple(sorted(arms_a ^ arms_b)),
    )


def _interval(estimate: MeanEstimate, scale: float = 1.0, unit: str = "") -> str:
    if estimate.mean is None:
        return "-"
    text = f"{estimate.mean * scale:+.2f}{unit}"
    if estimate.low is not None and estimate.high is not None:
        text += f" [{estimate.low * scale:+.2f}{unit}, {estimate.high * scale:+.2f}{unit}]"
    return text + (f" ({estimate.note})" if estimate.note else "")


def _row(name: str, values: tuple[float, float], digits: int = 2, prefix: str = "") -> list[str]:
    a, b = values
    return [name, f"{prefix}{a:.{digits}f}", f"{prefix}{b:.{digits}f}", f"{b - a:+.{digits}f}"]


def paired_table(comparison: PairedComparison) -> RenderableType:
    """The paired comparison as a terminal table and the flipped cases per arm."""
    a, b = comparison.run_a, comparison.run_b
    table = Table(title=Text(f"paired: {b} minus {a}, unit by unit"), title_justify="left")
    for header in ("arm", "metric", a, b, f"{b} - {a} [95% CI]"):
        table.add_column(Text(header), overflow="fold")
    for arm in comparison.arms:
        test = arm.mcnemar
        rows = [
            [
                "mean defects",
                f"{arm.defects[0]:.2f}",
                f"{arm.defects[1]:.2f}",
                _interval(arm.defects_difference),
            ],
            [
                "pass rate",
                f"{arm.pass_rate[0]:.0%}",
                f"{arm.pass_rate[1]:.0%}",
                _interval(arm.pass_difference, 100, " pt"),
            ],
            [
                "McNemar over cases",
                f"{test.b} case(s) better",
                f"{test.c} case(s) better",
                f"p = {test.p_value:.3g}",
            ],
            _row("tokens per unit", arm.tokens, 0),
            _row("calls per unit", arm.calls, 2),
            _row("cost $ (experiment)", arm.cost, 4),
            _row("p50 latency s", arm.latency_p50, 1),
            _row("p90 latency s", arm.latency_p90, 1),
        ]
        for index, row in enumerate(rows):
            label = f"{arm.arm} ({arm.pairs} pairs, {arm.cases} cases)" if index == 0 else ""
            table.add_row(Text(label), *(Text(cell) for cell in row))
    lines: list[RenderableType] = [table]
    for arm in comparison.arms:
        if arm.flipped:
            lines.append(Text(f"arm {arm.arm}: {len(arm.flipped)} case(s) flipped", style="bold"))
            lines.extend(Text(f"  {case}: {text}") for case, text in arm.flipped)
        else:
            lines.append(Text(f"arm {arm.arm}: no case flipped"))
    if comparison.left_out:
        lines.append(
            Text(f"{comparison.left_out} pair(s) left out: a unit had an infrastructure error")
        )
    if comparison.intersected:
        lines.append(Text(f"--intersect: paired the common units only ({comparison.intersected})"))
    if comparison.unpaired_arms:
        lines.append(Text(f"arms in one run only: {', '.join(comparison.unpaired_arms)}"))
    return Group(*lines)


def comparison_json(comparison: PairedComparison) -> dict[str, Any]:
    """The comparison as plain JSON values."""

    def estimate(value: MeanEstimate) -> dict[str, Any]:
        return {"mean": value.mean, "low": value.low, "high": value.high, "note": value.note}

    return {
        "run_a": comparison.run_a,
        "run_b": comparison.run_b,
        "left_out": comparison.left_out,
        "intersected": comparison.intersected,
        "arms": [
            {
                "arm": arm.arm,
                "pairs": arm.pairs,
                "cases": arm.cases,
                "defects": list(arm.defects),
                "defects_difference": estimate(arm.defects_difference),
                "pass_rate": list(arm.pass_rate),
                "pass_difference": estimate(arm.pass_difference),
                "mcnemar_p": arm.mcnemar.p_value,
                "flipped": [list(item) for item in arm.flipped],
            }
            for arm in comparison.arms
        ],
    }
