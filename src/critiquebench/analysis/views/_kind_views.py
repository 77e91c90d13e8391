"""SQL views of defects by reporting group, and of the trigger judge's decisions.

``defects_by_kind``: one row per unit (run, arm, case, rep) and defect group
(``critiquebench.judges.DEFECT_GROUPS``: tests, lint, types, sql, json, markdown,
trigger) with the defects of the first draft and of the answer kept, read from the
``defects_<kind>`` columns of the unit's first and final attempts. A unit has a row
for each group its judge reports (python: tests, lint and types; sql: sql; ...; a
judge a package registers: tests) and for any other group it has defects in, so a
zero means "checked, none found", never "not this judge's business".

``trigger_decisions``: one row per unit of the trigger judge, with the skill and
the label from ``cases.judge_data`` and the decision of the first draft and of the
answer kept (``trigger``, ``no_trigger``, or ``''`` when the reply made none).
"""

from __future__ import annotations

from critiquebench.judges import ARTIFACT_KINDS, DEFECT_GROUPS, STATIC_KINDS

DECISIONS = ("trigger", "no_trigger")
"""The trigger judge's artifacts; anything else is no decision (``''``)."""


def _group_count(attempt: str, group: str) -> str:
    """An attempt's defects of one group, 0 where the column is NULL (older runs).

    Tests are every failure that is not another judge's defect, so a run written
    before a kind had its own column still counts its test failures right.
    """
    if group != "tests":
        return f"coalesce({attempt}.defects_{group}, 0)"
    others = " - ".join(f"coalesce({attempt}.defects_{kind}, 0)" for kind in ARTIFACT_KINDS)
    return f"({attempt}.defects - {others})"


def _reported(group: str) -> str:
    """True when the unit's judge reports ``group`` (so its zero is a measurement)."""
    judge = "coalesce(nullif(c.judge, ''), 'python')"
    if group == "tests":
        known = ", ".join(f"'{kind}'" for kind in ARTIFACT_KINDS)
        return f"({judge} = 'python' OR {judge} NOT IN ({known}))"
    if group in STATIC_KINDS:
        return f"{judge} = 'python'"
    return f"{judge} = '{group}'"


# A unit's first draft (f) and the answer it kept (k).
_UNIT_ATTEMPTS = """FROM cases c
    JOIN attempts f ON f.run_id = c.run_id AND f.arm = c.arm AND f.case_id = c.case_id
        AND f.rep = c.rep AND f.iteration = 0
    JOIN attempts k ON k.run_id = c.run_id AND k.arm = c.arm AND k.case_id = c.case_id
        AND k.rep = c.rep AND k.iteration = c.final_iteration"""

_GROUPS = ",\n               ".join(
    f"{{'defect_group': '{group}', 'defects_initial': {_group_count('f', group)}, "
    f"'defects_final': {_group_count('k', group)}, 'reported': {_reported(group)}}}"
    for group in DEFECT_GROUPS
)

DEFECTS_BY_KIND_VIEW = f"""
SELECT u.run_id, u.arm, u.case_id, u.rep, u.judge, g.defect_group,
       g.defects_initial::INTEGER AS defects_initial, g.defects_final::INTEGER AS defects_final
FROM (
    SELECT c.run_id, c.arm, c.case_id, c.rep, coalesce(nullif(c.judge, ''), 'python') AS judge,
           [{_GROUPS}] AS groups
    {_UNIT_ATTEMPTS}
) AS u, unnest(u.groups) AS t(g)
WHERE g.reported OR g.defects_initial > 0 OR g.defects_final > 0
"""
"""One row per unit and defect group (the view ``defects_by_kind``)."""


def _decision(column: str) -> str:
    choices = " ".join(f"WHEN '{d}' THEN '{d}'" for d in DECISIONS)
    # Trimmed of any white space (newlines too: a fenced artifact ends with one).
    text = f"lower(regexp_replace({column}, '^\\s+|\\s+$', '', 'g'))"
    return f"CASE {text} {choices} ELSE '' END"


TRIGGER_DECISIONS_VIEW = f"""
SELECT c.run_id, c.arm, c.case_id, c.rep,
       json_extract_string(c.judge_data, '$.skill') AS skill,
       json_extract_string(c.judge_data, '$.expect') AS expect,
       {_decision("f.artifact")} AS decision_initial,
       {_decision("k.artifact")} AS decision_final
{_UNIT_ATTEMPTS}
WHERE c.judge = 'trigger'
"""
"""One row per unit of the trigger judge (the view ``trigger_decisions``)."""

VIEWS = {"defects_by_kind": DEFECTS_BY_KIND_VIEW, "trigger_decisions": TRIGGER_DECISIONS_VIEW}
"""The views over ``cases`` and ``attempts`` defined here, by name."""
