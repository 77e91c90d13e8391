"""The expectation suites: one per table, derived from the schema, the loop's vocabularies
and the specs of the run's arms (``ArmSpec``: the halts, roles and loop bound of each).

What differs per run (its id, its retry limit) comes in as expectation parameters;
the per-arm expectations come from the arms the run names. Columns that need another
table (an ``orphan`` flag, row counts per unit, contiguous iterations) are computed in
DuckDB beforehand, see ``_load.DERIVED_SQL``.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator, Mapping
from typing import Any, get_args

import pyarrow as pa

from critiquebench.loop import (
    BUILTIN_ARMS,
    HALT_REASONS,
    INFRASTRUCTURE_ERROR_PREFIXES,
    ArmError,
    ArmSpec,
    FeedbackMode,
    arm_name,
    resolve_arm,
)
from critiquebench.models import ROLES
from critiquebench.pipeline import TABLES, RunStatus
from critiquebench.quality._gx import lazily_loaded, without

# GX's own imports that no suite here calls are deferred, its optional backends left out.
with lazily_loaded(), without():
    import great_expectations as gx
    import great_expectations.expectations as gxe
    from great_expectations.data_context import EphemeralDataContext
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )
    from great_expectations.expectations.expectation import (
        ColumnMapExpectation,
        ColumnPairMapExpectation,
        Expectation,
        MulticolumnMapExpectation,
    )
    from great_expectations.expectations.expectation_configuration import (
        ExpectationConfiguration,
    )
    from great_expectations.expectations.row_conditions import Column as RowColumn

ArmSpecs = Mapping[str, ArmSpec | None]
"""The run's arms by name; None for an arm whose loop cannot be loaded where the check
runs (it then gets the checks every arm gets, not its own)."""
_ARM_NAME = r"[\w.:-]+"
RUN_STATUSES: tuple[str, ...] = get_args(RunStatus)
UNIT_KEY = ("run_id", "case_id", "arm", "rep")
ROW_KEYS: dict[str, tuple[str, ...]] = {
    "runs": ("run_id", "invocation_started_at", "status"),
    "cases": UNIT_KEY,
    "attempts": (*UNIT_KEY, "iteration"),
    "calls": (*UNIT_KEY, "call_index"),
}
"""Columns that identify an offending row in a report."""

RUN_ID = {"$PARAMETER": "run_ids"}
RETRY_LIMIT = {"$PARAMETER": "retry_limit"}


def _common(table: str, arms: ArmSpecs) -> list[gxe.Expectation]:
    """Required columns non-null, every count non-negative, rows belong to the run."""
    columns = TABLES[table]
    found: list[gxe.Expectation] = [
        gxe.ExpectTableColumnsToMatchSet(
            column_set=[c.name for c in columns],
            exact_match=False,
            description="every column of the schema is present",
        )
    ]
    found += [gxe.ExpectColumnValuesToNotBeNull(column=c.name) for c in columns if not c.nullable]
    found += [
        gxe.ExpectColumnValuesToBeBetween(column=c.name, min_value=0)
        for c in columns
        if pa.types.is_integer(c.type) or pa.types.is_floating(c.type)
    ]
    found.append(gxe.ExpectColumnValuesToBeInSet(column="run_id", value_set=RUN_ID))
    if table != "runs":
        found.append(
            gxe.ExpectColumnValuesToBeInSet(
                column="arm", value_set=list(arms), description="every arm is an arm of the run"
            )
        )
    return found


def _runs(arms: ArmSpecs) -> list[gxe.Expectation]:
    return [
        gxe.ExpectTableRowCountToBeBetween(min_value=1, description="the run has a runs row"),
        gxe.ExpectColumnValuesToBeInSet(column="status", value_set=list(RUN_STATUSES)),
        gxe.ExpectColumnValuesToBeInSet(column="feedback", value_set=list(get_args(FeedbackMode))),
        gxe.ExpectColumnValuesToMatchRegex(column="arms", regex=f"^{_ARM_NAME}(?:,{_ARM_NAME})*$"),
        gxe.ExpectColumnUniqueValueCountToBeBetween(
            column="retry_limit", min_value=1, max_value=1, description="one retry limit per run"
        ),
    ]


def _cases(arms: ArmSpecs) -> list[gxe.Expectation]:
    bounded = [name for name, spec in arms.items() if spec is None or spec.loops_bounded]
    return [
        gxe.ExpectCompoundColumnsToBeUnique(
            column_list=list(UNIT_KEY), description="one cases row per unit"
        ),
        gxe.ExpectColumnValuesToBeInSet(column="halt_reason", value_set=list(HALT_REASONS)),
        gxe.ExpectColumnValuesToMatchRegex(
            column="error",
            regex="^(?:" + "|".join(p.rstrip() for p in INFRASTRUCTURE_ERROR_PREFIXES) + ") ",
            description="an error is an infrastructure failure, never a model defect",
        ),
        gxe.ExpectColumnValuesToBeInSet(
            column="passed",
            value_set=[False],
            row_condition=RowColumn("error").is_not_null(),
            description="a unit with an infrastructure error never counts as passed",
            meta={"show": ["error"]},
        ),
        gxe.ExpectColumnValuesToBeBetween(
            column="loops",
            min_value=0,
            max_value=RETRY_LIMIT,
            row_condition=RowColumn("arm").is_in(bounded),
            description="loops within the run's retry limit (a user's own loop sets its own)",
            meta={"show": ["arm"]},
        ),
        gxe.ExpectColumnValuesToBeBetween(
            column="latency_s",
            min_value=0,
            strict_min=True,
            row_condition=RowColumn("calls") > 0,
            description="a unit that called the model took time",
            meta={"show": ["calls"]},
        ),
        gxe.ExpectColumnValuesToBeBetween(
            column="tokens_total",
            min_value=1,
            row_condition=RowColumn("tokens_expected") == True,  # noqa: E712 (builds a condition)
            description="tokens counted when a metered (live, uncached, ok) call was made",
            meta={"show": ["tokens_in", "tokens_out", "calls"]},
        ),
        *_total_at_least_tests(
            ("defects_total_initial", "defects_initial"), ("defects_total_final", "defects_final")
        ),
        *_raw_at_least_counted(
            ("defects_total_initial_raw", "defects_total_initial"),
            ("defects_total_final_raw", "defects_total_final"),
        ),
        gxe.ExpectColumnPairValuesToBeEqual(
            column_A="calls", column_B="call_rows", description="calls matches its rows in calls"
        ),
        gxe.ExpectColumnPairValuesToBeEqual(
            column_A="attempts",
            column_B="attempt_rows",
            description="attempts matches its rows in attempts",
        ),
    ]


def _total_at_least_tests(*pairs: tuple[str, str]) -> list[gxe.Expectation]:
    """A total of defects (tests + lint + types) is never below its tests' part; rows of
    runs written before lint and types were counted (schema < 3) have no total."""
    return [
        gxe.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A=total,
            column_B=tests,
            or_equal=True,
            ignore_row_if="either_value_is_missing",
            description=f"{total} counts every defect of {tests}, plus lint and types",
        )
        for total, tests in pairs
    ]


def _raw_at_least_counted(*pairs: tuple[str, str]) -> list[gxe.Expectation]:
    """The bounding rule only ever lowers a count: a raw count is never below the
    bounded one; rows written before the bound (schema < 6) have no raw count."""
    return [
        gxe.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A=raw,
            column_B=bounded,
            or_equal=True,
            ignore_row_if="either_value_is_missing",
            description=f"{raw} is {bounded} before the per-kind bound, never less",
        )
        for raw, bounded in pairs
    ]


def _attempts(arms: ArmSpecs) -> list[gxe.Expectation]:
    return [
        gxe.ExpectCompoundColumnsToBeUnique(column_list=[*UNIT_KEY, "iteration"]),
        *_total_at_least_tests(("defects_total", "defects")),
        *_raw_at_least_counted(("defects_total_raw", "defects_total")),
        gxe.ExpectColumnValuesToBeInSet(
            column="iteration_contiguous",
            value_set=[True],
            description="iterations run 0, 1, 2, ... within each unit",
            meta={"show": ["iteration"]},
        ),
        gxe.ExpectColumnValuesToBeInSet(
            column="orphan",
            value_set=[False],
            description="every attempt belongs to a unit in cases",
        ),
    ]


def _calls(arms: ArmSpecs) -> list[gxe.Expectation]:
    return [
        gxe.ExpectCompoundColumnsToBeUnique(column_list=[*UNIT_KEY, "call_index"]),
        gxe.ExpectColumnValuesToBeInSet(column="role", value_set=list(ROLES)),
        gxe.ExpectColumnValuesToBeInSet(
            column="orphan", value_set=[False], description="every call belongs to a unit in cases"
        ),
    ]


def _per_arm(table: str, arms: ArmSpecs) -> list[gxe.Expectation]:
    """What each arm's spec promises: its halt reasons, its call roles, no critic
    verdicts or killed findings where it has no critic or quorum."""
    found: list[gxe.Expectation] = []
    for name, spec in arms.items():
        if spec is None:
            continue
        scope: dict[str, Any] = {"row_condition": RowColumn("arm") == name}
        scope["meta"] = {"show": ["arm"]}
        ours = not spec.own_loop
        in_set, null = gxe.ExpectColumnValuesToBeInSet, gxe.ExpectColumnValuesToBeNull
        rules: list[tuple[bool, type[gxe.Expectation], dict[str, Any], str]] = [
            (table == "cases", in_set, {"column": "halt_reason", "value_set": list(spec.halts)},
             "stops only as its spec allows"),
            (table == "cases" and ours and not spec.quorum, in_set,
             {"column": "findings_killed", "value_set": [0]}, "has no quorum to kill findings"),
            (table == "calls", in_set, {"column": "role", "value_set": list(spec.roles)},
             "calls only its roles"),
            (table == "attempts" and ours and not spec.critic, null, {"column": "critic_verdict"},
             "has no critic"),
        ]  # fmt: skip
        found += [
            kind(**arguments, **scope, description=f"arm {name} {what}")
            for applies, kind, arguments, what in rules
            if applies
        ]
    return found


_SPECIFIC = {"runs": _runs, "cases": _cases, "attempts": _attempts, "calls": _calls}


def arms_of_run(runs: Any) -> dict[str, ArmSpec | None]:
    """The arms of a run by name, from its runs rows (a DataFrame); an arm whose loop
    cannot be loaded here maps to None."""
    if not len(runs):
        return dict.fromkeys(BUILTIN_ARMS)
    row = runs.iloc[-1]
    config = row.get("config_json")
    tokens = json.loads(config)["arms"] if isinstance(config, str) else str(row["arms"]).split(",")
    found: dict[str, ArmSpec | None] = {}
    for token in tokens:
        try:
            found[arm_name(token)] = resolve_arm(token)
        except ArmError:
            found[arm_name(token)] = None
    return found


def build_suite(table: str, arms: ArmSpecs = BUILTIN_ARMS) -> gx.ExpectationSuite:
    """The expectation suite of one table for a run of ``arms`` (parameters: ``run_ids``,
    ``retry_limit``)."""
    expectations = [*_common(table, arms), *_SPECIFIC[table](arms), *_per_arm(table, arms)]
    # The constructor skips add_expectation's pairwise duplicate search (quadratic), but
    # drops an invalid expectation with only a log line, so make sure none was lost.
    suite = gx.ExpectationSuite(name=f"critiquebench.{table}", expectations=expectations)
    if len(suite.expectations) != len(expectations):
        raise ValueError(f"an expectation of the {table} suite is invalid (see the log)")
    _number(suite)
    return suite


def _number(suite: gx.ExpectationSuite) -> None:
    """Give each expectation an id, its place in ``suite``: GX's results carry it, and
    come in an order of GX's own."""
    for index, expectation in enumerate(suite.expectations):
        expectation.id = f"{suite.name}:{index}"


def subsuite(
    suite: gx.ExpectationSuite, expectations: list[gxe.Expectation]
) -> gx.ExpectationSuite:
    """A suite of some of ``suite``'s ``expectations`` (copies), with their ids."""
    copies = [copy.copy(e) for e in expectations]
    part = gx.ExpectationSuite(name=suite.name, expectations=copies)
    for original, kept in zip(expectations, part.expectations, strict=True):
        kept.id = original.id
    return part


def row_by_row(expectation: gxe.Expectation) -> bool:
    """Whether ``expectation`` holds exactly when no row is unexpected (a map
    expectation that allows none): a count is all its result can add."""
    kinds = (ColumnMapExpectation, ColumnPairMapExpectation, MulticolumnMapExpectation)
    return isinstance(expectation, kinds) and getattr(expectation, "mostly", 1) == 1


def ephemeral_context() -> EphemeralDataContext:
    """An in-memory GX context: nothing written to disk, no analytics, no progress bars."""
    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False),
    )
    return gx.get_context(mode="ephemeral", project_config=config)


@contextlib.contextmanager
def configurations_kept() -> Iterator[None]:
    """While inside, each expectation builds its ``configuration`` once, then gives the
    same object again (one thread only: the check validates on one).

    GX's ``Expectation.configuration`` is a property that converts the whole expectation
    (a pydantic model) into a new ``ExpectationConfiguration`` at every read, and a
    validation reads it once per keyword of each expectation, 21,000 times for the four
    tables of a run; the expectations a validation reads are its own copies, which it
    does not change once made. Measured gain: validating a clean 328-unit run took
    2.0-2.2 CPU-s instead of 2.9-3.5 (3 interleaved rounds in one process, load 12).
    """
    built: property = Expectation.__dict__["configuration"]
    kept: dict[int, tuple[Expectation, ExpectationConfiguration]] = {}

    def configuration(expectation: Expectation) -> ExpectationConfiguration:
        # The expectation is kept with its configuration, so its id is not reused.
        entry = kept.get(id(expectation))
        if entry is None or entry[0] is not expectation:
            entry = kept[id(expectation)] = (expectation, built.__get__(expectation))
        return entry[1]

    Expectation.configuration = property(configuration)  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        Expectation.configuration = built  # type: ignore[method-assign,assignment]
