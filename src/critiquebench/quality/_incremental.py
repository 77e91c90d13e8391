"""The data-quality check of a run done as its units land, so little is left for its end.

Most expectations hold row by row: a value not null, in a set or a range, two
columns of a row agreeing (``_rows.ROW_LEVEL``). Whether such an expectation holds
on a table is whether it holds on every row, and a row's verdict depends on nothing
but the row, its derived columns included (``_load.DERIVED_SQL``), and the run's
setting (arms, retry limit). So the rows of landed units (``_landed``) are
validated against those expectations by Great Expectations while the units run,
and a row already validated, identical in every column under the same setting,
needs no second look. At the end only the rows never validated in that exact form
are (the tail), then what needs the whole run, on the whole run's tables: the
expectations over the table (columns present, uniqueness across rows, row and
distinct counts), and every row-level expectation that failed anywhere or was never
reported in full, so that each failure is reported with its offending rows from the
whole table, as a check of all at once reports it. The report is the one
``check_frames`` gives, outcomes in GX's order.

GX costs about the same per expectation whatever the rows (~4 ms with only
pass/fail asked, ~8 ms with details), so the end costs one pass over the tail, in
two processes, whatever the run's size.
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
class Checked:
    """Rows validated together: their derived tables, under what setting, the verdicts."""

    frames: Frames
    verdicts: Verdicts


def _read_landed(run_dir: Path, seen: frozenset[Path]) -> Chunk | None:
    """The rows of the units landed that are not in ``seen``; None when none landed."""
    if not (run_dir / "runs").is_dir():
        return None  # the run has not started
    files = landed_files(run_dir, set(seen))
    if not files["cases"] and not files["runs"]:
        return None
    return read_chunk(files)


def _check_chunks(
    run_id: str,
    chunks: list[Chunk],
    runs: pa.Table,
    known: frozenset[tuple[Setting, str, int]],
) -> Checked | None:
    """Validate the rows of ``chunks`` under the setting of ``runs``; None when the
    chunks' columns differ (the end then validates them). ``known``: the outcomes
    already held in full (the first check asks GX for every detail, the later ones
    only whether each held: half the work)."""
    base = base_tables(chunks)
    if base is None:
        return None
    frames = derive(base, runs)
    summary = any(
        (frames.setting, table, i) not in known
        for table in TABLES
        if len(frames.derived[table])
        for i in row_level(table, frames.arms)
    )
    return Checked(frames, validate_rows(run_id, frames, summary))


@dataclass
class LandingCheck:
    """The check of one run, fed as its units land, then finished.

    Reading what landed (``read_job``) and validating what was read (``check_job``)
    are separate jobs, to run anywhere (a fork, say) and hand to ``record``: reading
    costs by the file, validating by the expectation (~1 s whatever the rows), so a
    follower reads often, to leave little for the end to read, and validates seldom.
    """

    output: Path
    run_id: str
    _chunks: list[Chunk] = field(default_factory=list)
    _checked_up_to: int = 0
    """Chunks before this one were validated (or are being, see ``_checking``)."""
    _checking: int = 0
    _checks: list[Checked] = field(default_factory=list)
    _seen: set[Path] = field(default_factory=set)
    _held: dict[tuple[Setting, str, int], ExpectationOutcome] = field(default_factory=dict)
    """Full outcomes of row-level expectations that held, by setting, table, position:
    one that holds on every row reports the same outcome whatever the rows."""

    def read_job(self) -> Callable[[], Chunk | None]:
        """Read the units landed since the last read."""
        run_dir = self.output / self.run_id
        return partial(_read_landed, run_dir, frozenset(self._seen))

    def check_job(self) -> Callable[[], Checked | None] | None:
        """Validate the rows read since the last check; None when there are none, or no
        runs row yet says which arms to expect."""
        runs = pa.concat_tables([c.tables["runs"] for c in self._chunks]) if self._chunks else None
        if runs is None or not len(runs) or self._checked_up_to == len(self._chunks):
            return None
        self._checking = len(self._chunks)
        fresh = self._chunks[self._checked_up_to :]
        return partial(_check_chunks, self.run_id, fresh, runs, frozenset(self._held))

    def record(self, done: Chunk | Checked | None) -> None:
        """The value of a job (None: nothing to record)."""
        if isinstance(done, Chunk):
            self._chunks.append(done)
            self._seen.update(done.files)
        elif isinstance(done, Checked):
            self._checks.append(done)
            self._checked_up_to = self._checking
            self._remember(done.frames.setting, done.verdicts)

    def _remember(self, setting: Setting, verdicts: Verdicts) -> None:
        for table, found in verdicts.items():
            for i, verdict in found.items():
                if verdict.held and verdict.outcome is not None:
                    self._held.setdefault((setting, table, i), verdict.outcome)

    def finish(self) -> QualityReport:
        """The run's report: the rows not validated yet, then what needs the whole run."""
        files, now = final_files(self.output, self.run_id)
        kept = [chunk for chunk in self._chunks if chunk.unchanged(now)]
        read = {path for chunk in kept for path in chunk.files}
        rest = read_chunk({t: [p for p in files[t] if p not in read] for t in TABLES})
        base = base_tables([*kept, rest])
        if base is None:  # columns differ between files: the whole run read at once
            from critiquebench.quality._check import check_run

            return check_run(self.output, self.run_id)
        whole = derive(base, base["runs"])
        # A verdict is on rows as they were: it stands whichever files they came from.
        validated = [check for check in self._checks if check.frames.setting == whole.setting]
        if not validated:
            retry_limit = whole.retry_limit
            return check_frames(self.run_id, whole.pandas(), retry_limit, forked=True)
        return self._finish(whole, validated)

    def _finish(self, whole: Frames, validated: list[Checked]) -> QualityReport:
        tail = Frames(
            unseen_rows(whole.derived, [check.frames.derived for check in validated]),
            whole.retry_limit,
            whole.arms,
        )
        failed = {
            (table, i)
            for check in validated
            for table, found in check.verdicts.items()
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
