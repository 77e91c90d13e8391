"""Lazy re-exports for package ``__init__`` files (PEP 562).

Importing ``critiquebench`` for a quick command (``--help``, a refused option) must
not import LangGraph, Prefect or the Parquet writer, which take seconds together.
A package lists the names it re-exports from heavy private modules; each module is
imported on first access of one of its names.

Measured gain: the run's process, which connects to the run's tables and reads
report.json, no longer loads altair, scipy and Jinja2 for it: 1.6 s and ~150 MiB
(2b063be, machine load not recorded).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose ``exports`` maps a public
    name to the submodule (relative, e.g. ``"_graph"``) that defines it."""

    def __getattr__(name: str) -> object:
        module_name = exports.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module_name}"), name)
        setattr(sys.modules[package], name, value)  # later lookups skip this hook
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__
