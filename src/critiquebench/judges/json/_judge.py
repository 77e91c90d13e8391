"""The json judge: a JSON document against a JSON Schema and expected field values.

The artifact is one JSON document (a workflow definition, a config file, an API
payload). Each check of the case (see ``_json_checks``) yields defects of kind
``json``, each with the JSON pointer it is about in ``file`` and ``code`` naming its
sort: a JSON Schema keyword (``required``, ``type``, ``enum``, ...) for a schema
violation, ``missing`` / ``wrong_value`` for an expected value, ``dangling_reference``
and ``duplicate``. A document that cannot be judged at all is one whole-artifact
defect (origin ``""``: the loop always sees it) of code ``invalid_json``,
``too_large`` or ``too_deep``, and then, as with Python code that does not parse,
every check counts one ``not_checked`` defect, so an unparseable answer never scores
better than a parseable wrong one. Keys given twice in one object are a
whole-artifact ``duplicate_key`` defect each.

Parsing and validating execute nothing of the artifact, so the judge runs
in-process, not in the sandbox; its work is bounded instead: at most
``MAX_ARTIFACT_CHARS`` characters, ``MAX_DEPTH`` levels of nesting, and
``MAX_DEFECTS_PER_CHECK`` defects listed per check (the rest are counted in a note).
No schema is ever fetched from the network (see ``_json_schema``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from critiquebench.judges._case import Case, Check
from critiquebench.judges._failure import Failure, JudgeResult
from critiquebench.judges.json._checks import (
    CheckSpec,
    EqualsSpec,
    ReferencesSpec,
    SchemaSpec,
    SpecError,
    equals_defects,
    parse_spec,
    references_defects,
    show,
    unique_defects,
)
from critiquebench.judges.json._format import JSON_FORMAT
from critiquebench.judges.json._pointer import format_pointer
from critiquebench.judges.json._schema import schema_problems, violations

MAX_ARTIFACT_CHARS = 200_000
"""Longest document judged; a longer one is a ``too_large`` defect."""
MAX_DEPTH = 40
"""Most arrays and objects nested in one another; deeper is a ``too_deep`` defect."""
MAX_DEFECTS_PER_CHECK = 20
"""Defects listed per check (and duplicate keys listed); a note counts the rest."""

_JUDGE_DATA_KEYS = frozenset({"schema"})


@dataclass(frozen=True)
class _Parsed:
    """A document, or the whole-artifact defect that stops it being judged."""

    document: Any = None
    fatal: Failure | None = None
    duplicates: tuple[Failure, ...] = ()


def _whole(code: str, message: str, expected: str, actual: str, line: int = 0) -> Failure:
    return Failure(
        kind="json", code=code, message=message, expected=expected, actual=actual, line=line
    )


def _too_deep_at(document: Any) -> str | None:
    """The pointer of the first array or object inside ``MAX_DEPTH`` others, if any."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), document)]
    while stack:
        path, value = stack.pop()
        if len(path) >= MAX_DEPTH and isinstance(value, dict | list):
            return format_pointer(path)
        if isinstance(value, dict):
            stack.extend(((*path, key), item) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend(((*path, index), item) for index, item in enumerate(value))
    return None


def _line_at(text: str, number: int) -> str:
    """Line ``number`` (from 1) as json counts lines (at ``\\n`` only), for ``actual``;
    a cut-off document's error is past its last line."""
    lines = text.split("\n")
    shown = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    return shown[:120] or "(the end of the document)"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value (write a number or null)")


def parse_document(text: str) -> _Parsed:
    """The document in ``text``, bounded in size and depth, with its duplicate keys."""
    if len(text) > MAX_ARTIFACT_CHARS:
        message = f"the document is {len(text)} characters; at most {MAX_ARTIFACT_CHARS} are judged"
        size = f"{len(text)} characters"
        return _Parsed(fatal=_whole("too_large", message, f"<= {MAX_ARTIFACT_CHARS}", size))
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        found = dict(items)
        if len(found) < len(items):  # a set, not pairwise: an object may have many keys
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    repeated.append(key)
                seen.add(key)
        return found

    try:
        document = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        fatal = _whole("invalid_json", f"not valid JSON: {exc.msg} at {where}", "valid JSON",
                       _line_at(text, exc.lineno), line=exc.lineno)  # fmt: skip
        return _Parsed(fatal=fatal)
    except (RecursionError, MemoryError):
        message = f"the document nests deeper than {MAX_DEPTH} levels"
        return _Parsed(fatal=_whole("too_deep", message, f"<= {MAX_DEPTH} levels", "deeper"))
    except Exception as exc:  # NaN/Infinity, integers of thousands of digits, or anything else
        reason = (str(exc).splitlines() or [type(exc).__name__])[0].split(";")[0][:200]
        return _Parsed(fatal=_whole("invalid_json", f"not valid JSON: {reason}", "valid JSON", ""))
    deep = _too_deep_at(document)
    if deep is not None:
        message = f"the document nests deeper than {MAX_DEPTH} levels at {deep}"
        fatal = _whole("too_deep", message, f"<= {MAX_DEPTH} levels", deep[:120])
        return _Parsed(fatal=fatal)
    duplicates = tuple(
        _whole("duplicate_key", f"key {key!r} appears twice in one object: keep one of them",
               "each key once per object", show(key))
        for key in repeated
    )  # fmt: skip
    return _Parsed(document=document, duplicates=duplicates)


def _case_schema(case: Case) -> dict[str, Any] | None:
    schema = case.judge_data.get("schema")
    return schema if isinstance(schema, dict) else None


def _check_defects(
    case: Case, check: Check, spec: CheckSpec, document: Any
) -> tuple[list[Failure], bool]:
    """The defects one check finds, and whether a bound stopped it listing them all."""
    if isinstance(spec, SchemaSpec):
        schema = spec.schema if spec.schema is not None else _case_schema(case)
        if schema is None:
            raise SpecError("the case has no judge_data.schema")
        return violations(schema, document, check)
    if isinstance(spec, EqualsSpec):
        return equals_defects(check, spec, document), False
    if isinstance(spec, ReferencesSpec):
        return references_defects(check, spec, document), False
    return unique_defects(check, spec, document), False


class JsonJudge:
    """Counts the defects of a JSON document (see the module docstring).

    Never raises: the document's problems are defects, and a case the judge cannot
    use (a bad check, a schema that does not resolve) is an infrastructure error.
    """

    artifact_format = JSON_FORMAT

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        started = time.perf_counter()
        try:
            return self._judge(case, artifact, started)
        except Exception as exc:  # the judge's own problem: never a defect of the answer
            return JudgeResult(
                failures=(), checks_total=len(case.checks), checks_passed=0,
                duration_s=time.perf_counter() - started,
                infrastructure_error=f"json judge, case {case.id!r}: {type(exc).__name__}: {exc}",
            )  # fmt: skip

    def _judge(self, case: Case, artifact: str, started: float) -> JudgeResult:
        specs = []
        for check in case.checks:
            try:
                specs.append(parse_spec(check.spec))
            except SpecError as exc:
                raise SpecError(f"check {check.source!r}: {exc}") from None
        parsed = parse_document(artifact)
        failures: list[Failure] = list(parsed.duplicates[:MAX_DEFECTS_PER_CHECK])
        notes: list[str] = []
        if len(parsed.duplicates) > MAX_DEFECTS_PER_CHECK:
            more = len(parsed.duplicates) - MAX_DEFECTS_PER_CHECK
            notes.append(f"{more} more duplicate key(s) not listed")
        passed = 0
        if parsed.fatal is not None:
            failures.append(parsed.fatal)
            failures.extend(_not_checked(check, parsed.fatal) for check in case.checks)
        else:
            for check, spec in zip(case.checks, specs, strict=True):
                found, stopped = _check_defects(case, check, spec, parsed.document)
                passed += not found
                failures.extend(found[:MAX_DEFECTS_PER_CHECK])
                more = len(found) - MAX_DEFECTS_PER_CHECK
                if more > 0 or stopped:
                    notes.append(f"check {check.source!r}: {max(more, 0)}{'+' if stopped else ''} "
                                 "more defect(s) not listed")  # fmt: skip
        return JudgeResult(
            failures=tuple(failures), checks_total=len(case.checks), checks_passed=passed,
            duration_s=time.perf_counter() - started, notes=tuple(notes),
        )  # fmt: skip

    @staticmethod
    def case_problems(case: Case) -> list[str]:
        """What is wrong with a suite line's ``judge_data`` and checks, each as a fix."""
        return json_case_problems(case)


def _not_checked(check: Check, fatal: Failure) -> Failure:
    return Failure(
        kind="json", code="not_checked", origin=check.origin, source=check.source,
        message=f"not checked: {fatal.message}", expected="a document to check", actual=fatal.code,
    )  # fmt: skip


def json_case_problems(case: Case) -> list[str]:
    """What is wrong with a json case's ``judge_data`` and checks, each as a fix."""
    problems = [
        f"field 'judge_data': unknown key {key!r}; the json judge reads only 'schema'"
        for key in sorted(set(case.judge_data) - _JUDGE_DATA_KEYS)
    ]
    if "schema" in case.judge_data:
        problems += schema_problems(case.judge_data["schema"], "judge_data.schema")
    seen: set[str] = set()
    for check in case.checks:
        field = f"{check.origin}_checks[{check.line - 1}] ({check.source!r})"
        if check.source in seen:
            problems.append(f"{field}: another check has this name; give each check its own")
        seen.add(check.source)
        try:
            spec = parse_spec(check.spec)
        except SpecError as exc:
            problems.append(f"{field}: {exc}")
            continue
        if isinstance(spec, SchemaSpec) and spec.schema is None and "schema" not in case.judge_data:
            problems.append(f"{field}: '\"schema\": true' needs 'judge_data.schema': add it")
        elif isinstance(spec, SchemaSpec) and spec.schema is not None:
            problems += schema_problems(spec.schema, f"{field}.schema")
    return problems
