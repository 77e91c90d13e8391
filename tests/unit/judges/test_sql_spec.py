"""The sql case's fixture scripts (schema DDL, a check's INSERTs): every message exactly."""

from __future__ import annotations

from typing import Any

import pytest

from critiquebench.judges.sql._spec import case_problems
from critiquebench.suites import Case, Check

SCHEMA = "CREATE TABLE t (id INTEGER);"
REQUIRED = (
    "judge_data.schema: required, the DDL creating the fixture's tables, "
    'e.g. "CREATE TABLE t (id INTEGER, name VARCHAR);"'
)
WHERE = "check 'c' (heldout_checks[0])"


def _problems(judge_data: dict[str, Any], **spec: Any) -> list[str]:
    check = Check(source="c", origin="heldout", line=1, spec={"expected": [[1]], **spec})
    return case_problems(
        Case(id="s", prompt="p", judge="sql", judge_data=judge_data, checks=(check,))
    )


@pytest.mark.parametrize(
    ("schema", "problems"),
    [
        (SCHEMA, []),
        (None, [REQUIRED]),
        ("  \n", [REQUIRED]),
        (7, [REQUIRED]),
        (
            "INSERT INTO t VALUES (1);",
            ["judge_data.schema: holds INSERT statement(s); only CREATE statements belong here"],
        ),
    ],
)
def test_the_schema_is_required_ddl(schema: Any, problems: list[str]) -> None:
    judge_data = {} if schema is None else {"schema": schema}
    assert _problems(judge_data) == problems


@pytest.mark.parametrize(
    ("data", "problems"),
    [
        ("", []),
        ("  ", []),  # a blank script adds no rows: the check runs on empty tables
        ("INSERT INTO t VALUES (1);", []),
        (["INSERT INTO t VALUES (1);"], ["field 'data': give the INSERT statements as one string"]),
        (
            "CREATE TABLE u (x INTEGER);",
            ["field 'data': holds CREATE statement(s); only INSERT statements belong here"],
        ),
        ("INSERT INTO t VALUE (1)", ["field 'data': does not parse as DuckDB SQL"]),
    ],
)
def test_a_checks_data_is_optional_inserts(data: Any, problems: list[str]) -> None:
    found = _problems({"schema": SCHEMA}, data=data)
    assert all(text.startswith(f"{WHERE}: ") for text in found)
    # DuckDB's own parser message varies by version: compare up to its opening bracket
    shown = [text.removeprefix(f"{WHERE}: ").split(" (", 1)[0] for text in found]
    assert shown == problems
