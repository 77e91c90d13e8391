"""What hostile replies and returned values cost the trusted parent (issue 21).

Times, in the judge's own process, pulling the answer out of replies built to make a
backtracking pattern slow (one long line of spaces, tildes, word characters or
backticks after a fence), and decoding returned values whose items all share one hash
(Python does not randomise the hash of numbers: ``k * (2**61 - 1)`` all hash to 0).
Every number printed should be well under a second.

Run: .venv/bin/python bench/extraction.py [--scale 0.1]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from critiquebench.judges import artifact_format
from critiquebench.judges._plain import MalformedValue, decode
from critiquebench.suites import Case

_MODULUS = 2**61 - 1  # the modulus of CPython's numeric hash


def _case(judge: str) -> Case:
    return Case(id=f"bench/{judge}", prompt="p", entry_point="f", checks=(), judge=judge)


def _replies(scale: float) -> list[tuple[str, str, str]]:
    """(judge, what, reply): the issue's 60,000-character markdown line and
    200,000-character Python line, in the shapes that made the old patterns backtrack."""
    md, py = int(60_000 * scale), int(200_000 * scale)
    return [
        ("markdown", f"a fence then {md} spaces", "```markdown\n~~~" + " " * md + "`\n```"),
        ("markdown", f"a fence then {md} tildes", "```markdown\n" + "~" * md + "`\n```"),
        ("markdown", f"a fence then {md} letters", "```markdown\n~~~" + "a" * md + "`\n```"),
        ("python", f"a fence then {py} spaces", "```" + " " * py),
        ("python", f"a fence then {py} letters", "```" + "x" * py),
        ("python", f"{py // 3} fences on one line", "```" * (py // 3)),
        ("json", f"a fence then {py} letters", "```" + "x" * py),
    ]


def _colliding(count: int) -> list[Any]:
    values = (k * _MODULUS for k in range(count))
    return [value if value < 2**53 else {"int": str(value)} for value in values]


def _values(scale: float) -> list[tuple[str, Any]]:
    count = int(29_000 * scale)
    items = _colliding(count)
    return [
        (f"a set of {count} integers with one hash", {"set": items}),
        (f"a dict of {count} such keys", {"dict": [[item, 0] for item in items]}),
        (f"a set of {count} ordinary integers", {"set": list(range(count))}),
        (f"a list of {count} equal large integers", [{"int": str(2**70)}] * count),
    ]


def _timed(action: Callable[[], object]) -> tuple[float, str]:
    started = time.perf_counter()
    try:
        outcome = f"{len(str(action()))} characters out"
    except MalformedValue as exc:
        outcome = f"refused: {exc}"
    return time.perf_counter() - started, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="input size (1 = the issue's)")
    scale = parser.parse_args().scale
    print("extraction (the answer pulled out of a reply):")
    for judge, what, reply in _replies(scale):
        spent, outcome = _timed(partial(artifact_format(judge).extract, _case(judge), reply))
        print(f"  {judge:8} {what:40} {spent:8.3f} s  ({outcome})")
    print("decoding returned values:")
    for what, value in _values(scale):
        spent, outcome = _timed(partial(decode, value))
        print(f"  {what:49} {spent:8.3f} s  ({outcome[:70]})")


if __name__ == "__main__":
    main()
