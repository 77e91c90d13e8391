"""Validating rows with Great Expectations for the check that follows a run (``_incremental``).

A row-level expectation (``ROW_LEVEL``) holds on a table when it holds on each row,
and its verdict on a row depends on the row alone (its derived columns included)
and on the run's setting (``Setting``): so rows can be validated in chunks, and a
row validated once, as it is, needs no second look.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import great_expectations as gx
import great_expectations.expectations as gxe
import pyarrow as pa

from critiquebench.pipeline import TABLES
from critiquebench.quality._check import Frame, outcome_of, validate_suites
from critiquebench.quality._landed import one_thread
from critiquebench.quality._load import derived_tables
from critiquebench.quality._report import ExpectationOutcome
from critiquebench.quality._suites import ArmSpecs, arms_of_run, build_suite

ROW_LEVEL: tuple[type[gxe.Expectation], ...] = (
    gxe.ExpectColumnValuesToNotBeNull,
    gxe.ExpectColumnValuesToBeNull,
    gxe.ExpectColumnValuesToBeBetween,
    gxe.ExpectColumnValuesToBeInSet,
    gxe.ExpectColumnValuesToMatchRegex,
    gxe.ExpectColumnPairValuesToBeEqual,
    gxe.ExpectColumnPairValuesAToBeGreaterThanB,
)
"""Expectations whose verdict on a row depends on that row alone (uniqueness does not)."""

Setting = tuple[int | None, tuple[tuple[str, Any], ...]]
"""What the suites and their parameters depend on: the retry limit and the arms."""


@dataclass(frozen=True)
class Verdict:
    """One expectation on some rows: whether it held, its full outcome (if asked for),
    whether GX caught an exception in it."""

    held: bool
    outcome: ExpectationOutcome | None
    raised: bool


Verdicts = dict[str, dict[int, Verdict]]
"""By table, by position in its suite."""


@dataclass(frozen=True)
class Frames:
    """Derived tables (Arrow) and what their rows were validated under."""

    derived: dict[str, pa.Table]
    retry_limit: int | None
    arms: ArmSpecs

    @property
    def setting(self) -> Setting:
        return self.retry_limit, tuple(self.arms.items())

    def pandas(self, tables: tuple[str, ...] = tuple(TABLES)) -> dict[str, Frame]:
        return {table: self.derived[table].to_pandas() for table in tables}


def derive(base: dict[str, pa.Table], runs: pa.Table) -> Frames:
    """The derived tables of ``base``, under the setting of the ``runs`` rows."""
    with one_thread() as connection:
        for table, data in base.items():
            connection.register(table, data)
        derived, _ = derived_tables(connection)
    with one_thread() as connection:
        connection.register("runs", runs)
        ordered = connection.sql("SELECT * FROM runs ORDER BY invocation_started_at")
        arms = arms_of_run(ordered.to_arrow_table().to_pandas())
        (limit,) = connection.execute("SELECT max(retry_limit) FROM runs").fetchall()[0]
    retry_limit = None if limit is None else int(limit)
    return Frames(derived, retry_limit, arms)


def row_level(table: str, arms: ArmSpecs) -> list[int]:
    """Positions of the row-level expectations in ``table``'s suite."""
    suite = build_suite(table, arms)
    return [i for i, e in enumerate(suite.expectations) if isinstance(e, ROW_LEVEL)]


def verdicts_of(
    run_id: str, frames: Frames, chosen: dict[str, list[int]], summary: bool
) -> Verdicts:
    """Validate each table's chosen expectations (positions in its suite) on ``frames``."""
    parameters = {"run_ids": [run_id], "retry_limit": frames.retry_limit}
    tables = tuple(t for t in chosen if chosen[t])
    pandas = frames.pandas(tables)
    jobs = {}
    for table in tables:
        suite = build_suite(table, frames.arms)
        suite.expectations = [suite.expectations[i] for i in chosen[table]]
        for i, expectation in zip(chosen[table], suite.expectations, strict=True):
            expectation.id = str(i)  # GX orders results its own way: the id finds each
        jobs[table] = (pandas[table], suite)
    found = validate_suites(jobs, parameters, summary=summary)
    verdicts: Verdicts = {}
    for table, results in found.items():
        verdicts[table] = {}
        for result in results:
            assert result.expectation_config is not None  # filled in for every result
            outcome = outcome_of(table, result, pandas[table]) if summary else None
            raised = bool((result.exception_info or {}).get("raised_exception"))
            verdicts[table][int(str(result.expectation_config.id))] = Verdict(
                bool(result.success), outcome, raised
            )
    return verdicts


def gx_order(suite: gx.ExpectationSuite) -> list[int]:
    """Positions of ``suite``'s expectations in the order GX reports them when none
    raised: grouped by column, in the order each column first appears (GX's
    ``process_expectations_for_validation``); those without one column form a group."""
    groups: dict[object, list[int]] = {}
    for i, expectation in enumerate(suite.expectations):
        column = expectation.configuration.kwargs.get("column")
        groups.setdefault(column if isinstance(column, str) else None, []).append(i)
    return [i for group in groups.values() for i in group]


def validate_rows(run_id: str, frames: Frames, summary: bool) -> Verdicts:
    """The row-level expectations of every table with rows in ``frames``."""
    chosen = {t: row_level(t, frames.arms) for t in TABLES if len(frames.derived[t])}
    return verdicts_of(run_id, frames, chosen, summary)


def unseen_rows(
    derived: dict[str, pa.Table], validated: list[dict[str, pa.Table]]
) -> dict[str, pa.Table]:
    """Each table's rows (derived columns and all) that no validated chunk held as they are."""
    connection = one_thread()
    try:
        found = {}
        for table in TABLES:
            connection.register("now_rows", derived[table])
            try:
                earlier = pa.concat_tables([derived_rows[table] for derived_rows in validated])
            except pa.ArrowInvalid:  # another shape: none of them counts as validated
                found[table] = derived[table]
                continue
            connection.register("validated_rows", earlier)
            query = "SELECT * FROM now_rows EXCEPT SELECT * FROM validated_rows"
            found[table] = connection.sql(query).to_arrow_table()
        return found
    finally:
        connection.close()
