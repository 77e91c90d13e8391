"""``<output>/LESSONS.md``: the lessons of every run under one output folder, accumulated.

Each report build records its run's failure-kind counts in ``<output>/lessons.json``,
keyed by run id, and rewrites ``LESSONS.md`` from all the runs recorded there. A run
reported again replaces its own entry, so nothing is counted twice; a run whose folder
was deleted keeps its lessons. Both files are written atomically, under a lock, so two
runs finishing at once do not lose each other's entry.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from critiquebench.analysis.report import FailureKindCount, RunReport
from critiquebench.pipeline import Root, atomic_write_text

LESSONS_FILE = "LESSONS.md"
STATE_FILE = "lessons.json"
_LOCK_FILE = ".lessons.lock"
_STATE_VERSION = 1
BASELINE = "A"  # no fix edge: its failures say what the model gets wrong, not the loop


@dataclass(frozen=True, kw_only=True)
class RunLessons:
    """What one run adds to the project lessons."""

    run_id: str
    suite: str
    model: str
    started_at: str
    units: dict[str, int]  # per arm, units counted (infrastructure failures left out)
    kinds: tuple[FailureKindCount, ...]


@dataclass(frozen=True, kw_only=True)
class LessonsState:
    """The content of ``lessons.json``: every run's entry, by run id."""

    version: int
    runs: dict[str, RunLessons]


_STATE: TypeAdapter[LessonsState] = TypeAdapter(LessonsState)


def run_lessons(report: RunReport) -> RunLessons:
    """The entry of ``report``'s run."""
    meta = report.meta
    return RunLessons(
        run_id=report.run_id,
        suite=meta.suite if meta else "",
        model=meta.model if meta else "",
        started_at=meta.started_at if meta else "",
        units={arm.arm: arm.n for arm in report.arms},
        kinds=report.failure_kinds,
    )


def read_state(path: Root) -> LessonsState:
    """``lessons.json``; an empty state when it does not exist yet."""
    if not path.exists():
        return LessonsState(version=_STATE_VERSION, runs={})
    try:
        state = _STATE.validate_json(path.read_bytes())
    except ValidationError as error:
        raise ValueError(
            f"{path}: not a critiquebench lessons file ({error.error_count()} error(s), first: "
            f"{error.errors()[0]['msg']}); move it away and run `critiquebench report RUN_ID` "
            "for the runs to count"
        ) from None
    if state.version != _STATE_VERSION:
        raise ValueError(
            f"{path}: lessons version {state.version}, this critiquebench reads "
            f"{_STATE_VERSION}; move it away and report the runs again"
        )
    return state


@contextmanager
def _locked(folder: Root) -> Iterator[None]:
    if not isinstance(folder, Path):
        # An object store has no lock: reports of two runs finishing at the same
        # moment may each miss the other's entry, which its next report restores.
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / _LOCK_FILE).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def update_project_lessons(output: Root, report: RunReport) -> Root:
    """Record ``report``'s run in ``output/lessons.json`` and rewrite ``output/LESSONS.md``.

    Idempotent: the run's entry is replaced, never added twice. Returns LESSONS.md's path.
    """
    with _locked(output):
        state = read_state(output / STATE_FILE)
        runs = {**state.runs, report.run_id: run_lessons(report)}
        state = LessonsState(version=_STATE_VERSION, runs=dict(sorted(runs.items())))
        data = json.dumps(_STATE.dump_python(state, mode="json"), indent=2, sort_keys=True)
        _write(output / STATE_FILE, data + "\n")
        return _write(output / LESSONS_FILE, project_lessons_markdown(state))


def _write(path: Root, text: str) -> Root:
    atomic_write_text(path, text)
    return path


@dataclass
class _Tally:
    kept: int = 0
    units: int = 0
    first_draft: int = 0
    fixed: int = 0
    kept_runs: set[str] = field(default_factory=set)  # runs with the kind in an answer kept
    draft_runs: set[str] = field(default_factory=set)  # runs with the kind in a first draft


def _tallies(state: LessonsState, *, looping: bool | None) -> dict[tuple[str, str], _Tally]:
    """Per (suite, kind), summed over runs; ``looping`` picks the arms with a fix edge
    (True), arm A (False) or every arm (None)."""
    tallies: dict[tuple[str, str], _Tally] = {}
    for entry in state.runs.values():
        for item in entry.kinds:
            if looping is not None and (item.arm != BASELINE) != looping:
                continue
            tally = tallies.setdefault((item.suite, item.kind), _Tally())
            tally.kept += item.count
            tally.units += item.units
            tally.first_draft += item.first_draft
            tally.fixed += item.fixed
            if item.count:
                tally.kept_runs.add(entry.run_id)
            if item.first_draft:
                tally.draft_runs.add(entry.run_id)
    return tallies


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def project_lessons_markdown(state: LessonsState) -> str:
    """LESSONS.md from every recorded run; the same state gives the same text."""
    lines = [
        "# Lessons across runs",
        "",
        f"{_plural(len(state.runs), 'run')} recorded in `{STATE_FILE}` (one entry per run id; "
        "reporting a run again replaces its entry). Failures are counted in the answers kept "
        "(one final attempt per unit); `not_run` is not a kind.",
        "",
    ]
    everything = _tallies(state, looping=None)
    most = sorted(
        ((key, t) for key, t in everything.items() if t.kept),
        key=lambda item: (-item[1].kept, item[0]),
    )
    lines += ["## What failed most", ""]
    lines += [
        f"- {suite}: {kind} x{t.kept} in answers kept ({_plural(t.units, 'unit')}, "
        f"{_plural(len(t.kept_runs), 'run')})"
        for (suite, kind), t in most
    ] or ["- nothing: no answer kept failed a check"]
    loops = _tallies(state, looping=True)
    fixed = sorted(
        ((key, t) for key, t in loops.items() if t.fixed),
        key=lambda item: (-item[1].fixed, item[0]),
    )
    lines += ["", "## What the loop fixed", ""]
    lines += [
        f"- {suite}: {kind}: {t.fixed} of {t.first_draft} first-draft failures fixed "
        f"({t.fixed / t.first_draft:.0%}, {_plural(len(t.draft_runs), 'run')})"
        for (suite, kind), t in fixed
    ] or ["- nothing yet"]
    never = sorted(
        ((key, t) for key, t in loops.items() if t.first_draft and not t.fixed),
        key=lambda item: (-item[1].first_draft, item[0]),
    )
    lines += ["", "## What the loop never fixes", ""]
    lines += [
        f"- {suite}: {kind}: 0 of {t.first_draft} first-draft failures fixed "
        f"({_plural(len(t.draft_runs), 'run')})"
        for (suite, kind), t in never
    ] or ["- nothing: every failure kind the loop met was fixed at least once"]
    lines += ["", "## Runs", ""]
    lines += [
        f"- {e.run_id}: suite {e.suite}, model {e.model}, started {e.started_at}, units "
        + ", ".join(f"{arm}={n}" for arm, n in sorted(e.units.items()))
        for e in state.runs.values()
    ]
    return "\n".join(lines) + "\n"
