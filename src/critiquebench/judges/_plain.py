"""Plain data across the sandbox boundary: strict decoding and safe text.

The sandbox encodes a candidate's return values (see ``_worker.encode``); the trusted
parent rebuilds them here as exact builtin values and nothing else, so no object of
the candidate's making, and no code of its making, ever runs in the parent.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_TEXT = 2000
"""Longest message or value text kept from a judged run (characters)."""

_MAX_NODES = 100_000
_MAX_DEPTH = 100
_MAX_INT_DIGITS = 4000


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


def parse_json_line(line: bytes) -> Any:
    """One JSON document from hostile bytes, or MalformedValue; never raises anything else."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError, MemoryError) as exc:  # JSONDecodeError is a ValueError
        raise MalformedValue(f"unreadable result line ({type(exc).__name__})") from None


def decode(value: Any) -> Any:
    """Rebuild a value encoded by the sandbox; MalformedValue on anything unexpected."""
    budget = [_MAX_NODES]
    try:
        return _decode(value, budget, 0)
    except MalformedValue:
        raise
    except (TypeError, ValueError, RecursionError, MemoryError) as exc:
        raise MalformedValue(f"malformed value ({type(exc).__name__})") from None


def _decode(value: Any, budget: list[int], depth: int) -> Any:
    budget[0] -= 1
    if budget[0] < 0 or depth > _MAX_DEPTH:
        raise MalformedValue("the value is too large or too deeply nested")
    if value is None or isinstance(value, bool | str | int | float):
        return value
    if isinstance(value, list):
        return [_decode(item, budget, depth + 1) for item in value]
    if not isinstance(value, dict) or len(value) != 1:
        raise MalformedValue("an object in a value must have exactly one type tag")
    ((tag, body),) = value.items()
    if tag == "int" and isinstance(body, str) and len(body.lstrip("-")) <= _MAX_INT_DIGITS:
        return int(body)
    if tag == "float" and body in ("inf", "-inf", "nan"):
        return float(body)
    if tag in ("tuple", "set", "frozenset") and isinstance(body, list):
        items = [_decode(item, budget, depth + 1) for item in body]
        return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict" and isinstance(body, list):
        pairs = [_decode_pair(pair, budget, depth + 1) for pair in body]
        return dict(pairs)
    if tag == "bytes" and isinstance(body, str):
        return bytes.fromhex(body)
    if tag == "complex" and isinstance(body, list) and len(body) == 2:
        real, imag = (_decode(part, budget, depth + 1) for part in body)
        if not all(isinstance(part, int | float) for part in (real, imag)):
            raise MalformedValue("a complex number needs two numbers")
        return complex(real, imag)
    raise MalformedValue(f"unknown or malformed type tag {clean_text(tag, 40)!r}")


def _decode_pair(pair: Any, budget: list[int], depth: int) -> tuple[Any, Any]:
    if not isinstance(pair, list) or len(pair) != 2:
        raise MalformedValue("a dict entry must be a [key, value] pair")
    return _decode(pair[0], budget, depth), _decode(pair[1], budget, depth)


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
