"""The sql judge: a DuckDB query run on each check's fixture in the sandbox (``_run``,
``_harness``), its rows compared in the parent (``_compare``); ``_spec`` reads a case.

Suite format: docs/suites.md, section "sql".
"""

from critiquebench.judges.sql._judge import SQL_FORMAT, SqlFormat, SqlJudge

__all__ = ["SQL_FORMAT", "SqlFormat", "SqlJudge"]
