"""The SQL of the run report, over the DuckDB views of ``analysis/views/_views.py``.

Every query orders its rows completely, so the same tables give the same report,
byte for byte. Every per-arm query reads ``valid``: the units that did not fail for
infrastructure reasons (``cases.error IS NULL``: a failed unit is excluded from every
statistic, never scored as defects) of the (case, rep) pairs that every arm of the
run measured. An arm's numbers are then over the same cases as every other arm's: a
unit not measured in one arm takes its (case, rep) out of every arm's rows, and
``NOT_COMPARED`` counts, per arm, the measured units that left out.

Defects are the harness's measured defects: failed tests + lint + type findings
(``defects_total_final``; runs before schema v3 measured tests only, so their
``defects_final`` stands in). "Pass" has one meaning: no measured defect of any
kind (``passed``; the views derive it for runs before schema v8). The test-only
rate (every check passes, lint and types not counted: ``tests_passed``, pass@1 as
published results report it) is shown beside, always named "tests pass rate"; the
means per defect group (tests, lint, types, sql, ...; the view ``defects_by_kind``)
too.
"""

from __future__ import annotations

from critiquebench.analysis.views import DEFECTS_BY_KIND_VIEW, TRIGGER_DECISIONS_VIEW

# ``measured``: every unit with a measurement. ``valid``: those of the (case, rep)
# pairs every arm with a measured unit measured, so per-arm rows cover the same cases.
_VALID = """
WITH measured AS (
    SELECT *, coalesce(defects_total_final, defects_final) AS measured_final,
           coalesce(defects_total_initial, defects_initial) AS measured_initial
    FROM cases WHERE run_id = $run_id AND error IS NULL
), compared AS (
    SELECT case_id, rep FROM measured GROUP BY case_id, rep
    HAVING count(DISTINCT arm) = (SELECT count(DISTINCT arm) FROM measured)
), valid AS (
    SELECT m.* FROM measured m SEMI JOIN compared c USING (case_id, rep)
)
"""

# The newest start of the run holds its settings; the first start says when it began.
# Timestamps are formatted in UTC here, so the session's time zone cannot leak in.
META = """
SELECT suite, model, arms, reps, retry_limit, feedback, case_limit, token_budget,
       verifier_policy, status, count(*) OVER () AS invocations, units_planned,
       (SELECT count(*) FROM cases WHERE run_id = $run_id) AS units_landed,
       strftime(timezone('UTC', min(invocation_started_at) OVER ()), '%Y-%m-%d %H:%M:%S UTC'),
       strftime(timezone('UTC', finished_at), '%Y-%m-%d %H:%M:%S UTC'), sandbox
FROM runs WHERE run_id = $run_id
ORDER BY invocation_started_at DESC, finished_at DESC NULLS FIRST
LIMIT 1
"""

PER_ARM = (
    _VALID
    + """
SELECT
    arm,
    count(*) AS n,
    count(DISTINCT case_id) AS n_cases,
    avg(measured_initial) AS mean_defects_initial,
    avg(measured_final) AS mean_defects,
    avg(CASE WHEN passed THEN 1.0 ELSE 0.0 END) AS pass_rate,
    avg(CASE WHEN tests_passed THEN 1.0 ELSE 0.0 END) AS tests_pass_rate,
    quantile_cont(latency_s, 0.5) AS p50_latency_s,
    quantile_cont(latency_s, 0.9) AS p90_latency_s,
    avg(tokens_in) AS mean_tokens_in,
    avg(tokens_out) AS mean_tokens_out,
    avg(calls) AS mean_calls,
    avg(loops) AS mean_loops,
    count(*) FILTER (WHERE escalated) AS escalated,
    count(*) FILTER (WHERE passed) AS units_passed,
    -- stopped because what the loop is shown was clean, yet the answer kept has a
    -- measured defect (a held-out check, say): why such halts and the pass rate differ
    count(*) FILTER (WHERE halt_reason IN ('visible_clean', 'critic_ok') AND NOT passed)
        AS green_but_failed,
    sum(verifier_errors) AS verifier_errors,
    sum(findings_killed) AS findings_killed,
    -- the per-kind bound (judges.counted) lowered the first draft's or the answer
    -- kept's count; NULL raw counts (schema < 6) were never bounded
    count(*) FILTER (WHERE defects_total_initial_raw > defects_total_initial
                        OR defects_total_final_raw > defects_total_final) AS units_bounded
FROM valid GROUP BY arm ORDER BY arm
"""
)

# Per arm, its measured units left out of ``valid``: another arm did not measure
# their (case, rep). Only arms with such units have a row.
NOT_COMPARED = (
    _VALID
    + """
SELECT arm, count(*) FROM measured m ANTI JOIN compared c USING (case_id, rep)
GROUP BY arm ORDER BY arm
"""
)

# Per arm, the mean defects of each group present in the run, over every valid unit
# (a unit without a row for a group has none of it): first drafts and answers kept.
# The views' queries are inlined, so the report needs only the four tables.
DEFECT_GROUPS = (
    _VALID
    + f"""
, defects_by_kind AS ({DEFECTS_BY_KIND_VIEW}), rows AS (
    SELECT k.* FROM defects_by_kind k JOIN valid v USING (run_id, arm, case_id, rep)
), groups AS (SELECT DISTINCT defect_group FROM rows)
SELECT v.arm, g.defect_group, avg(coalesce(r.defects_initial, 0)),
       avg(coalesce(r.defects_final, 0))
FROM valid v CROSS JOIN groups g
LEFT JOIN rows r ON r.arm = v.arm AND r.case_id = v.case_id AND r.rep = v.rep
    AND r.defect_group = g.defect_group
GROUP BY v.arm, g.defect_group ORDER BY v.arm, g.defect_group
"""
)

TRIGGERS = (
    _VALID
    + f"""
, trigger_decisions AS ({TRIGGER_DECISIONS_VIEW})
SELECT t.skill, t.arm, t.expect, t.decision_initial, t.decision_final
FROM trigger_decisions t JOIN valid v USING (run_id, arm, case_id, rep)
ORDER BY t.skill, t.arm, t.case_id, t.rep
"""
)

HALTS = (
    _VALID
    + """
SELECT arm, halt_reason, count(*) AS units FROM valid
GROUP BY arm, halt_reason ORDER BY arm, units DESC, halt_reason
"""
)

# Per arm and case, the reps' outcomes in rep order: the input of the cluster bootstrap.
DEFECTS_BY_CASE = (
    _VALID
    + """
SELECT arm, case_id, list(measured_final ORDER BY rep) FROM valid
GROUP BY arm, case_id ORDER BY arm, case_id
"""
)

# Pairs are the same case and rep in arm A and arm X, grouped by case: a case's reps
# move together when cases are resampled. A pair needs both units valid.
PAIRS_BY_CASE = (
    _VALID
    + """
SELECT x.arm, case_id,
       list(a.measured_final ORDER BY rep), list(x.measured_final ORDER BY rep),
       list(a.passed ORDER BY rep), list(x.passed ORDER BY rep)
FROM valid a JOIN valid x USING (case_id, rep)
WHERE a.arm = 'A' AND x.arm <> 'A'
GROUP BY x.arm, case_id ORDER BY x.arm, case_id
"""
)

# The experiment's tokens: a cache hit is priced at what the call cost when first made.
CALLS = (
    _VALID
    + """
SELECT c.arm, c.model, c.experiment_tokens_in, c.experiment_tokens_out, c.cached
FROM calls c JOIN valid v USING (arm, case_id, rep)
WHERE c.run_id = $run_id
ORDER BY c.arm, c.case_id, c.rep, c.call_index
"""
)

# One row per unit: defects of each attempt, of the answer kept after each round, and
# the tokens spent up to each round. The kept answer is chosen as the loop chooses it
# (loop/_routing.py best_attempt): fewest visible defects, the latest on ties, so the
# key is visible defects first and minus the iteration second.
ROUNDS = (
    _VALID
    + """
, spent AS (
    SELECT arm, case_id, rep, iteration,
           sum(experiment_tokens_in + experiment_tokens_out) AS tokens
    FROM calls WHERE run_id = $run_id GROUP BY arm, case_id, rep, iteration
), steps AS (
    SELECT a.arm, a.case_id, a.rep, a.iteration, coalesce(a.defects_total, a.defects) AS defects,
           arg_min(coalesce(a.defects_total, a.defects),
                   a.defects_feedback::BIGINT * 1000000 - a.iteration) OVER unit
               AS kept,
           sum(coalesce(s.tokens, 0)) OVER unit AS tokens
    FROM attempts a
    JOIN valid v USING (arm, case_id, rep)
    LEFT JOIN spent s USING (arm, case_id, rep, iteration)
    WHERE a.run_id = $run_id
    WINDOW unit AS (
        PARTITION BY a.arm, a.case_id, a.rep ORDER BY a.iteration
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    )
)
SELECT arm, case_id, rep, list(defects ORDER BY iteration), list(kept ORDER BY iteration),
       list(tokens ORDER BY iteration)
FROM steps GROUP BY arm, case_id, rep ORDER BY arm, case_id, rep
"""
)

ESCALATED = (
    _VALID
    + """
SELECT case_id, arm, rep, halt_reason, measured_final FROM valid
WHERE escalated ORDER BY case_id, arm, rep
"""
)

FAILED = """
SELECT case_id, arm, rep, error FROM cases
WHERE run_id = $run_id AND error IS NOT NULL ORDER BY case_id, arm, rep
"""

# Failure kinds of the answers kept (final attempts) and of the first drafts, per unit,
# then summed: counting every attempt would make an arm look worse for trying more.
# ``not_run`` marks checks skipped after a fatal failure: a consequence, not a kind.
FAILURE_KINDS = (
    _VALID
    + """
, found AS (
    SELECT v.suite, a.arm, a.case_id, a.rep, f.kind,
           a.iteration = 0 AS first_draft, a.iteration = v.final_iteration AS kept
    FROM attempts a
    JOIN valid v USING (arm, case_id, rep),
         unnest(from_json(a.failures, '[{"kind": "VARCHAR"}]')) AS t(f)
    WHERE a.run_id = $run_id AND f.kind NOT IN ('not_run', 'critic')
      AND (a.iteration = 0 OR a.iteration = v.final_iteration)
), per_unit AS (
    SELECT suite, arm, case_id, rep, kind,
           count(*) FILTER (WHERE kept) AS kept_n,
           count(*) FILTER (WHERE first_draft) AS first_n
    FROM found GROUP BY suite, arm, case_id, rep, kind
)
SELECT suite, arm, kind, sum(kept_n) AS n, sum(first_n) AS first_n,
       count(*) FILTER (WHERE kept_n > 0) AS units,
       sum(greatest(first_n - kept_n, 0)) AS fixed
FROM per_unit GROUP BY suite, arm, kind
ORDER BY suite, arm, n DESC, first_n DESC, kind
"""
)

# A regression: an attempt with more defects than the one before it in the same unit.
REGRESSIONS = (
    _VALID
    + """
SELECT case_id, arm, rep, iteration, previous, defects FROM (
    SELECT a.case_id, a.arm, a.rep, a.iteration, coalesce(a.defects_total, a.defects) AS defects,
           lag(coalesce(a.defects_total, a.defects))
               OVER (PARTITION BY a.arm, a.case_id, a.rep ORDER BY a.iteration)
               AS previous
    FROM attempts a JOIN valid v USING (arm, case_id, rep) WHERE a.run_id = $run_id
) WHERE defects > previous ORDER BY case_id, arm, rep, iteration
"""
)

# Units with rows (each once, as ``UNITS`` keys them) and those with an error: when
# every planned unit is there without one, ``UNITS`` is not needed.
LANDED = """
SELECT count(DISTINCT (arm, case_id, rep)), count(*) FILTER (WHERE error IS NOT NULL)
FROM cases WHERE run_id = $run_id
"""

# Every unit with rows, measured or not: the sensitivity analysis fills in the units
# not measured (``_unmeasured.py``) and needs each landed unit's place in the matrix.
UNITS = """
SELECT arm, case_id, rep, error IS NOT NULL AS excluded,
       coalesce(defects_total_final, defects_final, 0), coalesce(passed, false)
FROM cases WHERE run_id = $run_id ORDER BY arm, case_id, rep
"""

# Per case, what a unit not measured scores as a failure (analysis/report/_report_types.py
# FAILURE_RULE): the most defects of any attempt of the case's measured units (first
# drafts and answers kept included), at least its number of checks, at least 1. Only
# measured units count: an excluded unit's attempts were judged by a failing judge.
FAILURE_DEFECTS = (
    _VALID
    + """
, tried AS (
    SELECT a.case_id, max(coalesce(a.defects_total, a.defects)) AS worst
    FROM attempts a JOIN measured v USING (arm, case_id, rep)
    WHERE a.run_id = $run_id GROUP BY a.case_id
), kept AS (
    SELECT case_id, max(greatest(measured_initial, measured_final)) AS worst
    FROM measured GROUP BY case_id
), checks AS (
    SELECT case_id, max(checks_total) AS checks FROM cases
    WHERE run_id = $run_id GROUP BY case_id
)
SELECT c.case_id,
       greatest(1, coalesce(c.checks, 0), coalesce(k.worst, 0), coalesce(t.worst, 0))
FROM checks c LEFT JOIN kept k USING (case_id) LEFT JOIN tried t USING (case_id)
ORDER BY c.case_id
"""
)
