"""Starting, running and finishing a run, independent of Prefect."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import logging
import platform
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from critiquebench.judges import (
    DEFAULT_JUDGE,
    Judge,
    JudgeSet,
    PythonJudge,
    is_full_sandbox,
    probe_sandbox,
)
from critiquebench.loop import LoopDependencies
from critiquebench.models import (
    CachingProvider,
    CallCache,
    LimitedProvider,
    ModelProvider,
    RateLimiter,
    SharedCallCache,
    provider_from_spec,
)
from critiquebench.pipeline._catalog import OWNER_FOLDER, RunOwner, owner_json
from critiquebench.pipeline._compaction import compact_run, supersede
from critiquebench.pipeline._config import ProviderSettings, RunConfig
from critiquebench.pipeline._layout import landed_in
from critiquebench.pipeline._location import listed_names
from critiquebench.pipeline._preflight import preflight
from critiquebench.pipeline._schema import SCHEMA_VERSION, RunStatus, config_row
from critiquebench.pipeline._stop import clear_stop, stop_requested
from critiquebench.pipeline._store import ResultStore
from critiquebench.pipeline._unit import Unit
from critiquebench.pipeline._units import UnitRows, execute_unit, expand_matrix, import_loop
from critiquebench.runtime.background import in_thread
from critiquebench.suites import Case

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunPlan:
    """What a start of a run will do: the units still missing, and bookkeeping."""

    config: RunConfig
    invocation: str
    started_at: dt.datetime
    work: list[tuple[Case, Unit]]
    planned: int
    skipped: int
    sandbox: str
    retried: int = 0
    """Units in ``work`` that an earlier start recorded with an infrastructure error."""
    keys: frozenset[str] = frozenset()
    """Keys of every unit of the matrix."""


@dataclass(frozen=True)
class RunEnd:
    """How a start of a run ended: its status and the units still to finish."""

    run_id: str
    status: RunStatus
    planned: int
    errored: int
    """Units whose cases row records an infrastructure error."""
    missing: int
    """Units with no cases row at all (they raised, or never ran)."""

    @property
    def unfinished(self) -> int:
        """Units a rerun with the same run id will run again."""
        return self.errored + self.missing

    def message(self) -> str:
        """One line: what did not finish, and how to finish it."""
        if self.status == "interrupted":
            return (
                f"run {self.run_id} interrupted with {self.unfinished} of {self.planned} "
                f"units not measured; resume it with: critiquebench resume {self.run_id}"
            )
        return (
            f"run {self.run_id} is incomplete: {self.unfinished} of {self.planned} units "
            f"did not finish ({self.errored} infrastructure error(s), {self.missing} without "
            f"rows); they are excluded from the report. Retry only those units with: "
            f"critiquebench resume {self.run_id}"
        )


class RunIncomplete(RuntimeError):
    """Some units of a run did not finish; a rerun with the same run id retries them."""

    def __init__(self, end: RunEnd) -> None:
        self.end = end
        super().__init__(end.message())


class RunInterrupted(RuntimeError):
    """The run was asked to stop (Ctrl-C): units not started are left for a resume.
    Its message is ``RunEnd.message`` of the interrupted start."""


@functools.cache
def dependencies_for(settings: ProviderSettings) -> LoopDependencies:
    """The model and judge of a run, created once per process and then shared.

    Memoising here is what makes the local model load once per worker process and
    gives every task of a run in that process the same rate limiter and cache.
    """
    provider: ModelProvider = LimitedProvider(
        provider_from_spec(settings.spec), RateLimiter(settings.limits)
    )
    # The cache sits outside the limiter: a hit spends no slot and no quota.
    if isinstance(settings.cache_path, Path):
        provider = CachingProvider(provider, CallCache(settings.cache_path))
    elif settings.cache_path is not None:  # on the store every worker shares
        provider = CachingProvider(provider, SharedCallCache(settings.cache_path))
    # Each case names its judge; other registered judges are created on first use.
    return LoopDependencies(provider=provider, judge=JudgeSet({DEFAULT_JUDGE: python_judge()}))


def python_judge() -> Judge:
    """The run's Python judge; a function of its own so a test can put another in its
    place without hiding the class that the sandbox probe recognises."""
    return PythonJudge()


@dataclass(frozen=True)
class PreparedStart:
    """What a start of a run knows before it writes its ``runs`` row."""

    work: list[tuple[Case, Unit]]
    """The units still to run: not yet finished, or recorded with an infrastructure error."""
    planned: int
    skipped: int
    retried: int
    keys: frozenset[str]
    """Keys of every unit of the matrix."""
    sandbox: str
    """The fences of the run's judge, as the probe found them."""
    retried_keys: frozenset[str] = frozenset()
    """Keys of the units in ``work`` that an earlier start recorded with an error."""


_STARTING = threading.Lock()
"""Held while a start builds the run's model and judge or probes the sandbox: a head
start (``warm_start``) and the ``start_run`` after it share one judge and its children."""


def prepare_start(config: RunConfig, cases: list[Case]) -> PreparedStart:
    """Build the run's model and judge (a bad model spec fails here, before any unit),
    list the units left to run and probe the sandbox with the judge the units will use.

    The probe runs on a thread: it mostly waits for the judge's children to start (mypy's
    loop, ruff's server, a sandbox worker), and meanwhile this thread imports the loop's
    graph (LangGraph, which ``_units`` no longer imports with itself) and reads which units
    are done. The model is built here first, so that no import of a provider's module
    runs beside LangGraph's on the other thread.

    Measured gain (``bench/fixed_cost.py --paths library --roots``, a 2-unit library run,
    5 alternated runs each on 2 cores at load 11-12): the process exited 13.3 s after
    its start instead of 17.4 s (medians; the first unit began at 10.0 s instead of
    14.1 s), its own CPU the same (2.90 against 2.98 CPU-s): the import of the library
    took 1.1 CPU-s instead of 2.5, and LangGraph's second went beside the probe's wait.
    """
    settings = config.provider_settings()
    with _STARTING:
        dependencies_for(settings)
    probing = in_thread(functools.partial(_built_and_probed, settings), "run-probe")
    import_loop()
    written = ResultStore(config.output).unit_errors(config.run_id)
    done = {key for key, error in written.items() if error is None}
    # A unit's key is a digest of its case id: made once here, not once per use.
    keyed = [(case, unit, unit.key) for case, unit in expand_matrix(cases, config)]
    work = [(case, unit) for case, unit, key in keyed if key not in done]
    retried = frozenset(key for _, _, key in keyed if written.get(key))
    sandbox = probing.result()
    return PreparedStart(
        work=work,
        planned=len(keyed),
        skipped=len(keyed) - len(work),
        retried=len(retried),
        keys=frozenset(key for _, _, key in keyed),
        sandbox=sandbox,
        retried_keys=retried,
    )


def warm_start(config: RunConfig) -> Future[str]:
    """Build the run's model and judge and probe the sandbox now, on a thread: the
    probe starts the judge's sandbox worker, mypy daemon and ruff server, which the
    ``start_run`` of ``config`` in this process then finds running (its own probe is
    one more trivial answer). Its outcome is only a head start: a failure here (a
    model that cannot load) is met, and raised, again by ``start_run``.

    ``critiquebench run`` calls it while Prefect's server starts and the flow is
    imported, so those children start beside them instead of after them.

    Measured gain (``bench/fixed_cost.py``, a 2-unit run, 3 alternated runs each on
    2 cores at load 19-20, with the server spawned before the judges' import): the
    first unit began 39.7 s after the command started instead of 43.9 s, the flow's
    ``start_run`` taking 2.0 s instead of 5.4 s; the whole 2-unit run (128 s at that
    load) waited on the quality check's child either way. The head start it replaces
    (removed with an import circle, 409a576) saved a 2-unit run 2-3.5 s on a quieter
    machine (16-17.5 s with it, 19.5 s without): over 5% of a 1,000-unit run's ~31 s.
    """
    return in_thread(
        functools.partial(_built_and_probed, config.provider_settings()), "run-warm-start"
    )


def _built_and_probed(settings: ProviderSettings) -> str:
    """The run's model and judge built (once per process) and the sandbox probed with
    them: the work a head start and the start after it share, one at a time."""
    with _STARTING:
        return _probe(dependencies_for(settings))


def _probe(deps: LoopDependencies) -> str:
    """The fences of the run's own Python judge, which the probe starts for the units:
    a judge of its own would start (and leave behind) a second sandbox worker."""
    judge = deps.judge.get(DEFAULT_JUDGE) if isinstance(deps.judge, JudgeSet) else None
    return probe_sandbox(judge if isinstance(judge, PythonJudge) else None)


def _versions() -> str:
    names = ("critiquebench", "prefect", "langgraph", "duckdb", "pyarrow", "llama_cpp_python")
    found: dict[str, str] = {"python": platform.python_version()}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return json.dumps(found, sort_keys=True)


def _run_row(
    plan: RunPlan,
    status: RunStatus,
    failed: int,
    finished: dt.datetime | None,
    quality: str | None = None,
    errored: int | None = None,
) -> dict[str, Any]:
    config = plan.config
    return {
        "run_id": config.run_id,
        "schema_version": SCHEMA_VERSION,
        "invocation_started_at": plan.started_at,
        "finished_at": finished,
        "status": status,
        **config_row(config),
        "config_json": config.model_dump_json(),
        "experiment_hash": config.experiment_hash(),
        "units_planned": plan.planned,
        "units_skipped": plan.skipped,
        "units_retried": plan.retried,
        "units_failed": failed,
        "units_errored": errored,
        "quality": quality,
        "sandbox": plan.sandbox,
        "versions": _versions(),
    }


def start_run(config: RunConfig, cases: list[Case] | None = None) -> RunPlan:
    """Check the run (see ``preflight``) and the model spec, and list the units to run.

    Starting again with the same ``run_id`` resumes the same experiment: finished
    units are skipped, units recorded with an infrastructure error run again, and
    other experiment settings are refused (``ConfigMismatchError``).

    ``cases``: what ``preflight(config)`` returned, when the caller ran it already.
    """
    started = dt.datetime.now(dt.UTC)
    prepared = prepare_start(config, preflight(config) if cases is None else cases)
    plan = RunPlan(
        config=config,
        invocation=started.strftime("%Y%m%dT%H%M%S%fZ"),
        started_at=started,
        work=prepared.work,
        planned=prepared.planned,
        skipped=prepared.skipped,
        sandbox=prepared.sandbox,
        retried=prepared.retried,
        keys=prepared.keys,
    )
    if not is_full_sandbox(plan.sandbox):
        _log.warning("sandbox is weaker than configured: %s", plan.sandbox)
    store = ResultStore(config.output)
    # The rows of the units about to be retried go aside now, while no unit runs, so
    # the tables keep one row per unit, the latest.
    supersede(store, config.run_id, prepared.retried_keys)
    # Who runs this start: a start left "running" by a process that is gone shows "died".
    owner = owner_json(RunOwner.of_this_process())
    store.write_text(config.run_id, f"{OWNER_FOLDER}/{plan.invocation}.json", owner)
    store.write_run_row(config.run_id, plan.invocation, _run_row(plan, "running", 0, None))
    return plan


@dataclass(frozen=True)
class UnitWritten:
    """A unit whose rows are on disk, and its infrastructure error if it has one."""

    unit: Unit
    error: str | None


def run_unit(
    case: Case, unit: Unit, config: RunConfig, batch: BatchWriter | None = None
) -> UnitWritten:
    """Run one unit and write its rows: at once, or with ``batch``'s next file (a crash
    then loses only the units of the batch not yet written, see ``BatchWriter``)."""
    rows = execute_unit(case, unit, dependencies_for(config.provider_settings()), config)
    if batch is None:
        ResultStore(config.output).write_unit(config.run_id, unit, rows)
    else:
        batch.add(unit, rows)
    return UnitWritten(unit, rows.case["error"])


FLUSH_AFTER_S = 10.0
"""Longest a finished unit waits in a batch before its rows are written: what a crash
can lose beyond the unit running, should each unit take long (a slow model)."""


class BatchWriter:
    """Finished units' rows, written as one file per table (``ResultStore.write_units``)
    when the batch ends, or sooner once a unit has waited ``flush_after_s``.

    A unit is written (and skipped by a resume) once its batch's cases file exists; a
    crash loses the units of the batch not yet written. File ``n`` of the batch is
    named ``<prefix>-c<n>``, the same when a cluster runs the batch again (its worker
    died), so the rerun overwrites it instead of adding rows.
    Use it as a context manager: what is left is written when the block ends.
    """

    def __init__(
        self,
        config: RunConfig,
        prefix: str,
        flush_after_s: float = FLUSH_AFTER_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.prefix = prefix
        self.flush_after_s = flush_after_s
        self._clock = clock
        self._pending: list[tuple[Unit, UnitRows]] = []
        self._since = 0.0
        self._written = 0

    def add(self, unit: Unit, rows: UnitRows) -> None:
        """Hold ``unit``'s rows; write the batch's file if the oldest waited long enough."""
        if not self._pending:
            self._since = self._clock()
        self._pending.append((unit, rows))
        if self._clock() - self._since >= self.flush_after_s:
            self.flush()

    def flush(self) -> None:
        """Write the units held so far (nothing when none are)."""
        if not self._pending:
            return
        store = ResultStore(self.config.output)
        store.write_units(self.config.run_id, f"{self.prefix}-c{self._written:03d}", self._pending)
        self._written += 1
        self._pending = []

    def __enter__(self) -> BatchWriter:
        return self

    def __exit__(self, *_: object) -> None:
        self.flush()


MAX_BATCH = 16
"""Most units in one batch: small enough that the last batches end close together."""


def unit_batches(
    work: list[tuple[Case, Unit]], workers: int, max_batch: int = MAX_BATCH
) -> list[list[tuple[Case, Unit]]]:
    """``work`` cut into consecutive batches, one orchestrated task each.

    An orchestrated task costs CPU in the flow and in the Prefect server (state
    events, task run records) that an instant model makes comparable to the unit
    itself. Batches are as big as ``max_batch`` but leave each worker at least four
    of them, so workers stay balanced to the end; a small run keeps one unit per batch.

    Measured gain (issue 25), ``bench/pipeline.py --ab batch1 --paths flow --concurrency
    2 --pairs 3`` on a quiet host (load 1.6-4.6): the flow on HumanEval x A, B x 3 reps
    (984 units, replay model), batches against one unit per task, in turn: wall 28.8 /
    29.1 / 39.0 s against 57.8 / 64.8 / 80.9 s (about half), CPU of the run and its
    Prefect server 32.4 / 32.8 / 34.4 against 75.1 / 76.5 / 83.9 s. Kept.
    """
    size = max(1, min(max_batch, len(work) // (4 * max(workers, 1))))
    return [work[start : start + size] for start in range(0, len(work), size)]


def batch_label(batch: list[tuple[Case, Unit]]) -> str:
    """A batch's name in the Prefect UI: its unit, or its first and last unit and count."""

    def name(unit: Unit) -> str:
        return f"{unit.case_id} arm {unit.arm} rep {unit.rep}"

    first, last = batch[0][1], batch[-1][1]
    return name(first) if len(batch) == 1 else f"{name(first)} .. {name(last)} ({len(batch)} units)"


@dataclass(frozen=True)
class UnitTally:
    """The units of a start's matrix as the rows on disk record them."""

    errored: int
    """Units whose cases row records an infrastructure error."""
    missing: int
    """Units with no cases row."""


def tally_units(plan: RunPlan) -> UnitTally:
    """Count the matrix's units by their rows on disk (call once every unit has ended)."""
    store = ResultStore(plan.config.output)
    written = {k: e for k, e in store.unit_errors(plan.config.run_id).items() if k in plan.keys}
    errored = sum(1 for error in written.values() if error is not None)
    return UnitTally(errored=errored, missing=len(plan.keys) - len(written))


def finish_run(plan: RunPlan, failed: int, quality: str | None = None) -> RunEnd:
    """Record how this start of the run ended, and the data-quality outcome if checked.

    The run's batch files are compacted first (``compact_run``; nothing to do when the
    caller did it already, as the flow does before its check). The compaction reads
    every batch file again, so its cost grows with the files: a loop that writes each
    unit at once (``run_unit`` without a batch) leaves four files a unit, and their
    compaction (3.0 CPU-s for 328 units, 2.1 since ``read_parquet`` reads a file as one
    file) is what raised the library loop's slope per unit when compaction came
    (eaaed96: its run process ~12 -> ~20 ms of CPU a unit on the replay run at
    concurrency 2, bisected over session 10's merges at load 12-15). Batches
    (``BatchWriter``, as the flow's tasks use) leave one file per table per batch.

    The status comes from the rows on disk: ``failed`` when the data checks failed,
    ``interrupted`` when units are unfinished because the run was asked to stop
    (``request_stop``), ``incomplete`` when a unit of the matrix has no row or an
    infrastructure error otherwise, ``completed`` otherwise.
    """
    compact_run(plan.config.output, plan.config.run_id)
    counted = tally_units(plan)
    end = RunEnd(
        run_id=plan.config.run_id,
        status="completed",
        planned=plan.planned,
        errored=counted.errored,
        missing=counted.missing,
    )
    config = plan.config
    if quality == "failed":
        end = dataclasses.replace(end, status="failed")
    elif end.unfinished and stop_requested(config.output, config.run_id):
        end = dataclasses.replace(end, status="interrupted")
    elif end.unfinished:
        end = dataclasses.replace(end, status="incomplete")
    row = _run_row(plan, end.status, failed, dt.datetime.now(dt.UTC), quality, counted.errored)
    ResultStore(config.output).write_run_row(config.run_id, plan.invocation, row)
    clear_stop(config.output, config.run_id)
    return end


def landed_units(plan: RunPlan) -> int:
    """Units of this start's work whose cases row was written since it began: what
    the progress line counts, whichever process or batch wrote them. One listing: a
    batch's file names start with the start's invocation and end with its unit count."""
    folder = ResultStore(plan.config.output).table_dir(plan.config.run_id, "cases")
    return landed_in(listed_names(folder, ".parquet"), f"{plan.invocation}-")
