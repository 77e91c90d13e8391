"""Which files hold a run's rows: the names the store writes, and which of them count.

A run's unit tables (``cases``, ``attempts``, ``calls``, ``transcripts``) come in two
layouts, and a run may hold both (a run of an earlier version resumed by this one)::

    <table>/<unit key>.parquet             one unit (runs written before batches)
    <table>/<stamp>-<name>-n<N>.parquet    a batch of N units, one file per table
    <table>/<stamp>-part-n<N>.parquet      a compaction of batches: N units
    compactions/<stamp>-part-n<N>.json     the files that compaction replaces

A batch writes its file of every table under one name, the ``cases`` file last: the
``cases`` file is the batch's done marker. A compaction writes its part of every table,
then its manifest, then its ``cases`` part; from then on the part stands for the files
its manifest names, whether or not they are deleted yet. So a file of a unit table
counts (is "live") when

1. the ``cases`` file of the same name exists, and
2. no compaction in effect (one whose ``cases`` part exists) names it.

A crash at any point leaves every unit either counted once or not at all: a batch
cut short has no ``cases`` file, a compaction cut short has no ``cases`` part.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from critiquebench.pipeline._location import Root, listed_names

UNIT_TABLES = ("cases", "attempts", "calls", "transcripts")
"""The tables a unit adds rows to; ``cases`` marks a batch as written."""

COMPACTIONS = "compactions"
"""``<run>/compactions/``: one manifest per compaction."""

_STAMP = "%Y%m%dT%H%M%S%fZ"
_BATCH_NAME = re.compile(r"^\d{8}T\d{12}Z-.+-n(\d+)\.parquet$")
_PART_NAME = re.compile(r"^\d{8}T\d{12}Z-part-n\d+\.parquet$")


def unit_key(case_id: str, arm: str, rep: int) -> str:
    """A file-name-safe, unique name for the unit (case, arm, rep)."""
    return f"{_safe(case_id)}__{_safe(arm, keep_plain=True)}__r{rep}"


def _safe(text: str, *, keep_plain: bool = False) -> str:
    """``text`` as a file-name part: a slug and a digest (plain names kept as they are)."""
    if keep_plain and re.fullmatch(r"[A-Za-z0-9_-]{1,40}", text):
        return text
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:60]
    return f"{slug}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def utc_stamp(moment: dt.datetime | None = None) -> str:
    """``moment`` (default now) as the store's sortable UTC stamp, e.g. an invocation's."""
    return (moment or dt.datetime.now(dt.UTC)).strftime(_STAMP)


def new_batch_prefix() -> str:
    """A name no other writer picks, for a batch that belongs to no start's numbering."""
    return f"{utc_stamp()}-{secrets.token_hex(4)}"


def batch_prefix(invocation: str, index: int) -> str:
    """The name of batch ``index`` of the start ``invocation``: the same when a cluster
    runs the batch again (its worker died), so the rerun overwrites what it wrote."""
    return f"{invocation}-b{index:05d}"


def batch_file_name(prefix: str, units: int) -> str:
    """The file name, in every table, of a batch of ``units`` units named ``prefix``."""
    return f"{prefix}-n{units}.parquet"


def part_file_name(units: int) -> str:
    """The file name of a new compaction's part holding ``units`` units."""
    return batch_file_name(f"{utc_stamp()}-part", units)


def units_in(name: str) -> int:
    """How many units a ``cases`` file holds, by its name: a batch's count, else one."""
    found = _BATCH_NAME.match(name)
    return int(found.group(1)) if found else 1


def is_batch_file(name: str) -> bool:
    """Whether ``name`` is a batch's or a compaction's file (not one unit's)."""
    return _BATCH_NAME.match(name) is not None


def is_part_file(name: str) -> bool:
    """Whether ``name`` is a compaction's part."""
    return _PART_NAME.match(name) is not None


@dataclass(frozen=True)
class Manifest:
    """A compaction: its part's file name, and the file names the part replaces."""

    part: str
    replaces: frozenset[str]

    def to_json(self) -> str:
        """The manifest's file content."""
        return json.dumps({"part": self.part, "replaces": sorted(self.replaces)})


def manifest_name(part: str) -> str:
    """The manifest's file name of the part ``part``."""
    return part.removesuffix(".parquet") + ".json"


@dataclass(frozen=True)
class RunFiles:
    """What a listing of a run's folders found."""

    live: dict[str, list[Root]]
    """The files that count, per table, sorted by name (see the module docstring)."""
    replaced: dict[str, list[Root]]
    """Files still there that a compaction in effect replaced (to delete), per table."""
    manifests: list[tuple[Root, Manifest]]
    """Every manifest, with whether it is in effect left to ``in_effect``."""
    cases_names: frozenset[str]

    def in_effect(self, manifest: Manifest) -> bool:
        """Whether the compaction's ``cases`` part exists."""
        return manifest.part in self.cases_names


def list_run_files(run_dir: Root, tables: Sequence[str] = UNIT_TABLES) -> RunFiles:
    """List ``tables`` of the run in ``run_dir`` (plus ``cases``, the markers): one
    listing per folder, and a read of each compaction manifest (one per finished start).

    ``runs`` and any table that is not a unit table are listed whole.
    """
    cases_names = frozenset(listed_names(run_dir / "cases", ".parquet"))
    manifests = _manifests(run_dir)
    replaced_names: set[str] = set()
    for _, manifest in manifests:
        if manifest.part in cases_names:
            replaced_names |= manifest.replaces
    live: dict[str, list[Root]] = {}
    replaced: dict[str, list[Root]] = {}
    for table in tables:
        if table == "cases":
            names = sorted(cases_names)
        else:
            names = listed_names(run_dir / table, ".parquet")
        if table not in UNIT_TABLES:
            live[table] = [run_dir / table / name for name in names]
            continue
        live[table] = [
            run_dir / table / name
            for name in names
            if name in cases_names and name not in replaced_names
        ]
        replaced[table] = [run_dir / table / name for name in names if name in replaced_names]
    return RunFiles(live, replaced, manifests, cases_names)


def live_files(run_dir: Root, tables: Sequence[str] = UNIT_TABLES) -> dict[str, list[Root]]:
    """The files of ``tables`` that hold the run's rows (see the module docstring)."""
    return list_run_files(run_dir, tables).live


def _manifests(run_dir: Root) -> list[tuple[Root, Manifest]]:
    folder = run_dir / COMPACTIONS
    found = []
    for name in listed_names(folder, ".json"):
        path = folder / name
        try:
            data = json.loads(path.read_bytes())
        except FileNotFoundError:  # deleted by a compaction since the listing
            continue
        found.append((path, Manifest(str(data["part"]), frozenset(data["replaces"]))))
    return found


def landed_in(names: Iterable[str], prefix: str) -> int:
    """Units in the ``cases`` files named ``names`` whose name starts with ``prefix``."""
    return sum(units_in(name) for name in names if name.startswith(prefix))
