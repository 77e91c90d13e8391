"""The pipeline checks itself: K seeded experiments on a model with a planted effect.

Each experiment runs the ``sim:`` model (``models/_sim.py``) end to end through
the library path of a real run (``start_run``, ``execute_unit``, the result
store's Parquet, ``finish_run``) and the report (``build_report`` over DuckDB
views), then compares arm B's reduction and verdict with the true reduction.
Prefect is left out on purpose: a flow per experiment would spend far more time
starting than computing, and the flow only fans out the same library calls.

Each seed draws every case's difficulty afresh, so an experiment's cases are a
new sample from the population of difficulties, which is what the interval is
about; the true reduction is that population's (``true_reduction``). A buggy
answer's defect count differs between cases but not with difficulty, and is
the same in both arms, so it does not move the truth.

The judge is the real :class:`PythonJudge`, memoised by (case, code): the sim's
answers are deterministic code, so judging the same code again would only cost
time. Verdicts are also judged against two targets just around the truth, so
both kinds of error (a false "met", a false "not met") are measured every time.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rich.table import Table

from critiquebench.analysis.report import build_report
from critiquebench.analysis.stats import (
    ReductionEstimate,
    acceptance,
    cluster_bootstrap_reduction,
    simulate_defects,
)
from critiquebench.analysis.views import connect
from critiquebench.judges import JudgeResult, PythonJudge
from critiquebench.loop import LoopDependencies
from critiquebench.models import SimParams, SimProvider, true_reduction
from critiquebench.pipeline import (
    ResultStore,
    RunConfig,
    Unit,
    execute_unit,
    finish_run,
    start_run,
)
from critiquebench.runtime.project import DEFAULT_TARGET
from critiquebench.suites import Case

# Heterogeneous cases (het = 1 on the logit scale: a case one SD harder has its odds
# of a buggy draft and of a failed fix multiplied by e) and some rep-to-rep noise.
DEFAULT_PARAMS = SimParams(draft=0.7, fix=0.6, het=1.0, noise=0.3, regress=0.05)
# Targets this far either side of the truth measure false "met" / false "not met".
MARGIN = 0.05


@dataclass(frozen=True)
class SelftestSettings:
    """One selftest: the planted model, the design of each experiment, and K."""

    params: SimParams = field(default_factory=lambda: DEFAULT_PARAMS)
    experiments: int = 10
    reps: int = 3
    cases: int | None = None
    retry_limit: int = 2
    target: float = DEFAULT_TARGET
    resamples: int = 2_000
    first_seed: int = 0
    workers: int = 2


@dataclass(frozen=True)
class ExperimentOutcome:
    """What the report of one simulated experiment said about arm B."""

    seed: int
    estimate: float | None
    low: float | None
    high: float | None
    verdict: str
    verdict_above: str  # against target truth + MARGIN, where "met" is false
    verdict_below: str  # against target truth - MARGIN, where "not met" is false
    n_cases: int
    n_pairs: int


@dataclass(frozen=True)
class SelftestResult:
    """The experiments of a selftest and how their intervals did against the truth."""

    settings: SelftestSettings
    truth: float
    outcomes: list[ExperimentOutcome]
    end_to_end: bool = True
    """False for :func:`simulate_selftest`: defect counts drawn without loop and judge."""

    def _share(self, hit: list[bool]) -> float:
        return sum(hit) / len(hit) if hit else float("nan")

    @property
    def coverage(self) -> float:
        """Share of intervals that contain the true reduction."""
        return self._share(
            [o.low is not None and o.high is not None and o.low <= self.truth <= o.high
             for o in self.outcomes]
        )  # fmt: skip

    @property
    def bias(self) -> float:
        """Mean point estimate minus the truth."""
        values = [o.estimate for o in self.outcomes if o.estimate is not None]
        return sum(values) / len(values) - self.truth if values else float("nan")

    @property
    def mean_width(self) -> float:
        """Mean width of the intervals."""
        widths = [o.high - o.low for o in self.outcomes if o.low is not None and o.high is not None]
        return sum(widths) / len(widths) if widths else float("nan")

    @property
    def false_met(self) -> float:
        """Share of "met" verdicts against a target MARGIN above the truth."""
        return self._share([o.verdict_above == "met" for o in self.outcomes])

    @property
    def false_not_met(self) -> float:
        """Share of "not met" verdicts against a target MARGIN below the truth."""
        return self._share([o.verdict_below == "not met" for o in self.outcomes])

    def verdict_shares(self) -> dict[str, float]:
        """Shares of met / not met / inconclusive at the configured target."""
        return {v: self._share([o.verdict == v for o in self.outcomes])
                for v in ("met", "not met", "inconclusive")}  # fmt: skip


class _MemoJudge:
    """The real judge, judging each distinct (case, code) once."""

    def __init__(self) -> None:
        # Tests only: the planted effect is on the tests, and a reference solution's
        # own lint or type findings (HumanEval has some) would blur the known truth.
        self._judge = PythonJudge(static=None)
        self._seen: dict[tuple[str, str], JudgeResult] = {}
        self._lock = threading.Lock()

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        key = (case.id, artifact)
        with self._lock:
            found = self._seen.get(key)
        if found is None:
            found = self._judge(case, artifact)
            if found.infrastructure_error is None:  # never remember a judge failure
                with self._lock:
                    self._seen[key] = found
        return found


def run_experiment(
    settings: SelftestSettings, seed: int, output: Path, judge: _MemoJudge | None = None
) -> ExperimentOutcome:
    """Run one seeded simulated experiment end to end and read arm B off its report."""
    params = dataclasses.replace(settings.params, seed=seed)
    config = RunConfig(
        suite=params.suite, limit=settings.cases, arms=("A", "B"), reps=settings.reps,
        retry_limit=settings.retry_limit, model=params.spec, run_id=f"selftest-{seed}",
        output=output, feedback="all", token_budget=None, cache=False,
    )  # fmt: skip
    plan = start_run(config)
    deps = LoopDependencies(provider=SimProvider(params), judge=judge or _MemoJudge())
    store = ResultStore(output)

    def one(item: tuple[Case, Unit]) -> None:
        case, unit = item
        store.write_unit(config.run_id, unit, execute_unit(case, unit, deps, config))

    with ThreadPoolExecutor(max_workers=settings.workers) as pool:
        list(pool.map(one, plan.work))
    finish_run(plan, failed=0)
    report = build_report(
        connect(output, [config.run_id], snapshot=True),
        config.run_id,
        target=settings.target,
        resamples=settings.resamples,
    )
    arm = next(a for a in report.arms if a.arm == "B")
    estimate = arm.reduction
    if estimate is None:
        raise RuntimeError(f"selftest experiment {seed}: the report has no reduction for arm B")
    return _outcome(seed, estimate, settings.target, true_reduction(params, settings.retry_limit))


def _outcome(
    seed: int, estimate: ReductionEstimate, target: float, truth: float
) -> ExperimentOutcome:
    return ExperimentOutcome(
        seed=seed, estimate=estimate.estimate, low=estimate.low, high=estimate.high,
        verdict=acceptance(estimate, target),
        verdict_above=acceptance(estimate, truth + MARGIN),
        verdict_below=acceptance(estimate, truth - MARGIN),
        n_cases=estimate.n_cases, n_pairs=estimate.n_pairs,
    )  # fmt: skip


def run_selftest(settings: SelftestSettings, workdir: Path | None = None) -> SelftestResult:
    """Run ``settings.experiments`` experiments (seeds ``first_seed ...``) and score them.

    Each experiment writes a full run into a temporary folder under ``workdir``
    (default: the system temp folder), removed once its report is read.
    """
    if settings.experiments < 1:
        raise ValueError("a selftest needs at least one experiment")
    judge = _MemoJudge()
    outcomes = []
    for seed in range(settings.first_seed, settings.first_seed + settings.experiments):
        folder = Path(tempfile.mkdtemp(prefix="cb-selftest-", dir=workdir))
        try:
            outcomes.append(run_experiment(settings, seed, folder, judge))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return SelftestResult(settings, true_reduction(settings.params, settings.retry_limit), outcomes)


def simulate_selftest(settings: SelftestSettings, n_cases: int = 44) -> SelftestResult:
    """The same scoring on defect counts drawn from the sim's model, without loop or judge.

    Thousands of experiments take seconds, so this pins the statistics' coverage
    down far more tightly than the end-to-end runs can; those check the pipeline.
    """
    truth = true_reduction(settings.params, settings.retry_limit)
    rng = np.random.default_rng(settings.first_seed)
    outcomes = []
    for index in range(settings.experiments):
        baseline, treatment = simulate_defects(
            settings.params, n_cases, settings.reps, settings.retry_limit, rng
        )
        estimate = cluster_bootstrap_reduction(
            baseline.tolist(), treatment.tolist(), resamples=settings.resamples, seed=index
        )
        outcomes.append(_outcome(index, estimate, settings.target, truth))
    return SelftestResult(settings, truth, outcomes, end_to_end=False)


def selftest_table(results: list[SelftestResult]) -> Table:
    """One row per selftest: coverage, bias, interval width and verdict error rates."""
    table = Table(title="critiquebench selftest: planted effect vs what the report says",
                  title_justify="left")  # fmt: skip
    headers = ("kind", "reps", "K", "truth", "mean est.", "bias", "coverage", "CI width",
               "target", "met/not/inc.", f"false met (truth+{MARGIN:.0%})",
               f"false not met (truth-{MARGIN:.0%})")  # fmt: skip
    for header in headers:
        table.add_column(header, justify="left" if header == "kind" else "right")
    for r in results:
        shares = r.verdict_shares()
        table.add_row(
            "end to end" if r.end_to_end else "statistics only",
            str(r.settings.reps), str(len(r.outcomes)), f"{r.truth:.3f}",
            f"{r.truth + r.bias:.3f}", f"{r.bias:+.3f}", f"{r.coverage:.1%}",
            f"{r.mean_width:.3f}", f"{r.settings.target:.0%}",
            "/".join(f"{shares[v]:.0%}" for v in ("met", "not met", "inconclusive")),
            f"{r.false_met:.1%}", f"{r.false_not_met:.1%}",
        )  # fmt: skip
    return table
