"""JSON pointers (RFC 6901) for the json judge: parse, resolve, and match with ``*``.

A pointer is ``""`` (the whole document) or ``/``-separated tokens in which ``~1``
stands for ``/`` and ``~0`` for ``~``. The json judge's ``references`` and ``unique``
checks also accept ``*`` as a token meaning "every member of this array or object";
``equals`` checks name one location and take no wildcard.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

WILDCARD = "*"
"""The token matching every member, where a check accepts wildcards."""

_ABSENT = object()


class PointerError(ValueError):
    """A pointer that is not RFC 6901 syntax; the message says what to write instead."""


def parse_pointer(pointer: str) -> tuple[str, ...]:
    """The unescaped tokens of ``pointer``.

    Raises:
        PointerError: it does not start with ``/`` (and is not ``""``), or holds a
            ``~`` not followed by ``0`` or ``1``.
    """
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise PointerError(
            f"JSON pointer {pointer!r} must start with '/' (e.g. '/steps/0/id'), "
            "or be '' for the whole document"
        )
    tokens = []
    for raw in pointer[1:].split("/"):
        rest = raw.replace("~0", "").replace("~1", "")
        if "~" in rest:
            raise PointerError(
                f"JSON pointer {pointer!r}: '~' must be written '~0' and '/' inside a key '~1'"
            )
        tokens.append(raw.replace("~1", "/").replace("~0", "~"))
    return tuple(tokens)


def format_pointer(tokens: tuple[str | int, ...] | list[str | int]) -> str:
    """The pointer of ``tokens`` (keys or array indices), escaped."""
    return "".join("/" + str(token).replace("~", "~0").replace("/", "~1") for token in tokens)


def _child(value: Any, token: str) -> Any:
    """The member ``token`` names in ``value``, or ``_ABSENT``."""
    if isinstance(value, dict):
        return value.get(token, _ABSENT)
    if isinstance(value, list) and token.isdigit() and (token == "0" or token[0] != "0"):
        index = int(token)
        return value[index] if index < len(value) else _ABSENT
    return _ABSENT


def resolve(document: Any, tokens: tuple[str, ...]) -> tuple[bool, Any]:
    """``(True, value)`` at ``tokens`` in ``document``, or ``(False, None)`` when absent."""
    value = document
    for token in tokens:
        value = _child(value, token)
        if value is _ABSENT:
            return False, None
    return True, value


def _members(value: Any) -> Iterator[tuple[str | int, Any]]:
    if isinstance(value, dict):
        yield from value.items()
    elif isinstance(value, list):
        yield from enumerate(value)


def matches(document: Any, tokens: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    """Every ``(pointer, value)`` that ``tokens`` (``*`` = every member) names, in
    document order; locations that do not exist are skipped."""
    stack: list[tuple[tuple[str | int, ...], Any, int]] = [((), document, 0)]
    while stack:
        path, value, depth = stack.pop()
        if depth == len(tokens):
            yield format_pointer(path), value
            continue
        token = tokens[depth]
        if token == WILDCARD:
            children = list(_members(value))
        else:
            child = _child(value, token)
            children = [] if child is _ABSENT else [(token, child)]
        # Reversed so the stack pops them in document order.
        for key, child in reversed(children):
            stack.append(((*path, key), child, depth + 1))
