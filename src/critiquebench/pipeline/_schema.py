"""The Parquet tables: one versioned schema per table, one docstring per column.

Layout under the output folder (default ``data/runs``)::

    <run_id>/runs/<invocation>.parquet   one row per start of the run
    <run_id>/cases/<batch>.parquet       one row per (case, arm, rep) unit of a batch
    <run_id>/attempts/<batch>.parquet    one row per attempt of those units
    <run_id>/calls/<batch>.parquet       one row per model call of those units
    <run_id>/transcripts/<batch>.parquet what each call was asked and answered, and the
                                         feedback each attempt was shown (zstd)
    <run_id>/compactions/<part>.json     the batch files a compacted part replaces
    <run_id>/superseded/<unit>/<stamp>/  earlier rows of a unit that was rerun after
                                         an infrastructure error (kept, never read)

A batch is ``<stamp>-<name>-n<units>``, a compacted part ``<stamp>-part-n<units>``;
runs written before batches have one file per unit, named by its key. Which files
count is ``pipeline/_layout.py``'s rule (a batch counts once its cases file exists).

Every file carries ``run_id``; the files ``live_files`` lists are the table, with
exactly one cases row per unit: the latest.

Version 2 added to ``runs``: ``config_json``, ``experiment_hash``,
``stagnation_patience``, ``units_retried``, ``units_errored`` and the status
``incomplete``; ``cases.error`` now holds infrastructure failures only.
Version 3: the configuration columns of ``runs`` are generated from ``RunConfig``,
one per field (``limit`` is ``case_limit``), so none is missing (it added
``quorum_threshold``, ``cache``, ``cache_dir``, the rate limits, ``output``,
``task_runner``, ``dask_address``, ``prices`` and ``target``); their integers are int64.

Version 3 also added lint (ruff) and type (mypy) findings as defect kinds of their own:
``attempts.defects_total``, ``defects_lint``, ``defects_types``, ``lint_findings``,
``types_findings``; ``cases.defects_total_initial``, ``defects_total_final``,
``final_lint``, ``final_types``, ``final_lint_findings``, ``final_types_findings``.
``defects``/``defects_initial``/``defects_final``/``passed`` keep counting tests only;
``defects_feedback`` now includes the lint and type findings the loop was shown.

Version 4 added the judges of other artifacts (``sql``, ``json``, ``markdown``,
``trigger``): their defect kinds' columns (``attempts.defects_sql`` ...,
``cases.final_sql`` ...), and ``cases.judge`` and ``cases.judge_data``, so a
report can group by judge and read a case's labels (a trigger case's expected
decision) without the suite file. Their defects are ``failures`` like failed
tests: ``defects``/``passed`` count them.

Version 5 added to ``runs``: ``content_json`` (path and SHA-256 of the suite, replay
and price files, which ``experiment_hash`` now covers) and ``prices_json`` (the
price table's text as the run read it, so a report from any folder prices with
it). Both are null in older rows: those runs are reported and resumed as before.

Version 6 bounds a unit's count per defect kind (``judges.counted``, README "Bounded
counts"): ``defects``, ``defects_total``, ``defects_<kind>`` and their ``cases``
counterparts count at most ``COUNT_BOUND`` per kind (lint and types: distinct file,
line and rule); the raw counts are kept in ``attempts.defects_total_raw``,
``defects_raw_by_kind``, ``cases.defects_total_initial_raw``,
``defects_total_final_raw`` and ``final_raw_by_kind`` (null in older rows, whose
counts were never bounded).

Version 7 added the side table ``transcripts`` (``TRANSCRIPTS``): every model call's
messages and reply, the verdict read from a critic's or reviewer's reply, and per
attempt the feedback the loop was shown, each text at most ``TRANSCRIPT_CHAR_LIMIT``
characters. It is not one of ``TABLES`` (the measured tables the report and the data
checks read) but of ``SIDE_TABLES``; runs before v7 have none and read as no rows.

Version 8 gives "pass" one meaning: ``cases.passed`` is True when the answer kept has
no measured defect of any kind (tests, lint, types and every kind of its judge:
``defects_total_final`` is 0) and the unit was measured; ``cases.tests_passed`` is
the old test-only flag (every check passes, lint and type findings not counted).
Halt reasons say what happened: ``visible_clean`` (was ``passed``: what the loop is
shown is clean), ``retry_limit`` (was ``budget_exhausted``), ``single_draft`` (was
``single_pass``). Readers (``analysis`` views) map older rows on read: an older
``passed`` is their ``tests_passed``, their ``passed`` is derived from
``defects_total_final``, and the old halt names read as the new ones.

Version 9 names the tokens of ``calls`` for what they hold. ``paid_tokens_in`` and
``paid_tokens_out`` (were ``tokens_in``/``tokens_out``) are the tokens paid in this
run: 0 for a cache hit, so of two arms sharing a first draft through the cache only
the first pays. ``experiment_tokens_in`` and ``experiment_tokens_out`` (were
``original_tokens_in``/``original_tokens_out``) are what the call cost when first made,
cache hit or not: the experiment's tokens, which the report's cost and every token
figure of the report use. Readers map older rows on read (``LEGACY_COLUMNS``) and keep
the old names as aliases of the new ones, so a query written before v9 still runs.
"""

from __future__ import annotations

import functools
import json
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pyarrow as pa
from upath import UPath

from critiquebench.judges import FAILURE_KINDS, STATIC_KINDS, TEST_KINDS
from critiquebench.pipeline._config import RunConfig

SCHEMA_VERSION = 9

RunStatus = Literal["running", "completed", "incomplete", "failed", "interrupted"]
"""Status of a start of a run, as the ``runs`` table records it (its ``status`` column)."""

TRANSCRIPT_CHAR_LIMIT = 16_000
"""Most characters kept of one message or reply in ``transcripts`` (head and tail)."""


@dataclass(frozen=True)
class Column:
    """A column: name, Arrow type, whether it may be null, and what it means."""

    name: str
    type: pa.DataType
    doc: str
    nullable: bool = False


CONFIG_COLUMN_NAMES = {"limit": "case_limit"}
"""Columns of ``runs`` not named as their ``RunConfig`` field (LIMIT is an SQL keyword)."""
_META_FIELDS = ("run_id",)  # a column of runs already, as in every table


def _arrow_type(annotation: Any) -> tuple[pa.DataType, bool]:
    """The Arrow type of a field's annotation, and whether it may be None."""
    nullable = False
    if get_origin(annotation) in (Union, types.UnionType):
        args = [arg for arg in get_args(annotation) if arg is not type(None)]
        nullable = len(args) < len(get_args(annotation))
        annotation = args[0] if len(args) == 1 else str
    if annotation is bool:
        return pa.bool_(), nullable
    if annotation is int:
        return pa.int64(), nullable
    if annotation is float:
        return pa.float64(), nullable
    # str, Path, Literal choices, and sequences (stored comma-separated) are text
    return pa.string(), nullable


def config_columns() -> list[Column]:
    """One ``runs`` column per ``RunConfig`` field: its setting in this start."""
    columns = []
    for name, info in RunConfig.model_fields.items():
        if name in _META_FIELDS:
            continue
        arrow_type, nullable = _arrow_type(info.annotation)
        doc = (
            f"{info.description} (RunConfig.{name}; null = none.)"
            if nullable
            else (f"{info.description} (RunConfig.{name}.)")
        )
        columns.append(Column(CONFIG_COLUMN_NAMES.get(name, name), arrow_type, doc, nullable))
    return columns


def _cell(value: object) -> object:
    if isinstance(value, tuple | list):
        return ",".join(str(item) for item in value)
    if isinstance(value, Path | UPath):
        return str(value)
    return value


def config_row(config: RunConfig) -> dict[str, Any]:
    """The configuration columns of a ``runs`` row for ``config``.

    ``arms`` holds the arms' names, as in ``cases.arm``; ``config_json`` keeps each
    arm's full reference (``NAME=MODULE:CALLABLE``)."""
    row = {
        CONFIG_COLUMN_NAMES.get(name, name): _cell(getattr(config, name))
        for name in RunConfig.model_fields
        if name not in _META_FIELDS
    }
    row["arms"] = ",".join(config.arm_names)
    row.update(content_row(config))
    return row


def content_row(config: RunConfig) -> dict[str, Any]:
    """``content_json`` and ``prices_json`` of a ``runs`` row for ``config``, read now."""
    files = config.content_files()
    try:
        prices: str | None = config.prices.read_text(encoding="utf-8", errors="replace")
    except OSError:
        prices = None  # no table: the run's costs are 0, wherever it is reported
    return {
        "content_json": json.dumps({f.role: f.as_json() for f in files}, sort_keys=True),
        "prices_json": prices,
    }


def _unit_columns() -> list[Column]:
    return [
        Column("run_id", pa.string(), "Run identifier; the folder the row lives in."),
        Column("case_id", pa.string(), "Case id within the suite."),
        Column(
            "arm",
            pa.string(),
            "Arm name: a built-in arm A-E or R (see BUILTIN_ARMS; A = baseline) or a user's "
            "own loop, named as in --arms.",
        ),
        Column("rep", pa.int32(), "Repetition number, from 0."),
    ]


_KIND_DOCS = {
    "lint": "Lint defects: ruff findings (judges/static/_checker.py RUFF_RULES; 0 when not run).",
    "types": "Type defects: mypy errors (judges/static/_checker.py MYPY_FLAGS; 0 when not run).",
    "sql": "SQL judge defects: an error, a missing or extra row, a wrong value.",
    "json": "JSON judge defects: schema violations and wrong field values.",
    "markdown": "Markdown judge defects: missing sections, broken links, bad code blocks, "
    "misspellings.",
    "trigger": "Trigger judge defects: a wrong or missing trigger decision.",
}


def _kind_columns(prefix: str) -> list[Column]:
    # Every kind's column holds the bounded count (judges.counted); the raw one is in
    # the table's raw-by-kind JSON when the bound lowered it.
    return [
        Column(
            f"{prefix}_{kind}",
            pa.int32(),
            _KIND_DOCS.get(kind, f"Defects of kind '{kind}'.")
            + ("" if kind in TEST_KINDS else " At most COUNT_BOUND (README 'Bounded counts')."),
        )
        for kind in FAILURE_KINDS
    ]


def _findings_columns(prefix: str) -> list[Column]:
    return [
        Column(
            f"{prefix}{kind}_findings",
            pa.string(),
            f"JSON list of the {kind} findings: file, line, code, message.",
        )
        for kind in STATIC_KINDS
    ]


RUNS = [
    Column("run_id", pa.string(), "Run identifier."),
    Column("schema_version", pa.int32(), "Version of these table schemas."),
    Column("invocation_started_at", pa.timestamp("us", tz="UTC"), "When this start began."),
    Column(
        "finished_at",
        pa.timestamp("us", tz="UTC"),
        "When it ended; null if it never did.",
        nullable=True,
    ),
    Column(
        "status",
        pa.string(),
        "running; completed (every unit finished, data checks passed); incomplete (some "
        "units failed for infrastructure reasons or raised: rerun with the same run id); "
        "failed (the data-quality checks failed).",
    ),
    *config_columns(),
    Column(
        "config_json",
        pa.string(),
        "JSON: every RunConfig field of this start (null in v1 rows).",
        nullable=True,
    ),
    Column(
        "experiment_hash",
        pa.string(),
        "SHA-256 prefix of the experiment settings (RunConfig minus EXECUTION_FIELDS); "
        "every start of a run has the same one (null in v1 rows).",
        nullable=True,
    ),
    Column(
        "content_json",
        pa.string(),
        "JSON: {role: {path, sha256}} of the suite, replay and price files this start "
        "read (sha256 'absent' for a missing file); the experiment hash covers the digests "
        "(null before v5).",
        nullable=True,
    ),
    Column(
        "prices_json",
        pa.string(),
        "The price table's text as this start read it (null: there was none, or a row "
        "before v5); reports price the run with it unless given --prices.",
        nullable=True,
    ),
    Column("units_planned", pa.int32(), "Units in the full matrix."),
    Column("units_skipped", pa.int32(), "Units finished by an earlier start (not rerun)."),
    Column(
        "units_retried",
        pa.int32(),
        "Units this start reran because an earlier start recorded an infrastructure "
        "error for them (null in v1 rows).",
        nullable=True,
    ),
    Column("units_failed", pa.int32(), "Units that raised instead of writing rows."),
    Column(
        "units_errored",
        pa.int32(),
        "Units whose cases row records an infrastructure error when this start ended "
        "(null while running and in v1 rows).",
        nullable=True,
    ),
    Column(
        "quality",
        pa.string(),
        "passed or failed: the data-quality checks of this start.",
        nullable=True,
    ),
    Column("sandbox", pa.string(), "Fences the judge achieved (network, user) and gaps."),
    Column("versions", pa.string(), "JSON: versions of critiquebench and its key libraries."),
]

CASES = [
    *_unit_columns(),
    Column("suite", pa.string(), "Suite name or path."),
    Column(
        "judge",
        pa.string(),
        "The case's judge (python, sql, json, markdown, trigger or a registered one); "
        "null before v4 (python).",
    ),
    Column(
        "judge_data",
        pa.string(),
        "JSON: the case's judge data (fixture, schema, description and labels); '{}' "
        "for Python cases; null before v4.",
    ),
    Column("model", pa.string(), "Model that produced the artifacts."),
    Column("defects_initial", pa.int32(), "Test defects of the first draft, over every check."),
    Column("defects_final", pa.int32(), "Test defects of the final answer, over every check."),
    Column("defects_feedback_final", pa.int32(), "Final defects visible to the loop."),
    Column(
        "defects_total_initial",
        pa.int32(),
        "Measured defects of the first draft: tests + lint + types (null before v3).",
        nullable=True,
    ),
    Column(
        "defects_total_final",
        pa.int32(),
        "Measured defects of the final answer: tests + lint + types; the report's mean "
        "defects and reduction use it (null before v3: read as defects_final).",
        nullable=True,
    ),
    Column(
        "defects_total_initial_raw",
        pa.int32(),
        "defects_total_initial before the per-kind bound (README 'Bounded counts'); "
        "greater only when the rule lowered a count (null before v6).",
        nullable=True,
    ),
    Column(
        "defects_total_final_raw",
        pa.int32(),
        "defects_total_final before the per-kind bound (null before v6).",
        nullable=True,
    ),
    Column(
        "final_raw_by_kind",
        pa.string(),
        "JSON {kind: raw count} of the final answer's kinds the bound lowered; '{}' when "
        "none was (null before v6).",
        nullable=True,
    ),
    *_kind_columns("final"),
    *_findings_columns("final_"),
    Column("checks_total", pa.int32(), "Number of checks of the case."),
    Column(
        "passed",
        pa.bool_(),
        "True when the answer kept has no measured defect of any kind (defects_total_final "
        "is 0: tests, lint, types, ...); never with an error. Before v8 it was tests_passed.",
    ),
    Column(
        "tests_passed",
        pa.bool_(),
        "True when the answer kept passes every check (lint and type findings not counted); "
        "never with an error (null before v8: read as that version's passed).",
        nullable=True,
    ),
    Column("loops", pa.int32(), "Fix rounds taken (0..retry_limit)."),
    Column("attempts", pa.int32(), "Artifacts produced (loops + 1 unless a call failed)."),
    Column("final_iteration", pa.int32(), "Iteration of the answer kept (the best attempt)."),
    Column(
        "halt_reason",
        pa.string(),
        "Why the loop stopped (loop.HALT_REASONS; v8 renamed passed, budget_exhausted and "
        "single_pass to visible_clean, retry_limit and single_draft).",
    ),
    Column(
        "escalated",
        pa.bool_(),
        "True when the loop gave up; False for visible_clean, critic_ok, single_draft, own_loop.",
    ),
    Column("latency_s", pa.float64(), "Unit time with cached calls at their original latency."),
    Column("wall_s", pa.float64(), "Wall time of the unit in this run, seconds."),
    Column("model_latency_s", pa.float64(), "Model time of the unit (original latencies)."),
    Column("judge_latency_s", pa.float64(), "Time spent judging, seconds."),
    Column("tokens_in", pa.int64(), "Prompt tokens over all calls (cache hits at original)."),
    Column("tokens_out", pa.int64(), "Generated tokens over all calls (cache hits at original)."),
    Column("calls", pa.int32(), "Model calls made."),
    Column("cached_calls", pa.int32(), "Calls answered from the call cache."),
    Column("verifier_errors", pa.int32(), "Critic calls that failed or did not parse."),
    Column("verifier_policy", pa.string(), "fail_open or fail_closed: what such an error meant."),
    Column("findings_killed", pa.int32(), "Critic findings the quorum rejected (arm D)."),
    Column(
        "error",
        pa.string(),
        "Infrastructure failure that stopped the unit ('provider: ...' after the call's "
        "retries, 'infrastructure: judge: ...'); such a unit is not finished, is excluded "
        "from the statistics and is retried by a rerun. Null for every measured unit.",
        nullable=True,
    ),
    Column("final_artifact", pa.string(), "The answer kept."),
    Column("finished_at", pa.timestamp("us", tz="UTC"), "When the unit's rows were written."),
]

ATTEMPTS = [
    *_unit_columns(),
    Column("iteration", pa.int32(), "0 = first draft, then one per fix round."),
    Column("defects", pa.int32(), "Test defects over every check."),
    Column(
        "defects_feedback",
        pa.int32(),
        "Defects visible to the loop (tool-grounded arms: with lint and type findings).",
    ),
    Column(
        "defects_total",
        pa.int32(),
        "Measured defects: tests + lint + types, each kind bounded (README 'Bounded "
        "counts'; null before v3).",
        nullable=True,
    ),
    Column(
        "defects_total_raw",
        pa.int32(),
        "defects_total before the per-kind bound (null before v6).",
        nullable=True,
    ),
    Column(
        "defects_raw_by_kind",
        pa.string(),
        "JSON {kind: raw count} of the kinds the bound lowered; '{}' when none was "
        "(null before v6).",
        nullable=True,
    ),
    *_kind_columns("defects"),
    *_findings_columns(""),
    Column("checks_passed", pa.int32(), "Checks that passed."),
    Column("checks_total", pa.int32(), "Checks run or due."),
    Column(
        "checks_inside",
        pa.int32(),
        "Checks of an unusual shape decided inside the sandbox, not by the trusted parent"
        " (their failures carry inside=true in the failures JSON).",
    ),
    Column(
        "judge_infrastructure_error",
        pa.string(),
        "Why the judge itself could not judge this attempt (never a defect).",
        nullable=True,
    ),
    Column("artifact_hash", pa.string(), "SHA-256 of the artifact, first 16 hex digits."),
    Column("artifact", pa.string(), "The artifact judged."),
    Column("failures", pa.string(), "JSON list of failures (kind, line, expected, actual, ...)."),
    Column("diff_summary", pa.string(), "What changed versus the previous attempt."),
    Column("critic_verdict", pa.string(), "pass, warn or fail (critic arms).", nullable=True),
    Column("critic_findings", pa.string(), "JSON list of critic findings shown to the fixer."),
    Column("findings_killed", pa.int32(), "Findings the quorum rejected on this attempt."),
    Column("judge_latency_s", pa.float64(), "Time the judge took, seconds."),
]

CALLS = [
    *_unit_columns(),
    Column("call_index", pa.int32(), "Order of the call within its unit."),
    Column("iteration", pa.int32(), "Attempt the call produced."),
    Column(
        "role",
        pa.string(),
        "actor (first draft), fixer (a fix round), critic or reviewer (a quorum vote).",
    ),
    Column("model", pa.string(), "Model that answered."),
    Column(
        "paid_tokens_in",
        pa.int64(),
        "Prompt tokens paid in this run: 0 for a cache hit (arms share first drafts through "
        "the cache, so only one of them pays). Not the experiment's tokens: see "
        "experiment_tokens_in. Before v9: tokens_in.",
    ),
    Column(
        "paid_tokens_out",
        pa.int64(),
        "Generated tokens paid in this run (thinking included; 0 for a cache hit). "
        "Before v9: tokens_out.",
    ),
    Column("latency_s", pa.float64(), "Call latency in this run, seconds."),
    Column("cached", pa.bool_(), "True when served from the call cache."),
    # Never null: the experiment's cost of every call (SPEC 8). A cache hit keeps its first
    # call's numbers here; any other call made them itself, so they equal paid_tokens_in & co.
    Column(
        "experiment_tokens_in",
        pa.int64(),
        "Prompt tokens of the call as first made, cache hit or not (the cached call's for a "
        "hit, else equal to paid_tokens_in): what the call would have cost without the "
        "cache, the tokens the report's cost and token figures use. Never null. Before v9: "
        "original_tokens_in.",
    ),
    Column(
        "experiment_tokens_out",
        pa.int64(),
        "Generated tokens of the call as first made (equal to paid_tokens_out unless "
        "cached); the experiment's. Before v9: original_tokens_out.",
    ),
    Column(
        "original_latency_s",
        pa.float64(),
        "Latency of the call as first made, seconds (equal to latency_s unless cached).",
    ),
    Column("error", pa.string(), "Error text when the call failed.", nullable=True),
    Column("verifier_error", pa.string(), "Why a critic reply was unusable.", nullable=True),
    Column(
        "parse_method",
        pa.string(),
        "How a critic reply was read (json, fenced, ...).",
        nullable=True,
    ),
]

TRANSCRIPTS = [
    *_unit_columns(),
    Column("entry", pa.int32(), "Order of the entry within its unit, from 0."),
    Column(
        "kind",
        pa.string(),
        "call (a model call, in the order made) or feedback (what an attempt's judge and "
        "critic left for the fixer; one per attempt, after its calls; the next fix round's "
        "prompt shows it, and no fixer sees the last attempt's).",
    ),
    Column(
        "call_index",
        pa.int32(),
        "The call's calls.call_index (null for feedback entries).",
        nullable=True,
    ),
    Column("iteration", pa.int32(), "Attempt the entry belongs to (0 = first draft)."),
    Column(
        "role",
        pa.string(),
        "actor, fixer, critic, reviewer (as in calls.role), or feedback.",
    ),
    Column("model", pa.string(), "Model that answered (null for feedback).", nullable=True),
    Column(
        "cached",
        pa.bool_(),
        "True when the call was answered from the call cache; reply is then the cached "
        "answer, which is what the call answered.",
    ),
    Column(
        "messages",
        pa.string(),
        "JSON list of {role, content}: what the call was asked, each content cut to "
        "TRANSCRIPT_CHAR_LIMIT characters (null for feedback).",
        nullable=True,
    ),
    Column(
        "reply",
        pa.string(),
        "The call's reply, cut to TRANSCRIPT_CHAR_LIMIT characters (null: the call failed, "
        "or a feedback entry).",
        nullable=True,
    ),
    Column(
        "parsed",
        pa.string(),
        "JSON read from the reply: a critic's {verdict, issues, summary}, a reviewer's "
        "{is_verdict_block, actions, errors}; for feedback, the list of {kind, origin, "
        "text} the loop was shown. Null when nothing was read.",
        nullable=True,
    ),
    Column("error", pa.string(), "Why the call failed or its reply was unusable.", nullable=True),
    Column(
        "chars",
        pa.int64(),
        "Characters of the entry's texts before cutting (messages and reply, or feedback).",
    ),
    Column("truncated", pa.bool_(), "True when a text of the entry was cut."),
]

LEGACY_COLUMNS: dict[str, dict[str, str]] = {
    "calls": {
        "tokens_in": "paid_tokens_in",
        "tokens_out": "paid_tokens_out",
        "original_tokens_in": "experiment_tokens_in",
        "original_tokens_out": "experiment_tokens_out",
    }
}
"""Per table, names files of an older schema wrote -> the column that holds the same now.
Readers fill the new column from the old on read and offer the old name as an alias."""

TABLES: dict[str, list[Column]] = {
    "runs": RUNS,
    "cases": CASES,
    "attempts": ATTEMPTS,
    "calls": CALLS,
}
"""The measured tables: what the report and the data-quality checks read."""

SIDE_TABLES: dict[str, list[Column]] = {"transcripts": TRANSCRIPTS}
"""Tables kept with a run for reading, not measuring: ``sql``, ``show`` and the
transcript side file read them; the report's statistics and the data checks do not."""


@functools.cache
def arrow_schema(table: str) -> pa.Schema:
    """The Arrow schema of a table, column docs kept as field metadata.

    Built once per table and process (every unit's write asks for it; a schema is immutable).
    """
    return pa.schema(
        [
            pa.field(c.name, c.type, nullable=c.nullable, metadata={"doc": c.doc})
            for c in {**TABLES, **SIDE_TABLES}[table]
        ],
        metadata={"schema_version": str(SCHEMA_VERSION), "table": table},
    )
