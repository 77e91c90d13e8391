"""The slow part of starting a run, begun ahead of ``start_run`` on a thread.

Before its ``runs`` row, a start of a run builds the model and the judge, reads
which units earlier starts finished, expands the matrix and probes the sandbox
(the probe starts the judge's sandbox worker and its mypy daemon: about a second,
mostly spent in those child processes). ``critiquebench run`` begins all of that
while Prefect's temporary server is still starting, and offers it to the flow's
``start_run`` (``RunHeadStart.offered``), which then only writes the row. The
preflight checks the command already ran are handed on with it, not run again.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial

from critiquebench.judges import DEFAULT_JUDGE, JudgeSet, PythonJudge, probe_sandbox
from critiquebench.loop import LoopDependencies
from critiquebench.pipeline._config import RunConfig
from critiquebench.pipeline._preflight import preflight
from critiquebench.pipeline._store import ResultStore
from critiquebench.pipeline._units import Unit, expand_matrix
from critiquebench.runtime.background import in_thread
from critiquebench.suites import Case


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


def prepare_start(config: RunConfig, cases: list[Case]) -> PreparedStart:
    """Build the run's model and judge (a bad model spec fails here, before any unit),
    list the units left to run and probe the sandbox with the judge the units will use."""
    # Imported here: _run imports this module for start_run.
    from critiquebench.pipeline._run import dependencies_for

    deps = dependencies_for(config.provider_settings())
    written = ResultStore(config.output).unit_errors(config.run_id)
    done = {key for key, error in written.items() if error is None}
    # A unit's key is a digest of its case id: made once here, not once per use.
    keyed = [(case, unit, unit.key) for case, unit in expand_matrix(cases, config)]
    work = [(case, unit) for case, unit, key in keyed if key not in done]
    return PreparedStart(
        work=work,
        planned=len(keyed),
        skipped=len(keyed) - len(work),
        retried=sum(1 for _, _, key in keyed if written.get(key)),
        keys=frozenset(key for _, _, key in keyed),
        sandbox=_probe(deps),
    )


def _probe(deps: LoopDependencies) -> str:
    """The fences of the run's own Python judge, which the probe starts for the units:
    a judge of its own would start (and leave behind) a second sandbox worker."""
    judge = deps.judge.get(DEFAULT_JUDGE) if isinstance(deps.judge, JudgeSet) else None
    return probe_sandbox(judge if isinstance(judge, PythonJudge) else None)


_OFFERED: ContextVar[RunHeadStart | None] = ContextVar("critiquebench_head_start", default=None)


class RunHeadStart:
    """``prepare_start(config, cases)`` running on a thread of its own from creation on
    (see ``in_thread``: a process that ends meanwhile lets it finish, so the sandbox
    worker and mypy daemon the probe started are stopped as usual)."""

    def __init__(self, config: RunConfig, cases: list[Case]) -> None:
        self.config = config
        self.cases = cases
        self._lock = threading.Lock()
        self._claimed = False
        self._prepared = in_thread(partial(prepare_start, config, cases), "run-head-start")

    def result(self) -> PreparedStart:
        """Wait for the preparation; raise what it raised (e.g. a model that cannot load)."""
        return self._prepared.result()

    def claim(self) -> bool:
        """True the first time only: one head start serves one start of the run."""
        with self._lock:
            claimed, self._claimed = self._claimed, True
            return not claimed

    @contextmanager
    def offered(self) -> Iterator[None]:
        """Offer this head start to the ``start_run`` of the same configuration called
        in the block (in this thread or a context copied from it, as Prefect's flow is)."""
        token = _OFFERED.set(self)
        try:
            yield
        finally:
            _OFFERED.reset(token)


def begin_run(config: RunConfig, cases: list[Case] | None = None) -> RunHeadStart:
    """Run the preflight checks (unless ``cases``, their result, is given) and begin
    preparing the start of the run in the background."""
    return RunHeadStart(config, preflight(config) if cases is None else cases)


def offered_head_start(config: RunConfig) -> RunHeadStart | None:
    """The head start offered for ``config`` (see ``RunHeadStart.offered``), claimed;
    None if there is none, it is another configuration's, or it was claimed already."""
    offered = _OFFERED.get()
    if offered is None or offered.config != config or not offered.claim():
        return None
    return offered
