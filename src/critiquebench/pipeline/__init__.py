"""The experiment: expanding the matrix, running units, and storing rows as Parquet."""

from critiquebench.pipeline._config import RunConfig, new_run_id
from critiquebench.pipeline._run import (
    RunPlan,
    dependencies_for,
    finish_run,
    run_unit,
    start_run,
)
from critiquebench.pipeline._schema import SCHEMA_VERSION, TABLES, Column, arrow_schema
from critiquebench.pipeline._store import ResultStore
from critiquebench.pipeline._units import Unit, UnitRows, execute_unit, expand_matrix

__all__ = [
    "SCHEMA_VERSION",
    "TABLES",
    "Column",
    "ResultStore",
    "RunConfig",
    "RunPlan",
    "Unit",
    "UnitRows",
    "arrow_schema",
    "dependencies_for",
    "execute_unit",
    "expand_matrix",
    "finish_run",
    "new_run_id",
    "run_unit",
    "start_run",
]
