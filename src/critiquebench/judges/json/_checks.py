"""The json judge's checks: what a suite line may ask of a document, and the defects.

A check object of a suite line is its ``name`` plus exactly one of these keys
(docs/suites.md has the reference):

- ``"schema": true`` validates the document against the case's
  ``judge_data.schema``; ``"schema": {...}`` against the schema given inline;
- ``"equals": <value>`` with ``"pointer"``: the value there is exactly ``value``
  (``true`` is not ``1``; ``1`` is ``1.0``), codes ``missing`` / ``wrong_value``;
- ``"references": {"from": P, "to": Q}``: every value at ``P`` is one of the values
  at ``Q`` (e.g. every ``depends_on`` names a step id), code ``dangling_reference``;
- ``"unique": P``: the values at ``P`` are all different, code ``duplicate``.

``P`` and ``Q`` are JSON pointers in which ``*`` stands for every member.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import islice
from typing import Any

from critiquebench.judges._case import Check
from critiquebench.judges._failure import Failure
from critiquebench.judges.json._pointer import (
    WILDCARD,
    PointerError,
    matches,
    parse_pointer,
    resolve,
)

MAX_MATCHES = 2000
"""Most locations a wildcard pointer is followed to; the rest are not checked."""

KINDS = ("schema", "equals", "references", "unique")
"""The keys that name a check's kind; each check has exactly one."""


class SpecError(ValueError):
    """A check object the json judge cannot use; the message says what to write."""


@dataclass(frozen=True)
class SchemaSpec:
    """Validate against ``schema``, or the case's ``judge_data.schema`` when None."""

    schema: dict[str, Any] | None


@dataclass(frozen=True)
class EqualsSpec:
    """The value at ``pointer`` is ``value``."""

    pointer: str
    value: Any


@dataclass(frozen=True)
class ReferencesSpec:
    """Every value at ``source`` is one of the values at ``target``."""

    source: str
    target: str


@dataclass(frozen=True)
class UniqueSpec:
    """The values at ``pointer`` are all different."""

    pointer: str


CheckSpec = SchemaSpec | EqualsSpec | ReferencesSpec | UniqueSpec


def _pointer(value: object, field: str, *, wildcards: bool) -> str:
    if not isinstance(value, str):
        raise SpecError(f"'{field}' must be a JSON pointer string such as '/steps/0/id'")
    try:
        tokens = parse_pointer(value)
    except PointerError as exc:
        raise SpecError(f"'{field}': {exc}") from None
    if not wildcards and WILDCARD in tokens:
        raise SpecError(f"'{field}' names one location: remove '*' (wildcards are for lists)")
    return value


def parse_spec(spec: dict[str, Any]) -> CheckSpec:
    """The check a suite line's check object (without its ``name``) describes.

    Raises:
        SpecError: no kind or several, a missing or unknown key, a bad pointer.
    """
    kinds = [kind for kind in KINDS if kind in spec]
    if len(kinds) != 1:
        found = f"found {', '.join(kinds)}" if kinds else "found none"
        raise SpecError(f"give exactly one of {', '.join(map(repr, KINDS))} ({found})")
    kind = kinds[0]
    allowed = {kind, "pointer"} if kind == "equals" else {kind}
    extra = sorted(set(spec) - allowed)
    if extra:
        raise SpecError(
            f"remove {', '.join(map(repr, extra))}: a {kind!r} check reads only {sorted(allowed)}"
        )
    value = spec[kind]
    if kind == "schema":
        if value is True:
            return SchemaSpec(None)
        if isinstance(value, dict):
            return SchemaSpec(value)
        raise SpecError("'schema' must be true (the case's judge_data.schema) or a schema object")
    if kind == "equals":
        if "pointer" not in spec:
            raise SpecError("an 'equals' check needs 'pointer', e.g. \"pointer\": \"/name\"")
        return EqualsSpec(_pointer(spec["pointer"], "pointer", wildcards=False), value)
    if kind == "references":
        if not isinstance(value, dict) or set(value) != {"from", "to"}:
            raise SpecError('\'references\' must be {"from": <pointer>, "to": <pointer>}')
        source = _pointer(value["from"], "references.from", wildcards=True)
        return ReferencesSpec(source, _pointer(value["to"], "references.to", wildcards=True))
    return UniqueSpec(_pointer(value, "unique", wildcards=True))


def canonical(value: Any) -> str:
    """One text per JSON value: equal values (``1`` and ``1.0``, keys in any order) give
    the same text, and ``true`` and ``1`` give different ones."""
    return json.dumps(_plain_numbers(value), sort_keys=True, ensure_ascii=False)


def _plain_numbers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_plain_numbers(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain_numbers(item) for key, item in value.items()}
    return value


def show(value: Any) -> str:
    """A value as JSON text, for expected/actual."""
    return json.dumps(value, ensure_ascii=False)


def _defect(
    check: Check, code: str, pointer: str, message: str, expected: str, actual: str
) -> Failure:
    return Failure(
        kind="json", code=code, file=pointer, origin=check.origin, source=check.source,
        message=message, expected=expected, actual=actual,
    )  # fmt: skip


def equals_defects(check: Check, spec: EqualsSpec, document: Any) -> list[Failure]:
    """``missing`` when nothing is at the pointer, ``wrong_value`` when it differs."""
    found, value = resolve(document, parse_pointer(spec.pointer))
    expected = show(spec.value)
    if not found:
        message = f"{spec.pointer or 'the document'} is missing; it must be {expected}"
        return [_defect(check, "missing", spec.pointer, message, expected, "(absent)")]
    if canonical(value) == canonical(spec.value):
        return []
    message = f"{spec.pointer or 'the document'} is {show(value)}; it must be {expected}"
    return [_defect(check, "wrong_value", spec.pointer, message, expected, show(value))]


def _located(document: Any, pointer: str) -> list[tuple[str, Any]]:
    return list(islice(matches(document, parse_pointer(pointer)), MAX_MATCHES))


def references_defects(check: Check, spec: ReferencesSpec, document: Any) -> list[Failure]:
    """One ``dangling_reference`` per value at ``from`` that no value at ``to`` equals."""
    targets = _located(document, spec.target)
    known = {canonical(value) for _, value in targets}
    distinct = list(dict.fromkeys(show(value) for _, value in targets))
    listing = ", ".join(distinct[:10]) + (", ..." if len(distinct) > 10 else "") or "none"
    failures = []
    for location, value in _located(document, spec.source):
        if canonical(value) not in known:
            message = f"{location} names {show(value)}, which is not a value at {spec.target}"
            expected = f"one of the values at {spec.target}: {listing}"
            failures.append(
                _defect(check, "dangling_reference", location, message, expected, show(value))
            )
    return failures


def unique_defects(check: Check, spec: UniqueSpec, document: Any) -> list[Failure]:
    """One ``duplicate`` per value at ``pointer`` that an earlier one already has."""
    first_seen: dict[str, str] = {}
    failures = []
    for location, value in _located(document, spec.pointer):
        key = canonical(value)
        if key in first_seen:
            message = (
                f"{location} repeats {show(value)}, already at {first_seen[key]}; "
                f"the values at {spec.pointer} must all differ"
            )
            expected = f"a value not used elsewhere at {spec.pointer}"
            failures.append(_defect(check, "duplicate", location, message, expected, show(value)))
        else:
            first_seen[key] = location
    return failures
