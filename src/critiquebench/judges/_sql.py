"""The old entry-point path of the sql judge (``critiquebench.judges._sql:SqlJudge``),
which installed metadata from before judges/sql/ still names; the judge lives in
:mod:`critiquebench.judges.sql`."""

from critiquebench.judges.sql import SqlJudge

__all__ = ["SqlJudge"]
