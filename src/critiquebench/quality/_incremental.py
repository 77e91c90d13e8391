"""The data-quality check of a run done as its units land, so little is left for its end.

Most expectations hold row by row: a value not null, in a set or a range, two
columns of a row agreeing (``ROW_LEVEL``). Whether such an expectation holds on a
table is whether it holds on every row, and a row's verdict depends on nothing but
the row, its derived columns included (``_load.DERIVED_SQL``) and the run's
setting (arms, retry limit). So each chunk of landed rows (``_landed``) is
validated against those expectations when it lands, by Great Expectations, and a
row already validated, identical in every column under the same setting, needs no
second look. At the end only the rows never validated in that exact form are
(tail), then what needs the whole run, on the whole run's tables: the expectations
over the table (columns present, uniqueness across rows, row and distinct counts),
and every row-level expectation that failed anywhere or was never reported in full,
so that each failure is reported with its offending rows from the whole table, as a
check of all at once reports it. The report is the same as ``check_frames`` gives.

GX costs about the same per expectation whatever the rows (~8 ms), so what the
end costs is one pass over the tail, in two processes, not the run's size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pyarrow as pa

from critiquebench.pipeline import TABLES
from critiquebench.quality._check import _unfinished as unfinished_units
from critiquebench.quality._check import _validate as validate_tables
from critiquebench.quality._check import check_frames
from critiquebench.quality._fork import both
from critiquebench.quality._landed import Chunk, base_tables, final_files, landed_files, read_chunk
from critiquebench.quality._report import ExpectationOutcome, QualityReport
from critiquebench.quality._rows import (
    Frames,
    Setting,
    Verdicts,
    derive,
    gx_order,
    row_level,
    unseen_rows,
    validate_rows,
    verdicts_of,
)
from critiquebench.quality._suites import build_suite


@dataclass(frozen=True)
class _Pass:
    chunk: Chunk
    frames: Frames
    verdicts: Verdicts | None = None


def _next_pass(
    run_dir: Path,
    run_id: str,
    seen: frozenset[Path],
    runs_before: list[pa.Table],
    known: frozenset[tuple[Setting, str, int]],
) -> _Pass | None:
    """Read the units landed that are not in ``seen`` and validate their rows; None
    when none landed. ``known``: the outcomes already held in full (the first pass
    asks GX for every detail, the later ones only whether each held: half the work)."""
    if not (run_dir / "runs").is_dir():
        return None  # the run has not started
    files = landed_files(run_dir, set(seen))
    if not files["cases"] and not files["runs"]:
        return None
    chunk = read_chunk(files)
    runs = pa.concat_tables([*runs_before, chunk.tables["runs"]])
    if not len(runs):
        return None  # nothing says yet which arms to expect: read again later
    frames = derive(chunk.tables, runs)
    summary = any(
        (frames.setting, table, i) not in known
        for table in TABLES
        if len(frames.derived[table])
        for i in row_level(table, frames.arms)
    )
    return _Pass(chunk, frames, validate_rows(run_id, frames, summary))


@dataclass
class LandingCheck:
    """The check of one run, fed chunk by chunk as its units land, then finished."""

    output: Path
    run_id: str
    _passes: list[_Pass] = field(default_factory=list)
    _seen: set[Path] = field(default_factory=set)
    _held: dict[tuple[Setting, str, int], ExpectationOutcome] = field(default_factory=dict)
    """Full outcomes of row-level expectations that held, by setting, table, position:
    one that holds on every row reports the same outcome whatever the rows."""

    def take(self) -> Callable[[], _Pass | None]:
        """The next pass: read the units landed since the last one and validate their
        rows (run it anywhere, a fork say, and hand its value to ``record``)."""
        runs = [p.chunk.tables["runs"] for p in self._passes]
        known = frozenset(self._held)
        run_dir = self.output / self.run_id
        return partial(_next_pass, run_dir, self.run_id, frozenset(self._seen), runs, known)

    def record(self, done: _Pass | None) -> None:
        """The value of a pass ``take`` gave (None: nothing had landed)."""
        if done is None:
            return
        self._passes.append(done)
        self._seen.update(done.chunk.files)
        self._remember(done.frames.setting, done.verdicts or {})

    def _remember(self, setting: Setting, verdicts: Verdicts) -> None:
        for table, found in verdicts.items():
            for i, verdict in found.items():
                if verdict.held and verdict.outcome is not None:
                    self._held.setdefault((setting, table, i), verdict.outcome)

    def finish(self) -> QualityReport:
        """The run's report: the rows not validated yet, then what needs the whole run."""
        files, now = final_files(self.output, self.run_id)
        kept = [p for p in self._passes if p.chunk.unchanged(now)]
        read = {path for p in kept for path in p.chunk.files}
        rest = read_chunk({t: [p for p in files[t] if p not in read] for t in TABLES})
        base = base_tables([p.chunk for p in kept] + [rest])
        if base is None:  # columns differ between files: the whole run read at once
            from critiquebench.quality._check import check_run

            return check_run(self.output, self.run_id)
        whole = derive(base, base["runs"])
        validated = [
            p for p in kept if p.verdicts is not None and p.frames.setting == whole.setting
        ]
        if not validated:
            retry_limit = whole.retry_limit
            return check_frames(self.run_id, whole.pandas(), retry_limit, forked=True)
        return self._finish(whole, validated)

    def _finish(self, whole: Frames, validated: list[_Pass]) -> QualityReport:
        tail = Frames(
            unseen_rows(whole.derived, [p.frames.derived for p in validated]),
            whole.retry_limit,
            whole.arms,
        )
        failed = {
            (table, i)
            for p in validated
            for table, found in (p.verdicts or {}).items()
            for i, verdict in found.items()
            if not verdict.held
        }
        full = self._full_report_needed(whole, failed)

        def check_tail(tables: tuple[str, ...]) -> Verdicts:
            chosen = {t: row_level(t, whole.arms) for t in tables if len(tail.derived[t])}
            return verdicts_of(self.run_id, tail, chosen, summary=False)

        def rest_and_whole() -> tuple[Verdicts, Verdicts]:
            return check_tail(("runs", "attempts", "calls")), verdicts_of(
                self.run_id, whole, full, summary=True
            )

        cases_tail, (other_tail, found) = both(partial(check_tail, ("cases",)), rest_and_whole)
        tails = {**cases_tail, **other_tail}
        late = {
            table: [i for i, v in tails.get(table, {}).items()
                    if not v.held and i not in found.get(table, {})]
            for table in TABLES
        }  # fmt: skip
        if any(late.values()):  # failed only in the tail: reported from the whole table
            for table, more in verdicts_of(self.run_id, whole, late, summary=True).items():
                found.setdefault(table, {}).update(more)
        return self._report(whole, found)

    def _full_report_needed(
        self, whole: Frames, failed: set[tuple[str, int]]
    ) -> dict[str, list[int]]:
        """Positions to validate on the whole tables with every detail: what needs the
        whole run, what failed somewhere, what never reported its full outcome."""
        chosen: dict[str, list[int]] = {}
        for table in TABLES:
            rows = set(row_level(table, whole.arms))
            count = len(build_suite(table, whole.arms).expectations)
            chosen[table] = [
                i
                for i in range(count)
                if i not in rows
                or (table, i) in failed
                or (whole.setting, table, i) not in self._held
            ]
        return chosen

    def _report(self, whole: Frames, found: Verdicts) -> QualityReport:
        results: list[ExpectationOutcome] = []
        for table in TABLES:
            suite = build_suite(table, whole.arms)
            mine = found.get(table, {})
            if any(v.raised for v in mine.values()):
                # GX moves an expectation that raised ahead of the others, by the phase it
                # raised in: the table's whole suite at once puts them where it does.
                parameters = {"run_ids": [self.run_id], "retry_limit": whole.retry_limit}
                frame = whole.pandas((table,))
                results += validate_tables((table,), frame, whole.arms, parameters)[table]
                continue
            for i in gx_order(suite):
                outcome = mine[i].outcome if i in mine else self._held[(whole.setting, table, i)]
                assert outcome is not None  # asked for in full on the whole table
                results.append(outcome)
        frames = whole.pandas(("runs", "cases"))
        unfinished, missing = unfinished_units(frames)
        passed = all(r.success for r in results)
        return QualityReport(self.run_id, passed, results, unfinished, missing)
