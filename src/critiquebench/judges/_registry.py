"""Judges by name: the one interface, and the entry points that register judges.

A package registers a judge for its own artifact kind in its ``pyproject.toml``::

    [project.entry-points."critiquebench.judges"]
    haiku = "my_package.judges:HaikuJudge"

The object named is called with no arguments once per process and must return a
:class:`Judge`; a suite line selects it with ``"judge": "haiku"``. Two optional
attributes of the object named (read without calling it) tell the rest of the tool
about the artifact:

- ``artifact_format``: an :class:`ArtifactFormat` (how the loop asks for the
  artifact and reads it from a reply); Python code when absent;
- ``case_problems(case) -> list[str]``: what is wrong with a suite line's judge data
  and checks, each phrased as a fix; checked when the suite is read.
"""

from __future__ import annotations

import functools
import importlib
import sys
import threading
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from critiquebench.judges._artifact import PYTHON_FORMAT, ArtifactFormat
from critiquebench.judges._failure import JudgeResult
from critiquebench.judges._proof import ProofDoor

if TYPE_CHECKING:
    from critiquebench.judges._case import Case

ENTRY_POINT_GROUP = "critiquebench.judges"
"""The entry-point group judges are registered in."""

DEFAULT_JUDGE = "python"
"""The judge of a case whose suite names none."""


@runtime_checkable
class Judge(Protocol):
    """Counts the defects of one artifact of a case.

    Must never raise: the artifact's problems are failures, and the judge's own
    problems are ``JudgeResult.infrastructure_error``.
    """

    def __call__(self, case: Case, artifact: str) -> JudgeResult: ...


JudgeFactory = Callable[[], Judge]


class UnknownJudgeError(LookupError):
    """A judge name that no installed package registers."""

    def __init__(self, name: str) -> None:
        self.name = name
        known = ", ".join(judge_names()) or "none"
        super().__init__(
            f"unknown judge {name!r}: registered judges are {known} "
            f"(entry-point group {ENTRY_POINT_GROUP!r})"
        )


_BUILTIN: dict[str, tuple[str, str]] = {
    DEFAULT_JUDGE: ("critiquebench.judges.python", "PythonJudge"),
    "sql": ("critiquebench.judges.sql", "SqlJudge"),
    "json": ("critiquebench.judges.json", "JsonJudge"),
    "markdown": ("critiquebench.judges.markdown", "MarkdownJudge"),
    "trigger": ("critiquebench.judges.trigger", "TriggerJudge"),
}
"""The bundled judges (module, class). Also declared as entry points in pyproject.toml;
kept here so a source checkout whose metadata predates the declarations still finds
them. Only the judge asked for is imported: a Python run never loads the json
judge's jsonschema or the markdown judge's parser and dictionary."""


def _builtin(name: str) -> JudgeFactory | None:
    found = _BUILTIN.get(name)
    if found is None:
        return None
    factory: JudgeFactory = getattr(importlib.import_module(found[0]), found[1])
    return factory


@functools.lru_cache(maxsize=4)
def _registered(search_path: tuple[str, ...]) -> dict[str, EntryPoint]:
    """The judges' entry points installed on ``search_path`` (``sys.path``), by name.

    Reading them scans the metadata of every installed distribution (tens of ms);
    the loop asks for a case's artifact format at every prompt and every reply (the
    scans were about a third of a replay run's CPU, fa83256), so
    the scan is done once per search path, and again only when ``sys.path`` changes
    (a package installed into a running process lands on a new path entry).
    """
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, point)  # the first on the path wins, as before
    return found


def judge_names() -> list[str]:
    """Every registered judge name, sorted."""
    return sorted(set(_registered(tuple(sys.path))) | set(_BUILTIN))


def judge_factory(name: str) -> JudgeFactory:
    """The factory registered under ``name``.

    Raises:
        UnknownJudgeError: no package registers ``name``.
    """
    return _factory(name, tuple(sys.path))


@functools.lru_cache(maxsize=64)
def _factory(name: str, search_path: tuple[str, ...]) -> JudgeFactory:
    # Loaded once per name and search path, like the scan: the loop asks at every
    # prompt. An unknown name raises, and lru_cache keeps no raised call.
    point = _registered(search_path).get(name)
    if point is not None:
        factory: JudgeFactory = point.load()
        return factory
    builtin = _builtin(name)
    if builtin is None:
        raise UnknownJudgeError(name)
    return builtin


def artifact_format(name: str) -> ArtifactFormat:
    """The artifact format of the judge registered under ``name`` (Python if it
    declares none).

    Raises:
        UnknownJudgeError: no package registers ``name``.
    """
    found = getattr(judge_factory(name), "artifact_format", None)
    return found if isinstance(found, ArtifactFormat) else PYTHON_FORMAT


def case_problems(case: Case) -> list[str]:
    """What the case's judge finds wrong with its judge data and checks (none when
    the judge declares no ``case_problems``).

    Raises:
        UnknownJudgeError: no package registers ``case.judge``.
    """
    check = getattr(judge_factory(case.judge), "case_problems", None)
    if check is None:
        return []
    problems: list[str] = check(case)
    return problems


class JudgeSet:
    """One judge: the registered judge a case names, each created on first use.

    The single entry the loop judges through. Never raises. A judge that cannot be
    loaded makes the attempt an infrastructure error; any other failure to judge
    (the judge raised, or returned ``infrastructure_error``) is only suspected until
    :class:`~critiquebench.judges._proof.ProofDoor` proves it: the answer is judged
    again alone on a fresh judge beside a control of known outcome, and only a
    failing control excludes the unit; otherwise the answer owns the failure as a
    defect (``timeout``, ``crash``).

    A judge may offer, besides ``close()``: ``fresh()`` (a new judge for a proof,
    e.g. on new sandbox workers; closed after it) or ``restart()``; ``canary()``
    (a case and a known-good answer, the control where a case has no reference
    solution); ``owned_result(case, artifact, kind, message)`` (an answer-owned
    failure counted its own way, never fewer defects than an honest judgement).
    """

    def __init__(self, judges: dict[str, Judge] | None = None) -> None:
        self._judges: dict[str, Judge] = dict(judges or {})
        self._lock = threading.Lock()
        self._door = ProofDoor()

    def get(self, name: str) -> Judge:
        """The judge registered under ``name``, created once."""
        with self._lock:
            judge = self._judges.get(name)
            if judge is None:
                judge = judge_factory(name)()
                self._judges[name] = judge
            return judge

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        """Judge ``artifact`` with the judge ``case.judge`` names (through the proof door)."""
        try:
            judge = self.get(case.judge)
        except Exception as exc:
            return JudgeResult(
                failures=(),
                checks_total=len(case.checks),
                checks_passed=0,
                duration_s=0.0,
                infrastructure_error=f"judge {case.judge!r}: {type(exc).__name__}: {exc}",
            )
        return self._door.judge(judge, case.judge, case, artifact)

    def close(self) -> None:
        """Close every judge that has a ``close`` method."""
        with self._lock:
            judges = list(self._judges.values())
        for judge in judges:
            close = getattr(judge, "close", None)
            if callable(close):
                close()
