"""The run report as data: what every output (terminal, HTML, Markdown, lessons) shows.

A :class:`RunReport` is computed once (``analysis/_report.py``), written as
``<run>/report.json`` and rendered by every output; no renderer computes a number
of its own. The JSON is versioned: a reader refuses a version it does not know.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from critiquebench.analysis._curve import IterationCurve, TokensPoint
from critiquebench.analysis._stats import McNemarResult, MeanEstimate, ReductionEstimate
from critiquebench.analysis._trigger_metrics import TriggerMetrics
from critiquebench.pipeline import ResultStore

# Bump when a field changes meaning or shape; readers refuse other versions.
# 2: failure kinds count the answers kept; mean defects count lint and types.
# 3: per-group means (defects_by_group, defect_groups: tests, lint, types, sql, json,
#    markdown, trigger) replace mean_test_defects/mean_lint/mean_types; trigger metrics.
REPORT_VERSION = 3


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
    """Units whose answer kept has no defect on any check: the pass rate's numerator."""
    green_but_failed: int = 0
    """Units that halted ``passed``/``critic_ok`` (what the loop saw was clean) whose
    answer kept still fails the measurement, e.g. a held-out check."""
    description: str = ""  # the arm's one line from its ArmSpec (the registry)

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
    """A unit that failed for a reason outside the model; excluded from every number."""

    case_id: str
    arm: str
    rep: int
    error: str


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
    failure_kinds: tuple[FailureKindCount, ...] = ()
    regressions: tuple[Regression, ...] = ()
    defect_groups: tuple[str, ...] = ()
    """The defect groups the run's judges report (or found defects in), in display
    order: the keys of each arm's ``defects_by_group``."""
    triggers: tuple[TriggerMetrics, ...] = ()
    """Per skill description and arm, the trigger judge's precision, recall and
    false-trigger rates (empty without trigger cases)."""
    version: int = REPORT_VERSION

    @property
    def unknown_models(self) -> tuple[str, ...]:
        """Models missing from the price table, priced at 0."""
        return self.cost.unknown_models if self.cost else ()

    @property
    def headline(self) -> str | None:
        """The warning a reader must see first: units left out, and how to rerun them."""
        if not self.failed_units:
            return None
        n = len(self.failed_units)
        return (
            f"{n} unit{'s' if n != 1 else ''} failed for infrastructure reasons: excluded "
            f"from every number; rerun with --run-id {self.run_id}"
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
            return _ADAPTER.validate_python(data)
        except ValidationError as error:
            raise ReportFormatError(f"{source}: {error}") from error


_ADAPTER: TypeAdapter[RunReport] = TypeAdapter(RunReport)

REPORT_JSON = "report.json"
"""The report's file in the run's folder; the terminal, HTML and Markdown come from it."""


def read_report(output: Path, run_id: str) -> RunReport:
    """The ``report.json`` of a run, as ``write_reports`` wrote it.

    Lives with the types, not with the writers: reading a report (the CLI does after
    every run) must not load the charts and templates that writing one needs.
    """
    path = ResultStore(output).run_dir(run_id) / REPORT_JSON
    return RunReport.from_json(path.read_text(encoding="utf-8"), source=str(path))
