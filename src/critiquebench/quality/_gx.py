"""Importing Great Expectations without executing the libraries a check never calls.

GX's import executes scipy.stats and altair (for the KL-divergence expectation, which
uses them only inside its methods) and boto3 (for S3 stores): modules the suites
here never reach. Imported through ``lazily_loaded``, each of them is created as a
lazy module (``importlib.util.LazyLoader``): its code runs on the first attribute
access, so code that does use it later still gets the whole module, and a module
already imported is left as it is.

Measured gain: importing the suites (Great Expectations and pandas with them) took
3.8 CPU-s instead of 5.6 (medians of 3 interleaved pairs of fresh processes, load 14).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from types import ModuleType

LAZY_MODULES = ("scipy.stats", "altair", "boto3")
"""Modules GX imports at import time and no expectation of our suites uses."""


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
    project uses the modules named here (altair for charts) on one thread only.
    """
    finder = _LazyFinder(names)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
