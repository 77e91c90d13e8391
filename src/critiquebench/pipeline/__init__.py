"""The experiment: expanding the matrix, running units, and storing rows as Parquet."""

from critiquebench.pipeline._config import EXECUTION_FIELDS, RunConfig, new_run_id
from critiquebench.pipeline._preflight import (
    ConfigMismatchError,
    MissingBaselineError,
    ReplayCoverageError,
    check_baseline,
    check_model,
    check_replay_covers,
    check_same_experiment,
    preflight,
)
from critiquebench.pipeline._run import (
    RunEnd,
    RunIncomplete,
    RunPlan,
    RunStatus,
    UnitWritten,
    batch_label,
    dependencies_for,
    finish_run,
    run_unit,
    start_run,
    unit_batches,
)
from critiquebench.pipeline._schema import SCHEMA_VERSION, TABLES, Column, arrow_schema
from critiquebench.pipeline._store import ResultStore
from critiquebench.pipeline._units import Unit, UnitRows, execute_unit, expand_matrix

__all__ = [
    "EXECUTION_FIELDS",
    "SCHEMA_VERSION",
    "TABLES",
    "Column",
    "ConfigMismatchError",
    "MissingBaselineError",
    "ReplayCoverageError",
    "ResultStore",
    "RunConfig",
    "RunEnd",
    "RunIncomplete",
    "RunPlan",
    "RunStatus",
    "Unit",
    "UnitRows",
    "UnitWritten",
    "arrow_schema",
    "batch_label",
    "check_baseline",
    "check_model",
    "check_replay_covers",
    "check_same_experiment",
    "dependencies_for",
    "execute_unit",
    "expand_matrix",
    "finish_run",
    "new_run_id",
    "preflight",
    "run_unit",
    "start_run",
    "unit_batches",
]
