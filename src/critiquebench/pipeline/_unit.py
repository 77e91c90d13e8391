"""A unit of work, one (case, arm, rep), and the file-name key of its rows.

Kept apart from ``_units`` (which runs a unit, and so imports the loop and LangGraph)
because the readers name units too: the report links each escalation's record by
its key. Measured gain: ``report`` and ``check`` no longer import LangGraph, 1.4 CPU-s
each (``import langgraph.graph`` alone, 2 cores at load ~18); with the chart bundle
kept (``analysis.render._charts.vega_bundle``) a 328-unit ``report`` went from 6.8 to
4.5 CPU-s (medians of 3 interleaved pairs, load 20-32)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    """One cell of the matrix: a case, in an arm, at a repetition."""

    case_id: str
    arm: str
    """The arm's name (``RunConfig.arm_names``)."""
    rep: int

    @property
    def key(self) -> str:
        """A file-name-safe, unique name for the unit."""
        return f"{_safe(self.case_id)}__{_safe(self.arm, keep_plain=True)}__r{self.rep}"


def _safe(text: str, *, keep_plain: bool = False) -> str:
    """``text`` as a file-name part: a slug and a digest (plain names kept as they are)."""
    if keep_plain and re.fullmatch(r"[A-Za-z0-9_-]{1,40}", text):
        return text
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:60]
    return f"{slug}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
