"""Finding runs under an output folder: by id, unique id prefix or ``latest``; each
run's summary; and whether the process of a run marked ``running`` is still alive.

Run folders are found by name and their ``runs/<invocation>.parquet`` file names (UTC
timestamps), so resolving a run id reads no Parquet at all.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from critiquebench.pipeline._layout import live_files, units_in
from critiquebench.pipeline._location import Root, parquet_files, read_parquet

LATEST = "latest"
"""The run id that means the run started most recently."""

OWNER_FOLDER = "process"
"""``<run>/process/<invocation>.json``: the process that runs that start of the run."""

DIED = "died"
"""Status shown for a start recorded ``running`` whose process is gone."""


class UnknownRunError(ValueError):
    """A run id that names no run, or a prefix that names several."""


def _starts(run_dir: Root) -> list[str]:
    """Invocation stamps of a run's starts (``runs/<stamp>.parquet``), oldest first."""
    return [path.stem for path in parquet_files(run_dir / "runs")]


def run_ids(root: Root) -> list[str]:
    """Ids of every run under ``root`` (a folder with at least one runs row), sorted."""
    if not root.is_dir():
        return []
    return sorted(path.name for path in root.iterdir() if path.is_dir() and _starts(path))


def _refusal(root: Root, ref: str, option: str, why: str) -> UnknownRunError:
    label = f"{option} {ref}" if option else f"run {ref!r}"
    return UnknownRunError(
        f"{label}: {why}; `critiquebench list --output {root}` lists the runs there "
        "(give --output to look in another folder)"
    )


def resolve_run(root: Root, ref: str, option: str = "") -> str:
    """The id of the run ``ref`` names under ``root``: itself, ``latest`` (the run whose
    last start began most recently), or the one run whose id starts with it.

    Raises ``UnknownRunError`` naming ``ref`` (and ``option``, the flag that took it)
    and how to list the runs, when no run or several match.
    """
    ids = run_ids(root)
    if ref in ids or _plain_folder(root, ref):
        return ref
    if ref == LATEST:
        if not ids:
            raise _refusal(root, ref, option, f"there is no run under {root}")
        return max(ids, key=lambda run: (_starts(root / run)[-1], run))
    matches = [run for run in ids if ref and run.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
        why = f"{len(matches)} runs under {root} start with it ({shown}): give more of the id"
        raise _refusal(root, ref, option, why)
    raise _refusal(root, ref, option, f"no such run under {root}")


def _plain_folder(root: Root, ref: str) -> bool:
    """A folder of that exact name (a run whose runs rows are missing is still read)."""
    return (
        bool(ref)
        and ref != LATEST
        and not ref.startswith(".")
        and "/" not in ref
        and (root / ref).is_dir()
    )


def resolve_runs(root: Root, refs: list[str], option: str = "") -> list[str]:
    """``resolve_run`` of each of ``refs``."""
    return [resolve_run(root, ref, option) for ref in refs]


@dataclass(frozen=True)
class RunOwner:
    """The process running a start of a run: enough to tell later whether it is gone."""

    pid: int
    host: str
    started: str
    """The process's start time in clock ticks since boot (``/proc/PID/stat``), or ""
    where there is no ``/proc``: with it, a reused pid is not taken for the owner."""

    @classmethod
    def of_this_process(cls) -> RunOwner:
        """The owner record of the calling process."""
        return cls(os.getpid(), socket.gethostname(), _process_start(os.getpid()))

    def alive(self) -> bool | None:
        """True/False whether the owner still runs; None when it cannot be told here
        (another host)."""
        if self.host != socket.gethostname():
            return None
        if self.started:
            return _process_start(self.pid) == self.started
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # someone else's process holds the pid: it is alive
            return True
        return True


def _process_start(pid: int) -> str:
    """Field 22 of ``/proc/PID/stat`` (start time in ticks); "" without one."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""
    # The command name (field 2) may hold spaces and parentheses: split after its end.
    fields = text[text.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else ""


def owner_path(run_dir: Root, invocation: str) -> Root:
    """Where the owner of start ``invocation`` of the run in ``run_dir`` is recorded."""
    return run_dir / OWNER_FOLDER / f"{invocation}.json"


def owner_json(owner: RunOwner) -> str:
    """The owner record's text."""
    return json.dumps({"pid": owner.pid, "host": owner.host, "started": owner.started}) + "\n"


def read_owner(run_dir: Root, invocation: str) -> RunOwner | None:
    """The recorded owner of a start; None for a start recorded before owners were."""
    try:
        data: Any = json.loads(owner_path(run_dir, invocation).read_text(encoding="utf-8"))
        return RunOwner(int(data["pid"]), str(data["host"]), str(data["started"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def shown_status(run_dir: Root, invocation: str, status: str) -> str:
    """The status to show for a start: ``died`` for one recorded ``running`` whose
    recorded process has ended (killed, crashed, machine restarted)."""
    if status != "running":
        return status
    owner = read_owner(run_dir, invocation)
    return DIED if owner is not None and owner.alive() is False else status


@dataclass(frozen=True)
class RunSummary:
    """One line of ``critiquebench list``: a run as its last start recorded it."""

    run_id: str
    started_at: Any
    """When the run's first start began (a UTC datetime)."""
    status: str
    """The last start's status; ``died`` when it says running and its process is gone."""
    suite: str
    model: str
    arms: str
    units_planned: int
    units_landed: int
    """Units with a cases row (finished, or recorded with an infrastructure error)."""
    starts: int


def summarize_run(root: Root, run_id: str) -> RunSummary:
    """The summary of run ``run_id`` under ``root`` (its first and last runs rows)."""
    run_dir = root / run_id
    starts = _starts(run_dir)
    first = read_parquet(run_dir / "runs" / f"{starts[0]}.parquet").to_pylist()[0]
    last = read_parquet(run_dir / "runs" / f"{starts[-1]}.parquet").to_pylist()[0]
    return RunSummary(
        run_id=run_id,
        started_at=first["invocation_started_at"],
        status=shown_status(run_dir, starts[-1], str(last["status"])),
        suite=str(last.get("suite")),
        model=str(last.get("model")),
        arms=str(last.get("arms")),
        units_planned=int(last.get("units_planned") or 0),
        # Counted from the file names: a batch's name carries its units.
        units_landed=sum(units_in(path.name) for path in live_files(run_dir, ("cases",))["cases"]),
        starts=len(starts),
    )
