"""The experiment: expanding the matrix, running units, and storing rows as Parquet.

Running units (``_run``, ``_units``) needs the loop (LangGraph), the tables need
pyarrow: those names are imported on first use, so reading a ``RunConfig`` or
refusing one stays fast.
"""

from typing import TYPE_CHECKING

from critiquebench.pipeline._catalog import (
    DIED,
    LATEST,
    RunOwner,
    RunSummary,
    UnknownRunError,
    owner_json,
    owner_path,
    resolve_run,
    resolve_runs,
    run_ids,
    shown_status,
    summarize_run,
)
from critiquebench.pipeline._config import (
    EXECUTION_FIELDS,
    RUNNERS,
    RunConfig,
    RunnerName,
    new_run_id,
)
from critiquebench.pipeline._preflight import (
    ConfigMismatchError,
    MissingBaselineError,
    ReplayCoverageError,
    SandboxRefusedError,
    check_arms,
    check_baseline,
    check_model,
    check_replay_covers,
    check_same_experiment,
    check_sandbox,
    preflight,
)
from critiquebench.pipeline._stop import clear_stop, request_stop, stop_path, stop_requested
from critiquebench.runtime.lazy import lazy_exports

if TYPE_CHECKING:
    from critiquebench.pipeline._run import (
        PreparedStart,
        RunEnd,
        RunIncomplete,
        RunInterrupted,
        RunPlan,
        RunStatus,
        UnitTally,
        UnitWritten,
        batch_label,
        dependencies_for,
        finish_run,
        landed_units,
        prepare_start,
        run_unit,
        start_run,
        tally_ahead,
        tally_units,
        unit_batches,
    )
    from critiquebench.pipeline._schema import (
        SCHEMA_VERSION,
        SIDE_TABLES,
        TABLES,
        TRANSCRIPT_CHAR_LIMIT,
        Column,
        arrow_schema,
    )
    from critiquebench.pipeline._store import ResultStore
    from critiquebench.pipeline._units import Unit, UnitRows, execute_unit, expand_matrix

_RUN = (
    "finish_run",
    "landed_units",
    "run_unit",
    "start_run",
    "tally_ahead",
    "tally_units",
    "unit_batches",
    "RunEnd",
    "RunIncomplete",
    "RunInterrupted",
    "RunPlan",
    "RunStatus",
    "UnitTally",
    "UnitWritten",
    "batch_label",
    "dependencies_for",
    "PreparedStart",
    "prepare_start",
)
_LAZY = {
    **dict.fromkeys(
        (
            "SCHEMA_VERSION",
            "SIDE_TABLES",
            "TABLES",
            "TRANSCRIPT_CHAR_LIMIT",
            "Column",
            "arrow_schema",
        ),
        "_schema",
    ),
    "ResultStore": "_store",
    **dict.fromkeys(_RUN, "_run"),
    **dict.fromkeys(("Unit", "UnitRows", "execute_unit", "expand_matrix"), "_units"),
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "DIED",
    "EXECUTION_FIELDS",
    "LATEST",
    "RUNNERS",
    "SCHEMA_VERSION",
    "SIDE_TABLES",
    "TABLES",
    "TRANSCRIPT_CHAR_LIMIT",
    "Column",
    "ConfigMismatchError",
    "MissingBaselineError",
    "PreparedStart",
    "ReplayCoverageError",
    "ResultStore",
    "RunConfig",
    "RunEnd",
    "RunIncomplete",
    "RunInterrupted",
    "RunOwner",
    "RunPlan",
    "RunStatus",
    "RunSummary",
    "RunnerName",
    "SandboxRefusedError",
    "Unit",
    "UnitRows",
    "UnitTally",
    "UnitWritten",
    "UnknownRunError",
    "arrow_schema",
    "batch_label",
    "check_arms",
    "check_baseline",
    "check_model",
    "check_replay_covers",
    "check_same_experiment",
    "check_sandbox",
    "clear_stop",
    "dependencies_for",
    "execute_unit",
    "expand_matrix",
    "finish_run",
    "landed_units",
    "new_run_id",
    "owner_json",
    "owner_path",
    "preflight",
    "prepare_start",
    "request_stop",
    "resolve_run",
    "resolve_runs",
    "run_ids",
    "run_unit",
    "shown_status",
    "start_run",
    "stop_path",
    "stop_requested",
    "summarize_run",
    "tally_ahead",
    "tally_units",
    "unit_batches",
]
