"""Plain data across the sandbox boundary: strict decoding and safe text.

The sandbox encodes a candidate's return values (see ``_worker.encode``); the trusted
parent rebuilds them here as exact builtin values and nothing else, so no object of
the candidate's making, and no code of its making, ever runs in the parent.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
from typing import Any

MAX_TEXT = 2000
"""Longest message or value text kept from a judged run (characters)."""

_MAX_NODES = 100_000
_MAX_DEPTH = 100
_MAX_INT_DIGITS = 4000

MAX_SAME_HASH = 32
"""Most distinct values sharing one hash that a returned value may hold. Python's hash
of numbers is not randomised (``n`` and ``n + 2**61 - 1`` collide), and a set, dict or
comparison of colliding values costs quadratic time: 29,000 such integers held the
parent for 18.5 s. Honest values never come close (``-1`` and ``-2`` are the usual
pair); past the bound the value is malformed, a ``crash`` defect of the answer."""


class MalformedValue(ValueError):
    """Bytes from the sandbox that are not a valid encoding of plain data."""


def clean_text(value: object, limit: int = MAX_TEXT) -> str:
    """``value`` as valid UTF-8 text of at most ``limit`` characters.

    Lone surrogates and other unencodable characters become escapes, so the text is
    safe for Parquet, prompts and Markdown alike.
    """
    text = value if isinstance(value, str) else str(value)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) > limit:
        omitted = len(text) - limit
        text = f"{text[:limit]}... [{omitted} more characters]"
    return text


# ANSI escape sequences (CSI, e.g. colours and cursor moves; OSC, e.g. titles and
# hyperlinks; and two-character ones). Each part matches a distinct character class
# in turn, so the match is linear.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
# Control characters, and the formatting ones that reorder or hide text (bidirectional
# overrides, as in "Trojan Source"), shown as escapes instead of acting.
_INVISIBLE = [*range(0x00, 0x20), *range(0x7F, 0xA0), 0x200E, 0x200F, *range(0x202A, 0x202F),
              *range(0x2066, 0x206A)]  # fmt: skip
_VISIBLE: dict[int, str] = {
    code: (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}") for code in _INVISIBLE
} | {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
_VISIBLE_KEEP_LINES = {code: shown for code, shown in _VISIBLE.items() if code not in (9, 10)}
_BACKTICKS = re.compile("`+")


def inert_text(value: object, *, keep_lines: bool = False, limit: int = MAX_TEXT) -> str:
    """Text from a candidate made safe for a terminal or a record, bounded by ``limit``.

    ANSI escape sequences are removed; every other control character, and the
    characters that reorder or hide text, are shown as escapes (``\\x07``,
    ``\\u202e``), so nothing in the text moves the cursor, colours a terminal, starts
    a new line (unless ``keep_lines``: then newlines and tabs stay) or hides what
    follows. Markdown or HTML in it is not escaped: put it in :func:`markdown_fence` or
    :func:`markdown_code_span` for a Markdown record (autoescaping does it for HTML).
    """
    text = clean_text(value, limit)
    text = _ANSI.sub("", text)
    return text.translate(_VISIBLE_KEEP_LINES if keep_lines else _VISIBLE)


def _fence_for(text: str, least: int) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(least, longest + 1)


def markdown_fence(value: object, info: str = "", *, limit: int = MAX_TEXT) -> str:
    """Candidate text as a Markdown fenced code block that nothing inside it can close
    (the fence is longer than any run of backticks in it), with :func:`inert_text`
    applied (lines kept). Inside the block no Markdown, HTML or link is rendered."""
    text = inert_text(value, keep_lines=True, limit=limit).strip("\n")
    fence = _fence_for(text, 3)
    return f"{fence}{info}\n{text}\n{fence}"


def markdown_code_span(value: object, *, limit: int = MAX_TEXT) -> str:
    """Candidate text as one inline Markdown code span, on one line (:func:`inert_text`
    shows its newlines as ``\\x0a``): nothing in it renders as Markdown, HTML or a link,
    and no backtick in it ends the span early."""
    text = inert_text(value, limit=limit)
    fence = _fence_for(text, 1)
    return f"{fence} {text} {fence}"


_MARKDOWN_SPECIAL = {ord(char): f"\\{char}" for char in "\\`*_[]<>&|~!#"}


def markdown_text(value: object, *, limit: int = MAX_TEXT) -> str:
    """Candidate text as plain Markdown prose on one line: :func:`inert_text`, then
    every character that could start emphasis, code, a link, an image, HTML, a table
    cell or a heading is backslash-escaped, so it renders as the characters written."""
    return inert_text(value, limit=limit).translate(_MARKDOWN_SPECIAL)


def parse_json_line(line: bytes) -> Any:
    """One JSON document from hostile bytes, or MalformedValue; never raises anything else."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError, MemoryError) as exc:  # JSONDecodeError is a ValueError
        raise MalformedValue(f"unreadable result line ({type(exc).__name__})") from None


def decode(value: Any) -> Any:
    """Rebuild a value encoded by the sandbox; MalformedValue on anything unexpected.

    The work is linear in the encoding: every hashable value is checked against
    :data:`MAX_SAME_HASH` before any set or dict is built from it.
    """
    budget = [_MAX_NODES]
    try:
        return _decode(value, budget, 0, _HashGuard())
    except MalformedValue:
        raise
    except (TypeError, ValueError, RecursionError, MemoryError) as exc:
        raise MalformedValue(f"malformed value ({type(exc).__name__})") from None


class _HashGuard:
    """Counts the distinct values seen per hash, without a hash table keyed by them.

    Values are told apart by a fingerprint (bytes, whose hash is randomised per
    process), computed only for values whose hash was already seen, so the common case
    costs one ``hash`` per value.
    """

    def __init__(self) -> None:
        self._first: dict[int, Any] = {}
        self._distinct: dict[int, set[bytes]] = {}

    def add(self, value: Any) -> None:
        """Note a decoded value; MalformedValue past :data:`MAX_SAME_HASH`."""
        try:
            key = hash(value)
        except TypeError:  # a tuple holding a list: no set or dict can hold it either
            return
        first = self._first.setdefault(key, value)
        if first is value or (type(first) is type(value) and first == value):
            return  # a repeat of the first value: a list of equal items is common
        seen = self._distinct.get(key)
        if seen is None:
            seen = self._distinct[key] = {_fingerprint(first)}
        seen.add(_fingerprint(value))
        if len(seen) > MAX_SAME_HASH:
            raise MalformedValue(
                f"the value holds more than {MAX_SAME_HASH} different items with one hash "
                "(built to make comparing it slow)"
            )


def _fingerprint(value: Any) -> bytes:
    """Bytes equal for equal plain values (``1``, ``1.0``, ``True``, ``1+0j`` alike),
    different for different ones; NaN is unequal to itself, so it gets its identity."""
    if value is None:
        return b"N"
    if isinstance(value, complex):
        if value.imag == 0:
            return _fingerprint(value.real)
        return b"c" + struct.pack("<dd", value.real, value.imag)
    if isinstance(value, float):
        if math.isnan(value):
            return b"n" + str(id(value)).encode()
        if value.is_integer():
            return _fingerprint(int(value))
        return b"f" + struct.pack("<d", value)
    if isinstance(value, int):  # bool included: True == 1
        return b"i" + int(value).to_bytes(int(value).bit_length() // 8 + 1, "little", signed=True)
    if isinstance(value, str):
        return b"s" + value.encode("utf-8", "surrogatepass")
    if isinstance(value, bytes):
        return b"b" + value
    parts = [_fingerprint(item) for item in value]  # tuple or frozenset
    if isinstance(value, frozenset):
        parts.sort()
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        digest.update(len(part).to_bytes(8, "little") + part)
    return (b"t" if isinstance(value, tuple) else b"z") + digest.digest()


def _decode(value: Any, budget: list[int], depth: int, guard: _HashGuard) -> Any:
    budget[0] -= 1
    if budget[0] < 0 or depth > _MAX_DEPTH:
        raise MalformedValue("the value is too large or too deeply nested")
    if value is None or isinstance(value, bool | str | int | float):
        if isinstance(value, int | float):  # str hashes are randomised: no crafted collisions
            guard.add(value)
        return value
    if isinstance(value, list):
        return [_decode(item, budget, depth + 1, guard) for item in value]
    if not isinstance(value, dict) or len(value) != 1:
        raise MalformedValue("an object in a value must have exactly one type tag")
    ((tag, body),) = value.items()
    decoded = _decode_tagged(tag, body, budget, depth, guard)
    if isinstance(decoded, int | float | complex | tuple | frozenset):
        guard.add(decoded)  # a tuple's hash comes from its items': they can collide too
    return decoded


def _decode_tagged(tag: Any, body: Any, budget: list[int], depth: int, guard: _HashGuard) -> Any:
    if tag == "int" and isinstance(body, str) and len(body.lstrip("-")) <= _MAX_INT_DIGITS:
        return int(body)
    if tag == "float" and body in ("inf", "-inf", "nan"):
        return float(body)
    if tag in ("tuple", "set", "frozenset") and isinstance(body, list):
        items = [_decode(item, budget, depth + 1, guard) for item in body]
        return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict" and isinstance(body, list):
        pairs = [_decode_pair(pair, budget, depth + 1, guard) for pair in body]
        return dict(pairs)
    if tag == "bytes" and isinstance(body, str):
        return bytes.fromhex(body)
    if tag == "complex" and isinstance(body, list) and len(body) == 2:
        real, imag = (_decode(part, budget, depth + 1, guard) for part in body)
        if not all(isinstance(part, int | float) for part in (real, imag)):
            raise MalformedValue("a complex number needs two numbers")
        return complex(real, imag)
    raise MalformedValue(f"unknown or malformed type tag {clean_text(tag, 40)!r}")


def _decode_pair(pair: Any, budget: list[int], depth: int, guard: _HashGuard) -> tuple[Any, Any]:
    if not isinstance(pair, list) or len(pair) != 2:
        raise MalformedValue("a dict entry must be a [key, value] pair")
    return _decode(pair[0], budget, depth, guard), _decode(pair[1], budget, depth, guard)


def encode_argument(value: Any) -> Any:
    """Encode a trusted call argument for the sandbox (same scheme as the sandbox uses)."""
    kind = type(value)
    if value is None or kind in (bool, str):
        return value
    if kind is int:
        return value if -(2**53) < value < 2**53 else {"int": str(value)}
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if kind is list:
        return [encode_argument(item) for item in value]
    if kind in (tuple, set, frozenset):
        return {kind.__name__: [encode_argument(item) for item in value]}
    if kind is dict:
        return {"dict": [[encode_argument(k), encode_argument(v)] for k, v in value.items()]}
    if kind is bytes:
        return {"bytes": value.hex()}
    if kind is complex:
        return {"complex": [value.real, value.imag]}
    raise TypeError(f"{kind.__name__} is not plain data")


def describe_value(value: Any) -> str:
    """A bounded ``repr`` of a decoded (plain) value, for expected/actual columns."""
    try:
        return clean_text(repr(value), 300)
    except ValueError:  # an integer too long for repr under the interpreter's digit limit
        return f"<{type(value).__name__} too large to show>"
