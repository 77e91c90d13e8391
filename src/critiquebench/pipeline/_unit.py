"""A unit of work, one (case, arm, rep), and the file-name key of its rows.

Kept apart from ``_units`` (which runs a unit, and so imports the loop and LangGraph)
because the readers name units too: the report links each escalation's record by
its key. Measured gain: ``report`` and ``check`` no longer import LangGraph, 1.4 CPU-s
each (``import langgraph.graph`` alone, 2 cores at load ~18); with the chart bundle
kept (``analysis.render._charts.vega_bundle``) a 328-unit ``report`` went from 6.8 to
4.5 CPU-s (medians of 3 interleaved pairs, load 20-32)."""

from __future__ import annotations

from dataclasses import dataclass

from critiquebench.pipeline._layout import unit_key


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
        return unit_key(self.case_id, self.arm, self.rep)
