"""Importing Great Expectations without executing the libraries a check never calls.

GX's import executes scipy.stats and altair (for the KL-divergence expectation, which
uses them only inside its methods): modules the suites here never reach. Imported
through ``lazily_loaded``, each of them is created as a lazy module
(``importlib.util.LazyLoader``): its code runs on the first attribute access, so code
that does use it later still gets the whole module, and a module already imported is
left as it is.

GX also imports the clients of the stores and databases it can validate (SQLAlchemy,
boto3 and botocore, Google Cloud) whenever they are installed, and reads their
attributes at once, so a lazy module would gain nothing. Each is an optional
dependency of GX, which replaces one that is not installed with a placeholder, and
the suites here validate pandas frames only: imported through ``without``, GX finds
them not installed (a package imported before is left as it is, and found again
once the import is over).

Measured gain: importing the suites (Great Expectations and pandas with them) took
3.8 CPU-s instead of 5.6 with the lazy modules (medians of 3 interleaved pairs of
fresh processes, load 14), and 3.3-4.3 instead of 4.7-5.3 with the optional
backends left out too (3 interleaved pairs, load 12-13).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from types import ModuleType

LAZY_MODULES = ("scipy.stats", "altair")
"""Modules GX imports at import time and no expectation of our suites uses."""
OPTIONAL_BACKENDS = ("sqlalchemy", "boto3", "botocore", "google")
"""GX's optional store and database clients (top-level packages), which no suite here uses."""


class _LazyFinder(importlib.abc.MetaPathFinder):
    """Finds ``names`` as the path finder does, with a loader that defers their code."""

    def __init__(self, names: Sequence[str]) -> None:
        self._names = frozenset(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self._names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


@contextlib.contextmanager
def lazily_loaded(names: Sequence[str] = LAZY_MODULES) -> Iterator[None]:
    """While inside, a first import of one of ``names`` gives a lazy module.

    Python 3.11's lazy module is not safe to first use from two threads at once; this
    project uses none of the modules named here itself (its charts are Vega-Lite
    written out, its exact statistics its own), so only GX's own calls may load them.
    """
    finder = _LazyFinder(names)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


class _AbsentFinder(importlib.abc.MetaPathFinder):
    """Finds no module of the packages ``names`` (their submodules included)."""

    def __init__(self, names: Sequence[str]) -> None:
        self._names = frozenset(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] in self._names:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


@contextlib.contextmanager
def without(names: Sequence[str] = OPTIONAL_BACKENDS) -> Iterator[None]:
    """While inside, the packages ``names`` that are not imported yet cannot be imported
    (as if not installed); one imported already, with all of its submodules, is left
    alone, so a library never gets part of a package."""
    absent = [name for name in names if name not in sys.modules]
    finder = _AbsentFinder(absent)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
