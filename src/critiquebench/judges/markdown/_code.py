"""Does a fenced block parse in its language? Parsing only: nothing is executed.

Python is read by ``ast.parse``, JSON by ``json.loads``, YAML by ``yaml.safe_load``
(no object construction), TOML by ``tomllib`` and SQL by DuckDB's parser alone
(``extract_statements`` splits and parses the statements without running them).
Other languages are not checked.

Whatever a parser raises on a block (a JSON integer past the interpreter's digit limit,
a YAML date that does not exist, a YAML or TOML integer too long to convert, ``!!int
0x``, nesting too deep to follow) is the block's defect, never the judge's failure:
only a parser that cannot be loaded at all (``ImportError``) is the judge's own problem.
"""

from __future__ import annotations

import json
import threading
import tomllib
from collections.abc import Callable
from dataclasses import dataclass

import yaml

from critiquebench.runtime.ast_turns import parse

_MAX_REASON = 200


def _reason(exc: BaseException) -> str:
    """An exception's message as a short line: its first line, without CPython's advice
    after a ``;`` (e.g. on raising the integer digit limit)."""
    lines = str(exc).splitlines()
    return lines[0].split("; use sys.")[0][:_MAX_REASON] if lines else ""


@dataclass(frozen=True)
class ParseError:
    """Why a block does not parse, and the line within the block (0 if unknown)."""

    message: str
    line: int = 0


def _python(body: str) -> ParseError | None:
    try:
        parse(body)
    except SyntaxError as exc:
        return ParseError(f"SyntaxError: {exc.msg}", exc.lineno or 0)
    except ValueError as exc:  # e.g. a NUL byte
        return ParseError(f"ValueError: {exc}")
    return None


def _json(body: str) -> ParseError | None:
    try:
        json.loads(body)
    except json.JSONDecodeError as exc:
        return ParseError(f"JSONDecodeError: {exc.msg}", exc.lineno)
    except ValueError as exc:  # an integer past the digit limit
        return ParseError(f"ValueError: {_reason(exc)}")
    return None


def _yaml(body: str) -> ParseError | None:
    try:
        for _ in yaml.safe_load_all(body):
            pass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark is not None else 0
        return ParseError(f"YAMLError: {exc.problem or exc}", line)
    except yaml.YAMLError as exc:
        return ParseError(f"YAMLError: {exc}")
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. 2024-02-30, !!int 0x
        return ParseError(f"YAML value: {type(exc).__name__}: {_reason(exc)}")
    return None


def _toml(body: str) -> ParseError | None:
    try:
        tomllib.loads(body)
    except tomllib.TOMLDecodeError as exc:
        return ParseError(f"TOMLDecodeError: {exc}")
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. an integer past the digit limit
        return ParseError(f"TOML value: {type(exc).__name__}: {_reason(exc)}")
    return None


_SQL_LOCK = threading.Lock()
_MAX_SQL_DEPTH = 200


def _sql(body: str) -> ParseError | None:
    import duckdb

    depth = deepest = 0
    for char in body:  # the parser recurses on nesting: refuse the absurd before it
        depth += (char == "(") - (char == ")")
        deepest = max(deepest, depth)
    if deepest > _MAX_SQL_DEPTH:
        return ParseError(f"parentheses nested {deepest} deep (more than {_MAX_SQL_DEPTH})")
    with _SQL_LOCK:
        connection = duckdb.connect(":memory:")
        try:
            connection.extract_statements(body)
        except Exception as exc:  # duckdb.Error, and whatever else the block makes it raise
            return ParseError(_reason(exc) or type(exc).__name__)
        finally:
            connection.close()
    return None


PARSERS: dict[str, Callable[[str], ParseError | None]] = {
    "python": _python,
    "json": _json,
    "yaml": _yaml,
    "toml": _toml,
    "sql": _sql,
}
"""The languages whose blocks are checked, by canonical name."""

ALIASES: dict[str, str] = {"py": "python", "python3": "python", "yml": "yaml"}
"""Further info strings read as one of :data:`PARSERS`' languages."""


def canonical(language: str) -> str:
    """The canonical name of a fence's language (lower case), e.g. ``yml`` -> ``yaml``."""
    lowered = language.lower()
    return ALIASES.get(lowered, lowered)


def parse_error(language: str, body: str) -> ParseError | None:
    """Why ``body`` does not parse as ``language``; None when it parses or the
    language is not checked. Never raises but ``ImportError`` (a parser package
    missing: the judge's problem); the document's size limit bounds the work."""
    parser = PARSERS.get(canonical(language))
    if parser is None:
        return None
    try:
        return parser(body)
    except (RecursionError, MemoryError) as exc:
        return ParseError(f"{type(exc).__name__}: nested too deeply to parse")
    except ImportError:
        raise
    except Exception as exc:  # anything else the block makes its parser raise is its defect
        return ParseError(f"{type(exc).__name__}: {_reason(exc)}")
