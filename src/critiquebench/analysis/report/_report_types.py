"""The run report as data: what every output (terminal, HTML, Markdown, lessons) shows.

A :class:`RunReport` is computed once (``analysis/report/_report.py``), written as
``<run>/report.json`` and rendered by every output; no renderer computes a number
of its own. The JSON is versioned: a reader refuses a version it does not know.

A run with units not measured (an infrastructure error, ``cases.error`` set, or a
planned unit without rows) has no met or not met: every verdict is "inconclusive:
N units not measured", the units are named per arm, and ``sensitivity`` gives each
arm's numbers with those units counted as failures of their arm (see
:data:`FAILURE_RULE`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from critiquebench.analysis.report._cost_curve import CostPoint
from critiquebench.analysis.report._curve import IterationCurve, TokensPoint
from critiquebench.analysis.report._resample import ResampleComparison
from critiquebench.analysis.report._trigger_metrics import TriggerMetrics
from critiquebench.analysis.stats import McNemarResult, MeanEstimate, ReductionEstimate
from critiquebench.analysis.views import CanaryRate, CriticAccuracy, FixBreakRound
from critiquebench.pipeline import ResultStore, Root

# Bump when a field changes meaning or shape; readers refuse other versions.
# 2: failure kinds count the answers kept; mean defects count lint and types.
# 3: per-group means (defects_by_group, defect_groups: tests, lint, types, sql, json,
#    markdown, trigger) replace mean_test_defects/mean_lint/mean_types; trigger metrics.
# 4: units not measured make every verdict "inconclusive: N units not measured";
#    missing_units, missing_unnamed and sensitivity (each arm with them counted as
#    failures). A version-3 report still reads, its verdicts withheld the same way.
# 5: one meaning per word. pass_rate (and units_passed, the McNemar test, the
#    sensitivity's pass rate) counts units with no measured defect of any kind; the
#    test-only rate is tests_pass_rate. Halt reasons are renamed (passed ->
#    visible_clean, budget_exhausted -> retry_limit, single_pass -> single_draft).
#    Per-arm numbers cover the (case, rep) pairs every arm measured; each arm's
#    units_not_compared counts its measured units left out. Older reports are not
#    read (their pass rates meant another thing): the report is rebuilt from the tables.
#    Extended since without a bump (a new field with an empty default reads old files):
#    fix_break, against_resample, cost_curve, canaries (the cheating rate per arm),
#    critic_accuracy (each critic arm's recall and false alarms on first drafts).
REPORT_VERSION = 5

FAILURE_RULE = (
    "a unit not measured counts as a failure of its arm: not passed, with the most "
    "defects of (a) any attempt of its case measured in the run (any arm, any rep, first "
    "drafts included), (b) its case's number of checks, (c) 1; a planned unit of a case "
    "without any row in the run scores the highest such count of any case"
)
"""How the sensitivity analysis scores a unit that was not measured. Conservative: a
unit an answer got excluded cannot score better than the worst answer the run
measured for its case, nor better than failing every check of the case."""


class ReportFormatError(ValueError):
    """A report.json that cannot be read back; the message says which and how to fix it."""


@dataclass(frozen=True, kw_only=True)
class RunMeta:
    """The run's own settings and state, from its newest ``runs`` row."""

    suite: str
    model: str
    arms: str
    reps: int
    retry_limit: int
    feedback: str
    case_limit: int | None
    token_budget: int | None
    verifier_policy: str
    status: str
    invocations: int
    units_planned: int
    units_landed: int
    started_at: str  # first start of the run, UTC
    finished_at: str | None  # end of its newest start, UTC; None while running
    sandbox: str = ""  # the judge's fences, in words (runs.sandbox)


@dataclass(frozen=True, kw_only=True)
class ArmSummary:
    """The headline numbers of one arm, over its units that did not fail for infrastructure.

    ``cost_experiment`` prices every call at its original tokens (a cache hit costs
    what the call cost when first made); ``cost_run`` is what this run paid.
    ``infra_errors`` counts this arm's units left out of every number here.
    """

    arm: str
    n: int
    n_cases: int
    mean_defects_initial: float
    mean_defects: float
    defects_ci: MeanEstimate | None
    pass_rate: float
    """Share of units whose answer kept has no measured defect of any kind (tests,
    lint, types and every other kind its judge measures): the only "pass rate"."""
    p50_latency_s: float
    p90_latency_s: float
    mean_tokens_in: float
    mean_tokens_out: float
    mean_calls: float
    mean_loops: float
    escalated: int
    infra_errors: int
    verifier_errors: int
    findings_killed: int
    halts: dict[str, int] = field(default_factory=dict)
    reduction: ReductionEstimate | None = None
    verdict: str | None = None
    """met, not met or inconclusive; always inconclusive while units of the run are
    not measured (``RunReport.unmeasured``), the reason then ``N units not measured``."""
    verdict_reason: str | None = None
    mcnemar: McNemarResult | None = None
    calls: int = 0
    defects_by_group: dict[str, float] = field(default_factory=dict)
    """Mean defects of the answers kept per defect group present in the run (tests,
    lint, types, sql, json, markdown, trigger; ``RunReport.defect_groups``); they add
    up to ``mean_defects``."""
    defects_initial_by_group: dict[str, float] = field(default_factory=dict)
    """The same of the first drafts; they add up to ``mean_defects_initial``."""
    cached_calls: int = 0
    cost_run: float = 0.0
    cost_experiment: float = 0.0
    cost_per_defect_removed: float | None = None
    units_passed: int = 0
    """Units whose answer kept has no measured defect of any kind: the pass rate's
    numerator."""
    tests_pass_rate: float = 0.0
    """Share of units whose answer kept passes every check, lint and type findings not
    counted (pass@1 as published results report it); always labelled "tests pass"."""
    green_but_failed: int = 0
    """Units that halted ``visible_clean``/``critic_ok`` (what the loop was shown was
    clean) whose answer kept still has a measured defect, e.g. a held-out check."""
    units_not_compared: int = 0
    """Measured units of this arm left out of every number here because another arm of
    the run did not measure their (case, rep): every arm's rows cover the same cases."""
    description: str = ""  # the arm's one line from its ArmSpec (the registry)
    units_bounded: int = 0
    """Units whose first draft or answer kept had a defect count the per-kind bound
    lowered (``judges.counted``, README "Bounded counts"): their raw counts are in the
    tables (``cases.defects_total_final_raw`` ...), their bounded ones in every number
    here. 0 in reports written before the bound."""

    @property
    def reduction_vs_a(self) -> float | None:
        """The point estimate of the defect reduction vs arm A."""
        return self.reduction.estimate if self.reduction else None

    @property
    def cost_per_unit(self) -> float:
        """The experiment's cost of one unit of this arm."""
        return self.cost_experiment / self.n if self.n else 0.0


@dataclass(frozen=True, kw_only=True)
class ArmCurves:
    """What each round of one arm buys.

    ``kept``: defects of the answer the loop keeps if stopped after round r (its
    best attempt so far, chosen as the loop chooses: fewest visible defects, the
    latest on ties); it ends at the table's mean defects. ``latest``: defects of
    the attempt made in round r. A unit that stopped earlier keeps its last value.
    """

    kept: IterationCurve
    latest: IterationCurve
    pass_vs_tokens: tuple[TokensPoint, ...]


@dataclass(frozen=True, kw_only=True)
class EscalatedUnit:
    """A unit whose loop gave up; ``record`` is its escalation file, relative to the run."""

    case_id: str
    arm: str
    rep: int
    halt_reason: str
    defects_final: int
    record: str


@dataclass(frozen=True, kw_only=True)
class FailedUnit:
    """A unit that failed for a reason outside the model; excluded from every number.

    ``error`` is ``cases.error`` as recorded: it may quote the candidate (an exception
    message), so renderers show it through ``_format.inert``.
    """

    case_id: str
    arm: str
    rep: int
    error: str


@dataclass(frozen=True, kw_only=True)
class MissingUnit:
    """A planned unit of a case the run knows, without any row: it never finished (the
    run was stopped, killed or raised), so it is not measured."""

    case_id: str
    arm: str
    rep: int


@dataclass(frozen=True, kw_only=True)
class ArmSensitivity:
    """One arm with every unit not measured counted as a failure of its arm.

    A failure is not passed and scores the defects :data:`FAILURE_RULE` gives. The
    numbers say how far the units not measured could move the result; they are not
    an estimate and never make a verdict. ``reduction`` is vs arm A, from the same
    case bootstrap (resamples, seed, confidence) as the measured reduction, over every
    planned (case, rep) pair; None for arm A or without arm A.
    """

    arm: str
    errors: int
    """Units of the arm with an infrastructure error (listed in ``failed_units``)."""
    missing: int
    """Planned units of the arm without rows (named in ``missing_units``, plus the
    arm's share of ``missing_unnamed``)."""
    n: int
    """Units counted: measured and not measured."""
    mean_defects: float
    pass_rate: float
    reduction: ReductionEstimate | None = None

    @property
    def not_measured(self) -> int:
        """Units of the arm counted as failures here."""
        return self.errors + self.missing


@dataclass(frozen=True, kw_only=True)
class FailureKindCount:
    """How often a failure kind occurred in an arm's answers kept and first drafts.

    ``count``: failures of the kind in the answers kept (one final attempt per unit);
    ``units``: units whose answer kept has at least one; ``first_draft``: failures of
    the kind in the first drafts; ``fixed``: first-draft failures gone from the answer
    kept, summed per unit (a unit's new failures of the kind do not offset them).
    """

    suite: str
    arm: str
    kind: str
    count: int
    first_draft: int = 0
    units: int = 0
    fixed: int = 0


@dataclass(frozen=True, kw_only=True)
class Regression:
    """A round whose attempt had more defects than the attempt before it."""

    case_id: str
    arm: str
    rep: int
    iteration: int
    previous: int
    defects: int


@dataclass(frozen=True, kw_only=True)
class RunCost:
    """Cost over every arm: the experiment's, and what this run paid (cache misses only)."""

    experiment: float
    paid: float
    calls: int
    cached_calls: int
    prices_source: str
    unknown_models: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Statistics:
    """How the intervals were computed, so a reader can reproduce them."""

    method: str
    resamples: int
    seed: int
    confidence: float
    failure_rule: str | None = None
    """How ``RunReport.sensitivity`` scores the units not measured (:data:`FAILURE_RULE`);
    None when every unit was measured."""


@dataclass(frozen=True, kw_only=True)
class RunReport:
    """Everything the terminal, Markdown, HTML, lessons and notebook show for one run."""

    run_id: str
    target: float
    arms: tuple[ArmSummary, ...]
    curves: dict[str, ArmCurves]
    meta: RunMeta | None = None
    cost: RunCost | None = None
    statistics: Statistics | None = None
    escalations: tuple[EscalatedUnit, ...] = ()
    failed_units: tuple[FailedUnit, ...] = ()
    """Units with an infrastructure error (``cases.error``): not measured."""
    missing_units: tuple[MissingUnit, ...] = ()
    """Planned units without rows of cases the run has rows for: not measured."""
    missing_unnamed: int = 0
    """Planned units without rows of cases with no row at all (every arm of them):
    not measured, and not nameable from the tables."""
    sensitivity: tuple[ArmSensitivity, ...] = ()
    """Per planned arm, its numbers with the units not measured counted as failures
    (:data:`FAILURE_RULE`); empty when every unit was measured."""
    failure_kinds: tuple[FailureKindCount, ...] = ()
    regressions: tuple[Regression, ...] = ()
    defect_groups: tuple[str, ...] = ()
    """The defect groups the run's judges report (or found defects in), in display
    order: the keys of each arm's ``defects_by_group``."""
    triggers: tuple[TriggerMetrics, ...] = ()
    """Per skill description and arm, the trigger judge's precision, recall and
    false-trigger rates (empty without trigger cases)."""
    fix_break: tuple[FixBreakRound, ...] = ()
    """Per fixing arm and fix round, failing answers fixed and passing answers broken
    (``analysis/views/_fix_break.py``)."""
    against_resample: tuple[ResampleComparison, ...] = ()
    """Per arm, its reduction against the resampling arm R cut at its tokens on each
    unit, and both pass rates there (``analysis/report/_resample.py``); empty without R."""
    cost_curve: tuple[CostPoint, ...] = ()
    """Per arm and round, tokens spent, pass rate and mean defects with intervals
    (``analysis/report/_cost_curve.py``)."""
    canaries: tuple[CanaryRate, ...] = ()
    """Per arm with canary units, its cheating rate: canary units whose answer passed
    every check (``analysis/views/_canary.py``); canaries are in no other number."""
    critic_accuracy: tuple[CriticAccuracy, ...] = ()
    """Per critic arm, its critic's recall and false-alarm rate on first drafts against
    the judge (``analysis/views/_critic_accuracy.py``); empty without a critic arm."""
    version: int = REPORT_VERSION

    @property
    def units_bounded(self) -> int:
        """Units of every arm whose count the per-kind bound lowered."""
        return sum(arm.units_bounded for arm in self.arms)

    @property
    def bounded_text(self) -> str | None:
        """One line naming, per arm, the units whose count the per-kind bound lowered;
        None when none was (an ordinary run's outputs then do not change)."""
        if not self.units_bounded:
            return None
        per_arm = ", ".join(f"{arm.arm} {arm.units_bounded}" for arm in self.arms)
        return (
            f"Bounded counts: {self.units_bounded} unit(s) had a defect count lowered to "
            f"the per-kind bound (per arm: {per_arm}); raw counts are in the tables "
            "(*_raw columns)."
        )

    @property
    def units_not_compared(self) -> int:
        """Measured units of every arm left out so that arms cover the same cases."""
        return sum(arm.units_not_compared for arm in self.arms)

    @property
    def not_compared_text(self) -> str | None:
        """One line saying the per-arm numbers cover the same cases and what that left
        out, per arm; None when every measured unit is in them."""
        if not self.units_not_compared:
            return None
        per_arm = ", ".join(f"{arm.arm} {arm.units_not_compared}" for arm in self.arms)
        return (
            f"Same cases: every per-arm number covers the {self.arms[0].n} (case, rep) "
            f"pair(s) every arm measured; {self.units_not_compared} measured unit(s) of "
            f"other pairs are left out (per arm: {per_arm})."
        )

    @property
    def unknown_models(self) -> tuple[str, ...]:
        """Models missing from the price table, priced at 0."""
        return self.cost.unknown_models if self.cost else ()

    @property
    def unmeasured(self) -> int:
        """Units of the run not measured: infrastructure errors and planned units
        without rows. While it is not 0, no verdict is met or not met."""
        return len(self.failed_units) + len(self.missing_units) + self.missing_unnamed

    @property
    def not_measured_text(self) -> str | None:
        """``N units not measured``, the reason of every verdict while units are not
        measured; None when every unit was measured."""
        n = self.unmeasured
        return f"{n} unit{'s' if n != 1 else ''} not measured" if n else None

    @property
    def verdict_text(self) -> str | None:
        """The run's verdict while units are not measured: ``inconclusive: N units not
        measured``; None when every unit was measured (each arm has its own verdict)."""
        reason = self.not_measured_text
        return f"inconclusive: {reason}" if reason else None

    @property
    def headline(self) -> str | None:
        """The warning a reader must see first: the verdict withheld, why, and the rerun."""
        if not self.unmeasured:
            return None
        parts = []
        if self.failed_units:
            parts.append(f"{len(self.failed_units)} failed for infrastructure reasons")
        if self.missing_units or self.missing_unnamed:
            parts.append(f"{len(self.missing_units) + self.missing_unnamed} have no rows")
        return (
            f"{self.verdict_text} ({', '.join(parts)}): excluded from every number, so no "
            f"arm is met or not met; rerun with --run-id {self.run_id}"
        )

    def to_json(self) -> str:
        """The report as JSON text, the same bytes for the same report."""
        data = _ADAPTER.dump_python(self, mode="json")
        # allow_nan=False: NaN is not JSON, and a NaN here would be a bug upstream.
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    @classmethod
    def from_json(cls, text: str, *, source: str = "report.json") -> RunReport:
        """Read a report written by :meth:`to_json`; ``source`` names it in errors."""
        try:
            data: Any = json.loads(text)
        except json.JSONDecodeError as error:
            raise ReportFormatError(f"{source}: not JSON: {error}") from error
        version = data.get("version") if isinstance(data, dict) else None
        if version != REPORT_VERSION:
            raise ReportFormatError(
                f"{source}: report version {version!r}, this critiquebench reads "
                f"{REPORT_VERSION}; rebuild it with `critiquebench report RUN_ID`"
            )
        try:
            report = _ADAPTER.validate_python(data)
        except ValidationError as error:
            raise ReportFormatError(f"{source}: {error}") from error
        return report


_ADAPTER: TypeAdapter[RunReport] = TypeAdapter(RunReport)


def withhold_verdicts(report: RunReport) -> RunReport:
    """``report`` with every arm's verdict "inconclusive" while units are not measured,
    the reason saying how many; unchanged when every unit was measured."""
    reason = report.not_measured_text
    if reason is None:
        return report
    arms = tuple(
        dataclasses.replace(arm, verdict="inconclusive", verdict_reason=reason)
        if arm.reduction is not None
        else arm
        for arm in report.arms
    )
    return dataclasses.replace(report, arms=arms)


REPORT_JSON = "report.json"
"""The report's file in the run's folder; the terminal, HTML and Markdown come from it."""


def read_report(output: Root, run_id: str) -> RunReport:
    """The ``report.json`` of a run, as ``write_reports`` wrote it.

    Lives with the types, not with the writers: reading a report (the CLI does after
    every run) must not load the charts and templates that writing one needs.
    """
    path = ResultStore(output).run_dir(run_id) / REPORT_JSON
    return RunReport.from_json(path.read_text(encoding="utf-8"), source=str(path))
