"""``lessons.md``: recurring failure kinds, regressions and halts, computed from the tables."""

from __future__ import annotations

import duckdb

_KINDS_SQL = """
SELECT c.suite, a.arm, f.kind, count(*) AS n
FROM attempts a
JOIN cases c USING (run_id, case_id, arm, rep),
     unnest(from_json(a.failures, '[{"kind": "VARCHAR"}]')) AS t(f)
WHERE a.run_id = $run_id
GROUP BY ALL ORDER BY c.suite, a.arm, n DESC, f.kind
"""

# A regression: an attempt with more defects than the one before it in the same unit.
_REGRESSIONS_SQL = """
SELECT case_id, arm, rep, iteration, previous, defects FROM (
    SELECT *, lag(defects) OVER (PARTITION BY case_id, arm, rep ORDER BY iteration) AS previous
    FROM attempts WHERE run_id = $run_id
) WHERE defects > previous ORDER BY case_id, arm, rep, iteration
"""

_HALTS_SQL = """
SELECT arm, halt_reason, count(*) AS n FROM cases WHERE run_id = $run_id
GROUP BY ALL ORDER BY arm, n DESC, halt_reason
"""


def lessons_markdown(connection: duckdb.DuckDBPyConnection, run_id: str, top: int = 5) -> str:
    """The lessons of one run, as Markdown. No model writes any of it."""
    params = {"run_id": run_id}
    lines = [f"# Lessons of run {run_id}", "", "## Most frequent failure kinds", ""]
    seen: dict[tuple[str, str], int] = {}
    for suite, arm, kind, count in connection.execute(_KINDS_SQL, params).fetchall():
        shown = seen.get((suite, arm), 0)
        if shown < top:
            lines.append(f"- {suite}, arm {arm}: {kind} x{count}")
            seen[(suite, arm)] = shown + 1
    if not seen:
        lines.append("- no failures recorded")
    lines += ["", "## Cases that regressed between rounds", ""]
    regressions = connection.execute(_REGRESSIONS_SQL, params).fetchall()
    for case_id, arm, rep, iteration, previous, defects in regressions:
        lines.append(
            f"- {case_id} (arm {arm}, rep {rep}): round {iteration} went {previous} -> {defects}"
        )
    if not regressions:
        lines.append("- none: no round made a unit worse")
    lines += ["", "## Halt reasons", ""]
    for arm, reason, count in connection.execute(_HALTS_SQL, params).fetchall():
        lines.append(f"- arm {arm}: {reason} x{count}")
    return "\n".join(lines) + "\n"
