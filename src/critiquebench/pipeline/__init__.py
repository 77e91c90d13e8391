"""The experiment: expanding the matrix, running units, and storing rows as Parquet.

Running units (``_run``, ``_units``) needs the loop (LangGraph), the tables need
pyarrow: those names are imported on first use, so reading a ``RunConfig`` or
refusing one stays fast.
"""

from typing import TYPE_CHECKING

from critiquebench._lazy import lazy_exports
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
    StoreField,
    new_run_id,
)
from critiquebench.pipeline._location import (
    Root,
    StoreURLError,
    is_remote,
    parquet_files,
    read_parquet,
    read_parquet_files,
    store_root,
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

if TYPE_CHECKING:
    from critiquebench.pipeline._head_start import PreparedStart, RunHeadStart, begin_run
    from critiquebench.pipeline._run import (
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
    **dict.fromkeys(("PreparedStart", "RunHeadStart", "begin_run"), "_head_start"),
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
    "Root",
    "RunConfig",
    "RunEnd",
    "RunHeadStart",
    "RunIncomplete",
    "RunInterrupted",
    "RunOwner",
    "RunPlan",
    "RunStatus",
    "RunSummary",
    "RunnerName",
    "SandboxRefusedError",
    "StoreField",
    "StoreURLError",
    "Unit",
    "UnitRows",
    "UnitTally",
    "UnitWritten",
    "UnknownRunError",
    "arrow_schema",
    "batch_label",
    "begin_run",
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
    "is_remote",
    "landed_units",
    "new_run_id",
    "owner_json",
    "owner_path",
    "parquet_files",
    "preflight",
    "read_parquet",
    "read_parquet_files",
    "request_stop",
    "resolve_run",
    "resolve_runs",
    "run_ids",
    "run_unit",
    "shown_status",
    "start_run",
    "stop_path",
    "stop_requested",
    "store_root",
    "summarize_run",
    "tally_ahead",
    "tally_units",
    "unit_batches",
]
