"""The run report, computed once: SQL over one DuckDB connection, then the statistics.

:func:`build_report` is the only place a number of a report is computed; the
terminal, Markdown, HTML, lessons, Prefect artifacts and the notebook render the
:class:`RunReport` it returns (or the ``report.json`` written from it).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from critiquebench.analysis.report import _report_rows as parts
from critiquebench.analysis.report import _report_sql as sql
from critiquebench.analysis.report._cost import (
    CallColumns,
    CostSummary,
    PriceTable,
    cost_per_defect_removed,
    cost_summary,
    summarize_calls,
)
from critiquebench.analysis.report._cost_curve import cost_curve
from critiquebench.analysis.report._report_rows import ByCase, GroupMeans, Paired
from critiquebench.analysis.report._report_types import (
    FAILURE_RULE,
    ArmSensitivity,
    ArmSummary,
    FailedUnit,
    RunCost,
    RunMeta,
    RunReport,
    Statistics,
    withhold_verdicts,
)
from critiquebench.analysis.report._resample import MATCHED, resample_comparisons
from critiquebench.analysis.report._trigger_metrics import trigger_metrics
from critiquebench.analysis.report._unmeasured import Unmeasured, fill_matrix
from critiquebench.analysis.stats import (
    MIN_CASES,
    McNemarResult,
    MeanEstimate,
    ReductionEstimate,
    cluster_bootstrap_mean,
    cluster_bootstrap_reduction,
    clustered_mcnemar,
    decide_acceptance,
)
from critiquebench.analysis.views import (
    CANARIES,
    CRITIC_ACCURACY,
    FIX_BREAK,
    canary_rates,
    critic_accuracy,
    fix_break_rounds,
    ordinary_rows,
)
from critiquebench.loop import describe_arms
from critiquebench.runtime.project import DEFAULT_TARGET

CONFIDENCE = 0.95
SEED = 0
# Said in report.json so a reader knows what the intervals are; keep it true to _statistics.
_METHOD = (
    "cluster bootstrap over cases (a case's reps move together), for mean defects and "
    f"the reduction vs A; a verdict needs at least {MIN_CASES} cases; McNemar on cases "
    "(one sign per case, from the share of its reps that passed: no measured defect of any "
    "kind); every per-arm number covers the (case, rep) pairs every arm measured"
)


@dataclass(frozen=True)
class _ArmStatistics:
    defects_ci: MeanEstimate
    reduction: ReductionEstimate | None = None
    verdict: str | None = None
    verdict_reason: str | None = None
    mcnemar: McNemarResult | None = None


def build_report(
    connection: duckdb.DuckDBPyConnection,
    run_id: str,
    *,
    prices: PriceTable | None = None,
    target: float = DEFAULT_TARGET,
    resamples: int = 10_000,
) -> RunReport:
    """Compute the whole report of one run from the DuckDB views.

    Units that failed for infrastructure reasons (``cases.error`` set) are left out
    of every number and listed in ``failed_units``; planned units without rows are
    listed in ``missing_units`` (or counted in ``missing_unnamed``). While any unit is
    not measured, every verdict is "inconclusive" (``N units not measured``) and
    ``sensitivity`` holds each arm with those units counted as failures of their arm.
    A run with no rows gives a report with no arms.
    """
    prices = prices or PriceTable({}, source="none given")
    params = {"run_id": run_id}
    cheating = canary_rates(connection.execute(CANARIES, params).fetchall())
    connection = ordinary_rows(connection)  # canaries count in the cheating rate alone
    try:
        critics = critic_accuracy(connection.execute(CRITIC_ACCURACY, params).fetchall())
        report = _build(connection, run_id, params, prices, target, resamples)
    finally:
        connection.close()
    return dataclasses.replace(report, canaries=cheating, critic_accuracy=critics)


def _build(
    connection: duckdb.DuckDBPyConnection,
    run_id: str,
    params: dict[str, str],
    prices: PriceTable,
    target: float,
    resamples: int,
) -> RunReport:

    def rows(query: str) -> list[tuple[Any, ...]]:
        # fetchall, not fetchone: DuckDB 2 refuses a new query while a result is unfinished.
        return connection.execute(query, params).fetchall()

    costs, total = _costs(connection, params, prices)
    rounds = parts.arm_rounds(connection.sql(sql.ROUNDS, params=params).to_arrow_table())
    statistics = _statistics(
        parts.defects_by_case(rows(sql.DEFECTS_BY_CASE)),
        parts.pairs_by_case(rows(sql.PAIRS_BY_CASE)),
        target=target,
        resamples=resamples,
    )
    halts: dict[str, dict[str, int]] = {}
    for arm, reason, units in rows(sql.HALTS):
        halts.setdefault(arm, {})[reason] = int(units)
    failed = parts.failed_units(rows(sql.FAILED))
    groups = parts.group_means(rows(sql.DEFECT_GROUPS))
    arms = _arms(connection, params, costs, statistics, halts, failed, _descriptions(rows))
    left_out = {str(arm): int(units) for arm, units in rows(sql.NOT_COMPARED)}
    arms = tuple(
        dataclasses.replace(arm, units_not_compared=left_out.get(arm.arm, 0)) for arm in arms
    )
    meta = parts.meta(rows(sql.META))
    unmeasured = _unmeasured(rows, meta)
    report = RunReport(
        run_id=run_id,
        target=target,
        arms=tuple(_with_groups(arm, groups) for arm in arms),
        curves=parts.curves(rounds),
        meta=meta,
        cost=RunCost(
            experiment=total.experiment_cost,
            paid=total.run_cost,
            calls=total.n_calls,
            cached_calls=total.n_cached,
            prices_source=prices.source,
            unknown_models=total.unknown_models,
        ),
        statistics=Statistics(
            method=_METHOD, resamples=resamples, seed=SEED, confidence=CONFIDENCE
        ),
        escalations=parts.escalations(rows(sql.ESCALATED)),
        failed_units=failed,
        missing_units=unmeasured.missing,
        missing_unnamed=unmeasured.unnamed,
        failure_kinds=parts.failure_kinds(rows(sql.FAILURE_KINDS)),
        regressions=parts.regressions(rows(sql.REGRESSIONS)),
        defect_groups=groups.groups,
        triggers=trigger_metrics(rows(sql.TRIGGERS)),
        fix_break=fix_break_rounds(rows(FIX_BREAK)),
        against_resample=resample_comparisons(
            rows(MATCHED), resamples=resamples, seed=SEED, confidence=CONFIDENCE
        ),
        cost_curve=cost_curve(rounds, resamples=resamples, seed=SEED, confidence=CONFIDENCE),
    )
    if not report.unmeasured:
        return report
    return withhold_verdicts(
        dataclasses.replace(
            report,
            sensitivity=_sensitivity(unmeasured, resamples=resamples),
            statistics=dataclasses.replace(report.statistics, failure_rule=FAILURE_RULE)
            if report.statistics
            else None,
        )
    )


def _unmeasured(rows: Callable[[str], list[tuple[Any, ...]]], meta: RunMeta | None) -> Unmeasured:
    """The units not measured and, when there are any, the matrix filled with them.

    A run whose every planned unit has a row without an error has nothing to fill, and
    its matrix is never read (``_sensitivity`` is for runs with units not measured):
    it is not built, which spares a row and an object per unit of the run.
    """
    ((landed, errors),) = rows(sql.LANDED)
    if not errors and (meta is None or landed >= meta.units_planned):
        return Unmeasured(missing=(), unnamed=0, arms={})
    return fill_matrix(rows(sql.UNITS), lambda: rows(sql.FAILURE_DEFECTS), meta)


def with_run_state(connection: duckdb.DuckDBPyConnection, report: RunReport) -> RunReport:
    """``report`` with its ``meta`` (the run's status, end, starts) read again from the
    ``runs`` table: the only part of a report that a new ``runs`` row of the same
    start changes, as ``finish_run`` writes one after the data-quality check."""
    found = connection.execute(sql.META, {"run_id": report.run_id}).fetchall()
    return dataclasses.replace(report, meta=parts.meta(found))


def _with_groups(arm: ArmSummary, groups: GroupMeans) -> ArmSummary:
    return dataclasses.replace(
        arm,
        defects_by_group=groups.kept.get(arm.arm, {}),
        defects_initial_by_group=groups.initial.get(arm.arm, {}),
    )


def _statistics(
    defects_by_case: dict[str, ByCase],
    pairs: dict[str, Paired],
    *,
    target: float,
    resamples: int,
) -> dict[str, _ArmStatistics]:
    """Every statistic of the report, from per-case lists; with ``_sensitivity``, the
    only caller of ``_stats``.

    Inner lists are one case's reps in rep order, cases in case order, so a bootstrap
    that resamples cases (the unit of sampling) can be pointed here in one place
    (and in ``_sensitivity``, which runs the same bootstrap on the filled matrix).
    """

    def mean_ci(by_case: ByCase) -> MeanEstimate:
        return cluster_bootstrap_mean(
            by_case, resamples=resamples, seed=SEED, confidence=CONFIDENCE
        )

    result: dict[str, _ArmStatistics] = {}
    for arm, by_case in defects_by_case.items():
        paired = pairs.get(arm)
        if paired is None:
            result[arm] = _ArmStatistics(mean_ci(by_case))
            continue
        estimate = cluster_bootstrap_reduction(
            paired.baseline,
            paired.treatment,
            resamples=resamples,
            seed=SEED,
            confidence=CONFIDENCE,
        )
        decision = decide_acceptance(estimate, target)
        result[arm] = _ArmStatistics(
            mean_ci(by_case),
            estimate,
            decision.verdict,
            decision.reason,
            clustered_mcnemar(paired.baseline_passed, paired.treatment_passed),
        )
    return result


def _sensitivity(unmeasured: Unmeasured, *, resamples: int) -> tuple[ArmSensitivity, ...]:
    """Each planned arm with its units not measured counted as failures; the reduction
    from the same case bootstrap as the measured one, over every planned pair."""
    baseline = unmeasured.arms.get("A")
    result = []
    for arm, matrix in unmeasured.arms.items():
        units = sum(len(reps) for reps in matrix.defects)
        reduction = None
        if baseline is not None and arm != "A":
            reduction = cluster_bootstrap_reduction(
                baseline.defects,
                matrix.defects,
                resamples=resamples,
                seed=SEED,
                confidence=CONFIDENCE,
            )
        result.append(
            ArmSensitivity(
                arm=arm,
                errors=matrix.errors,
                missing=matrix.missing,
                n=units,
                mean_defects=sum(map(sum, matrix.defects)) / units if units else 0.0,
                pass_rate=sum(map(sum, matrix.passed)) / units if units else 0.0,
                reduction=reduction,
            )
        )
    return tuple(result)


def _costs(
    connection: duckdb.DuckDBPyConnection, params: dict[str, str], prices: PriceTable
) -> tuple[dict[str, CostSummary], CostSummary]:
    """Each arm's cost and the run's, from the calls as columns (``summarize_calls``)."""
    # Original tokens for every call: a cache hit costs what the call cost when made.
    data = connection.sql(sql.CALLS, params=params).to_arrow_table()
    models = _codes(data.column("model"))
    arms = _codes(data.column("arm"))
    calls = CallColumns(
        model_names=models.names,
        models=models.codes,
        tokens_in=data.column("experiment_tokens_in").to_numpy(),
        tokens_out=data.column("experiment_tokens_out").to_numpy(),
        cached=pc.fill_null(data.column("cached"), False).to_numpy().astype(bool),
    )
    # The rows come ordered by arm, so the arms' names are in that order too.
    by_arm = {
        name: summarize_calls(calls.take(arms.codes == index), prices)
        for index, name in enumerate(arms.names)
    }
    return by_arm, summarize_calls(calls, prices)


@dataclass(frozen=True)
class _Coded:
    names: tuple[str, ...]
    codes: np.ndarray


def _codes(column: pa.ChunkedArray) -> _Coded:
    """A text column as its distinct values (in order of first appearance) and, per
    row, the index of its value: a few bytes a row instead of a string."""
    encoded = column.combine_chunks().dictionary_encode()
    return _Coded(
        names=tuple(str(name) for name in encoded.dictionary.to_pylist()),
        codes=encoded.indices.to_numpy(zero_copy_only=False),
    )


def _arms(
    connection: duckdb.DuckDBPyConnection,
    params: dict[str, str],
    summaries: dict[str, CostSummary],
    statistics: dict[str, _ArmStatistics],
    halts: dict[str, dict[str, int]],
    failed: tuple[FailedUnit, ...],
    descriptions: dict[str, str],
) -> tuple[ArmSummary, ...]:
    cursor = connection.execute(sql.PER_ARM, params)
    names = [column[0] for column in cursor.description]
    per_arm = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
    empty = cost_summary([])
    baseline = next((row for row in per_arm if row["arm"] == "A"), None)
    arms = []
    for row in per_arm:
        arm, n = str(row["arm"]), int(row["n"])
        cost = summaries.get(arm, empty)
        stats = statistics[arm]
        arms.append(
            ArmSummary(
                arm=arm,
                n=n,
                n_cases=int(row["n_cases"]),
                mean_defects_initial=float(row["mean_defects_initial"]),
                mean_defects=float(row["mean_defects"]),
                defects_ci=stats.defects_ci,
                pass_rate=float(row["pass_rate"]),
                tests_pass_rate=float(row["tests_pass_rate"]),
                p50_latency_s=float(row["p50_latency_s"]),
                p90_latency_s=float(row["p90_latency_s"]),
                mean_tokens_in=float(row["mean_tokens_in"]),
                mean_tokens_out=float(row["mean_tokens_out"]),
                mean_calls=float(row["mean_calls"]),
                mean_loops=float(row["mean_loops"]),
                escalated=int(row["escalated"] or 0),
                units_passed=int(row["units_passed"] or 0),
                green_but_failed=int(row["green_but_failed"] or 0),
                infra_errors=sum(1 for unit in failed if unit.arm == arm),
                verifier_errors=int(row["verifier_errors"] or 0),
                findings_killed=int(row["findings_killed"] or 0),
                halts=halts.get(arm, {}),
                reduction=stats.reduction,
                verdict=stats.verdict,
                mcnemar=stats.mcnemar,
                verdict_reason=stats.verdict_reason,
                calls=cost.n_calls,
                cached_calls=cost.n_cached,
                cost_run=cost.run_cost,
                cost_experiment=cost.experiment_cost,
                cost_per_defect_removed=_per_defect(baseline, row, summaries, cost),
                description=descriptions.get(arm, ""),
                units_bounded=int(row["units_bounded"] or 0),
            )
        )
    return tuple(arms)


def _descriptions(rows: Callable[[str], list[tuple[Any, ...]]]) -> dict[str, str]:
    """Each arm's line from the registry, for the arms the run's configuration names."""
    found = rows(
        "SELECT config_json, arms FROM runs WHERE run_id = $run_id "
        "ORDER BY invocation_started_at DESC LIMIT 1"
    )
    if not found:
        return {}
    config, arms = found[0]
    tokens = json.loads(config)["arms"] if config else str(arms).split(",")
    return describe_arms(tokens)


def _per_defect(
    baseline: dict[str, Any] | None,
    row: dict[str, Any],
    summaries: dict[str, CostSummary],
    cost: CostSummary,
) -> float | None:
    """Extra experiment cost per unit over arm A, per defect removed per unit."""
    if baseline is None or row["arm"] == "A" or "A" not in summaries:
        return None
    base_per_unit = summaries["A"].experiment_cost / int(baseline["n"])
    removed = float(baseline["mean_defects"]) - float(row["mean_defects"])
    return cost_per_defect_removed(cost.experiment_cost / int(row["n"]), base_per_unit, removed)


def arm_summaries(
    connection: duckdb.DuckDBPyConnection,
    run_id: str,
    *,
    prices: PriceTable | None = None,
    target: float = DEFAULT_TARGET,
    resamples: int = 10_000,
) -> tuple[ArmSummary, ...]:
    """Per-arm numbers of one run, with paired statistics against arm A."""
    return build_report(connection, run_id, prices=prices, target=target, resamples=resamples).arms
