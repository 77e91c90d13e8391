"""Resolve a suite name or path to its cases."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from critiquebench.judges import Case
from critiquebench.suites._humaneval import load_humaneval
from critiquebench.suites._jsonl import load_jsonl_suite

_BUNDLED_DIR = Path(__file__).with_name("data")


BUNDLED_JSONL: dict[str, Path] = {path.stem: path for path in sorted(_BUNDLED_DIR.glob("*.jsonl"))}
"""Bundled suites stored as JSONL files (``basic``, ``sql``, ``json``, ``markdown``,
``trigger``), each named after its file, so problems can name their lines."""


def _jsonl_loader(path: Path) -> Callable[[], list[Case]]:
    return lambda: load_jsonl_suite(path)


BUNDLED_SUITES: dict[str, Callable[[], list[Case]]] = {
    **{name: _jsonl_loader(path) for name, path in BUNDLED_JSONL.items()},
    "humaneval": load_humaneval,
}


def load_suite(name_or_path: str, limit: int | None = None) -> list[Case]:
    """Load a bundled suite by name, or a JSONL suite file by path.

    Args:
        name_or_path: ``basic``, ``humaneval``, or a path to a ``.jsonl`` file.
        limit: keep only the first ``limit`` cases (None keeps all).
    """
    loader = BUNDLED_SUITES.get(name_or_path)
    if loader is not None:
        cases = loader()
    else:
        path = Path(name_or_path)
        if not path.exists():
            known = ", ".join(sorted(BUNDLED_SUITES))
            raise FileNotFoundError(
                f"suite {name_or_path!r} is neither a bundled suite ({known}) nor an existing file"
            )
        cases = load_jsonl_suite(path)
    if limit is not None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        cases = cases[:limit]
    return cases
