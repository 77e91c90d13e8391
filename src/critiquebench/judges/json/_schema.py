"""JSON Schema (draft 2020-12) for the json judge: check a suite's schema, list violations.

Nothing is ever fetched: the validators get an empty ``referencing`` registry, so a
``$ref`` outside the schema (``https://...``) fails to resolve instead of being
downloaded (jsonschema's default registry still downloads, with a warning). The
draft's own meta-schemas are bundled with jsonschema and resolve offline.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any

import referencing
from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.exceptions import SchemaError

from critiquebench.judges._case import Check
from critiquebench.judges._failure import Failure
from critiquebench.judges.json._checks import canonical, show
from critiquebench.judges.json._pointer import PointerError, format_pointer, parse_pointer, resolve

DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""The only ``$schema`` a case's schema may declare (or it declares none)."""

MAX_VIOLATIONS_SCANNED = 1000
"""Violations read from the validator before sorting; beyond this the count is a floor."""

_NO_FETCH: referencing.Registry[Any] = referencing.Registry()
"""A registry whose retrieval fails for every URI: nothing is ever downloaded."""

_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
"""Keywords whose values are data, not subschemas: a ``$ref`` key there is no reference."""


def _unique_items(
    checker: Any, unique: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """``uniqueItems`` in linear time: jsonschema compares unhashable items (objects,
    arrays) pairwise, which a long array of objects would turn into minutes."""
    if not unique or not checker.is_type(instance, "array"):
        return
    seen: set[str] = set()
    for item in instance:
        key = canonical(item)
        if key in seen:
            yield ValidationError(f"{show(instance)[:200]} has non-unique elements")
            return
        seen.add(key)


_Validator = validators.extend(Draft202012Validator, {"uniqueItems": _unique_items})
"""Draft 2020-12 with the linear ``uniqueItems``; same results as the original's."""


def validator(schema: dict[str, Any]) -> Any:
    """A draft 2020-12 validator of ``schema`` that checks ``format`` and never fetches."""
    return _Validator(schema, registry=_NO_FETCH, format_checker=_Validator.FORMAT_CHECKER)


def _references(schema: dict[str, Any]) -> tuple[list[tuple[str, str]], set[str]]:
    """Every ``($ref value, location)`` in ``schema``, and every ``$id`` it declares."""
    refs: list[tuple[str, str]] = []
    ids: set[str] = set()
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                    refs.append((value, format_pointer((*path, key))))
                elif key == "$id" and isinstance(value, str):
                    ids.add(value.rstrip("#"))
                elif key not in _DATA_KEYWORDS:
                    stack.append(((*path, key), value))
        elif isinstance(node, list):
            stack.extend(((*path, index), item) for index, item in enumerate(node))
    return sorted(refs, key=lambda item: item[1]), ids


def _reference_problem(schema: dict[str, Any], ref: str, where: str, ids: set[str]) -> str | None:
    uri, _, fragment = ref.partition("#")
    if uri and uri not in ids and uri != DIALECT:
        return (
            f"'$ref' at {where} is {ref!r}, a schema outside this one, and remote schemas "
            "are never fetched: copy it under '$defs' and refer to it as '#/$defs/<name>'"
        )
    if not uri and fragment.startswith("/"):
        try:
            found, _ = resolve(schema, parse_pointer(fragment))
        except PointerError:
            found = False
        if not found:
            return f"'$ref' at {where} is {ref!r}, which points at nothing in the schema: fix it"
    return None


def schema_problems(schema: object, field: str) -> list[str]:
    """What is wrong with a schema a suite line gives, each phrased as a fix."""
    if not isinstance(schema, dict):
        return [f'\'{field}\' must be a JSON Schema object, e.g. {{"type": "object"}}']
    problems = []
    dialect = schema.get("$schema")
    if dialect is not None and (not isinstance(dialect, str) or dialect.rstrip("#") != DIALECT):
        problems.append(
            f"'{field}.$schema' is {dialect!r}: the json judge validates with draft 2020-12, "
            f"so set it to {DIALECT!r} or remove it"
        )
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        at = format_pointer(tuple(exc.absolute_path)) or "its top level"
        problems.append(
            f"'{field}' is not a valid JSON Schema (draft 2020-12) at {at}: {exc.message}; "
            "correct it there"
        )
    refs, ids = _references(schema)
    for ref, where in refs:
        problem = _reference_problem(schema, ref, where, ids)
        if problem:
            problems.append(f"'{field}': {problem}")
    return problems


def _violation(error: ValidationError, check: Check) -> Failure:
    keyword = str(error.validator)
    pointer = format_pointer(tuple(error.absolute_path))
    expected = f"{keyword}: {show(error.validator_value)}"
    actual = show(error.instance)
    if keyword == "required" and isinstance(error.instance, dict):
        absent = [
            name for name in error.validator_value
            if name not in error.instance and error.message.startswith(repr(name))
        ]  # fmt: skip
        if absent:
            pointer = format_pointer((*error.absolute_path, absent[0]))
            expected, actual = "present (required)", "(absent)"
    where = pointer or "the document"
    return Failure(
        kind="json", code=keyword, file=pointer, origin=check.origin, source=check.source,
        message=f"{where}: {error.message}", expected=expected, actual=actual,
    )  # fmt: skip


def violations(schema: dict[str, Any], document: Any, check: Check) -> tuple[list[Failure], bool]:
    """The document's violations of ``schema`` (one defect each, code = the keyword,
    file = the pointer), sorted by location; and whether the scan stopped early.

    Raises:
        Exception: the schema cannot be used (a ``$ref`` that does not resolve, an
            invalid schema): a problem of the judge's material, not of the document.
    """
    scanned = list(islice(validator(schema).iter_errors(document), MAX_VIOLATIONS_SCANNED + 1))
    stopped = len(scanned) > MAX_VIOLATIONS_SCANNED
    kept = sorted(scanned[:MAX_VIOLATIONS_SCANNED], key=_document_order)
    return [_violation(error, check) for error in kept], stopped


def _document_order(error: ValidationError) -> tuple[Any, ...]:
    """Sort key: by location (array indices as numbers), then keyword and message."""
    path = tuple((0, token, "") if isinstance(token, int) else (1, 0, token)
                 for token in error.absolute_path)  # fmt: skip
    return path, str(error.validator), error.message
