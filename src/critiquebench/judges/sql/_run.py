"""Running a query's checks in the sandbox, and reading back what each check returned.

The sandbox receives the trusted harness (``_harness.py``) as the attempt's code
and, per check, one plain-data call: the fixture's DDL and INSERTs, the query and
the limits. It never receives the expected rows. Its output is read here as hostile
bytes, with the readers every sandboxed judge shares (``judges.sandbox``); the request
and its one retry are shared too.
"""

from __future__ import annotations

import importlib.util
import secrets
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from critiquebench.judges._case import Case, Check
from critiquebench.judges._failure import FailureKind
from critiquebench.judges._plain import MalformedValue, clean_text, decode
from critiquebench.judges.sandbox import (
    CandidateCall,
    RawAttempt,
    Sandbox,
    SandboxExtras,
    SandboxLimits,
    SandboxUnavailable,
    ValueCheck,
    attempt_request,
    judge_attempt,
    read_events,
    stalled,
    unfinished_failure,
)
from critiquebench.judges.sql._spec import SqlCheckSpec

HARNESS_SOURCE = Path(__file__).with_name("_harness.py")
HARNESS_ENTRY = "sql_check"


def duckdb_extras() -> SandboxExtras:
    """The parent's DuckDB for the sandbox: its package, compiled module (where it lives
    beside it) and metadata (DuckDB reads its own version at import) bound read-only,
    its folder on the module path, and imported once per worker. Found without
    importing it; empty when it is not installed (the harness then reports that)."""
    package = importlib.util.find_spec("duckdb")
    if package is None or not package.submodule_search_locations:
        return SandboxExtras()
    folder = Path(next(iter(package.submodule_search_locations))).resolve()
    binds = [folder]
    compiled = importlib.util.find_spec("_duckdb")
    if compiled is not None and compiled.origin:
        binds.append(Path(compiled.origin).resolve())
    binds += sorted(folder.parent.glob("duckdb-*.dist-info"))
    return SandboxExtras(tuple(binds), str(folder.parent), ("duckdb",))


@dataclass(frozen=True)
class CheckRun:
    """What running one check gave: a tag (``rows``, ``error``, ``timeout``,
    ``not_a_query``, ``fixture``, ``unavailable``), a message, and for ``rows`` the result."""

    tag: str
    message: str = ""
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    truncated: bool = False


@dataclass(frozen=True)
class AttemptRun:
    """Every check's run, or the reason the judge could not judge."""

    checks: list[CheckRun]
    infrastructure_error: str | None = None
    owned_kind: FailureKind = "crash"
    """The defect ``infrastructure_error`` becomes if a control proves the answer caused it."""


def run_checks(
    sandbox: Sandbox,
    case: Case,
    query: str,
    limits: SandboxLimits,
    max_rows: int,
) -> AttemptRun:
    """Run ``query`` once per check of ``case``, each on a fresh fixture, in the sandbox."""
    chars = max(10_000, limits.results_bytes // (2 * max(1, len(case.checks))))
    location = sandbox.mode.extras.import_path
    plans = [
        ValueCheck((CandidateCall((_job(case, check, query, location, limits, max_rows, chars),)),))
        for check in case.checks
    ]
    # Every check may use its whole CPU limit; the attempt's CPU budget allows for that.
    wall = max(limits.wall_s, len(plans) * limits.check_timeout_s + 5.0)
    limits = replace(limits, wall_s=wall)
    harness = Case(id=case.id, prompt="sql harness", entry_point=HARNESS_ENTRY, checks=())
    nonce = secrets.token_hex(16)
    harness_code = HARNESS_SOURCE.read_text(encoding="utf-8")
    request = attempt_request(harness, harness_code, plans, limits, nonce)
    try:
        raw = judge_attempt(sandbox, request)
    except SandboxUnavailable as exc:
        return AttemptRun([], f"sandbox unavailable: {exc}")
    return _read(len(plans), raw, nonce, limits)


def _job(
    case: Case,
    check: Check,
    query: str,
    location: str,
    limits: SandboxLimits,
    max_rows: int,
    max_chars: int,
) -> dict[str, Any]:
    spec = SqlCheckSpec.of(check)
    return {
        "path": location,
        "schema": str(case.judge_data.get("schema", "")),
        "data": spec.data,
        "query": query,
        "timeout_s": limits.check_timeout_s,
        "max_rows": max_rows,
        "max_chars": max_chars,
    }


def _read(count: int, raw: RawAttempt, nonce: str, limits: SandboxLimits) -> AttemptRun:
    report = raw.report
    if report.get("supervisor_error"):
        return AttemptRun(
            [], f"sandbox supervisor failed: {clean_text(report['supervisor_error'])}"
        )
    events, unreadable = read_events(raw.output, nonce)
    found: dict[int, CheckRun] = {}
    done = False
    halt = ""
    for event in events:
        kind = event.get("e")
        if kind == "done":
            done = True
        elif kind == "halt" and not halt:
            halt = "stalled" if event.get("why") == "stalled" else "stuck"
        elif kind == "fatal":
            # The attempt's code is the trusted harness: failing to define it is ours.
            return AttemptRun(
                [], f"the sql harness failed: {clean_text(str(event.get('message')))}"
            )
        elif kind == "check":
            index = event.get("i")
            if type(index) is int and 0 <= index < count and index not in found:
                found[index] = _check_run(event)
                if event.get("kind") == "stalled":
                    halt = halt or "stalled"
    suspicion = stalled(report, halt, limits)
    if suspicion is not None:
        return AttemptRun([], suspicion, "timeout")
    if done and unreadable:
        return AttemptRun([], f"{unreadable} unreadable line(s) from the sql harness")
    if done:
        stopped = CheckRun("error", "the query was stopped: the harness gave no result")
    else:
        # A query that used up the CPU budget (e.g. a function that ignores DuckDB's
        # interrupt) is the query's timeout, whatever the host's load.
        why = unfinished_failure(report, limits, halt)
        tag = "timeout" if why.kind == "timeout" else "error"
        stopped = CheckRun(tag, f"the query was stopped: {why.message}")
    return AttemptRun([found.get(index) or stopped for index in range(count)])


def _check_run(event: dict[str, Any]) -> CheckRun:
    """One check's event as a run; anything malformed is the query's error."""
    kind = event.get("kind")
    if kind in ("timeout", "stalled"):
        return CheckRun("timeout", "the query exceeded its time limit")
    if kind is not None:
        return CheckRun("error", clean_text(str(event.get("message", kind))))
    values = event.get("values")
    try:
        decoded = decode(values[0]) if isinstance(values, list) and len(values) == 1 else None
    except MalformedValue as exc:
        return CheckRun("error", f"unreadable result: {exc}")
    if not isinstance(decoded, list) or not decoded or not isinstance(decoded[0], str):
        return CheckRun("error", "unreadable result")
    tag, *rest = decoded
    if tag == "rows" and len(rest) == 3 and isinstance(rest[0], list) and isinstance(rest[1], list):
        rows = [row if isinstance(row, list) else [row] for row in rest[1]]
        return CheckRun("rows", "", [str(c) for c in rest[0]], rows, bool(rest[2]))
    message = clean_text(str(rest[0])) if rest else ""
    if tag in ("error", "timeout", "not_a_query", "fixture", "unavailable"):
        return CheckRun(tag, message)
    return CheckRun("error", "unreadable result")
