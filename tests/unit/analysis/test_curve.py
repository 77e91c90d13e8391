from __future__ import annotations

import pytest

from critiquebench.analysis.report._curve import iteration_curve, pass_rate_vs_tokens

# Defects per iteration of four units. Carried forward to 4 rounds they are
#   u0: 3 1 0 0    u1: 2 2 2 2    u2: 0 1 0 0    u3: 1 1 1 1
UNITS = [[3, 1, 0], [2, 2], [0, 1, 0, 0], [1]]


def test_hand_built_curve() -> None:
    curve = iteration_curve(UNITS)
    assert curve.n_units == 4
    assert curve.mean_defects == pytest.approx((1.5, 1.25, 0.75, 0.75))
    assert curve.marginal_gain[0] is None
    assert curve.marginal_gain[1:] == pytest.approx((0.25, 0.5, 0.0))
    # u2 goes from 0 to 1 defect in round 1; u0 and u2 stay at 0 afterwards.
    assert curve.flips == (0, 1, 0, 0)
    assert curve.active == (4, 3, 2, 1)
    # Threshold 0.05 * 1.5 = 0.075: rounds 1 and 2 pay, round 3 does not.
    assert curve.recommended_max_iters == 2


@pytest.mark.parametrize(("fraction", "expected"), [(0.2, 2), (0.4, 0)])
def test_threshold_moves_the_recommendation(fraction: float, expected: int) -> None:
    assert iteration_curve(UNITS, threshold_fraction=fraction).recommended_max_iters == expected


@pytest.mark.parametrize(("fraction", "expected"), [(0.05, 3), (0.5, 1)])
def test_recommendation_is_the_last_round_above_threshold(fraction: float, expected: int) -> None:
    # Gains 3, 0, 1 against a first draft of 4 defects: a flat round 2 does not
    # hide round 3's gain at a low threshold.
    curve = iteration_curve([[4, 1, 1, 0]], threshold_fraction=fraction)
    assert curve.recommended_max_iters == expected


def test_no_defects_at_all_recommends_zero() -> None:
    curve = iteration_curve([[0, 0], [0]])
    assert curve.mean_defects == (0.0, 0.0)
    assert curve.recommended_max_iters == 0


def test_single_round_units() -> None:
    curve = iteration_curve([[2], [0]])
    assert (curve.mean_defects, curve.marginal_gain, curve.flips) == ((1.0,), (None,), (0,))
    assert curve.recommended_max_iters == 0


def test_no_units_gives_an_empty_curve() -> None:
    curve = iteration_curve([])
    assert (curve.n_units, curve.mean_defects, curve.recommended_max_iters) == (0, (), 0)


@pytest.mark.parametrize("units", [[[1], []], [[1, -1]]])
def test_bad_units_are_rejected(units: list[list[int]]) -> None:
    with pytest.raises(ValueError):
        iteration_curve(units)


def test_pass_rate_against_tokens_carries_stopped_units_forward() -> None:
    # Pass = zero defects. Tokens spent up to each round, carried forward like defects:
    #   u0: 100 150 200 200    u1: 80 80 80 80    u2: 90 130 170 210    u3: 50 50 50 50
    tokens = [[100, 150, 200], [80, 80], [90, 130, 170, 210], [50]]
    points = pass_rate_vs_tokens(UNITS, tokens)
    assert [p.round for p in points] == [0, 1, 2, 3]
    assert [p.mean_tokens for p in points] == pytest.approx([80.0, 102.5, 125.0, 135.0])
    assert [p.pass_rate for p in points] == pytest.approx([0.25, 0.0, 0.5, 0.5])


def test_pass_rate_against_tokens_needs_matching_shapes() -> None:
    assert pass_rate_vs_tokens([], []) == ()
    with pytest.raises(ValueError, match="one value per unit and round"):
        pass_rate_vs_tokens([[1, 0]], [[10]])


def test_rounds_as_flat_arrays_give_the_curves_of_the_rows_one_by_one() -> None:
    import random

    import duckdb

    from critiquebench.analysis.report import _report_rows as parts
    from critiquebench.analysis.report._cost_curve import cost_curve
    from critiquebench.analysis.report._report_types import ArmCurves

    rng = random.Random(3)
    rows = [
        (arm, case, rep, [rng.randint(0, 4) for _ in range(n)],
         [rng.randint(0, 4) for _ in range(n)], [rng.randint(0, 10**12) for _ in range(n)])
        for arm in ("A", "B", "R")
        for case in ("c1", "c10", "c2", "ä")
        for rep in range(rng.randint(1, 3))
        for n in [rng.randint(1, 4)]
    ]  # fmt: skip
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE r (arm VARCHAR, case_id VARCHAR, rep INTEGER, latest INTEGER[], "
        "kept INTEGER[], spent BIGINT[])"
    )
    connection.executemany("INSERT INTO r VALUES (?, ?, ?, ?, ?, ?)", rows)
    # The tokens as the report's query gives them: a sum, which DuckDB makes a HUGEINT.
    data = connection.sql(
        "SELECT arm, case_id, rep, latest, kept, "
        "list_transform(spent, lambda x: x::HUGEINT) FROM r ORDER BY arm, case_id, rep"
    ).to_arrow_table()
    rounds = parts.arm_rounds(data)
    assert sorted(rounds) == ["A", "B", "R"]
    for arm, found in parts.curves(rounds).items():
        mine = [row for row in rows if row[0] == arm]
        kept = [row[4] for row in mine]
        assert found == ArmCurves(
            kept=iteration_curve(kept),
            latest=iteration_curve([row[3] for row in mine]),
            pass_vs_tokens=pass_rate_vs_tokens(kept, [[float(t) for t in row[5]] for row in mine]),
        )
        sizes = [sum(1 for row in mine if row[1] == case) for case in ("c1", "c10", "c2", "ä")]
        assert rounds[arm].case_sizes.tolist() == [size for size in sizes if size]
    points = cost_curve(rounds, resamples=200, seed=0, confidence=0.95)
    assert [(p.arm, p.round) for p in points][:2] == [("A", 0), ("A", 1)]
    assert parts.arm_rounds(data.slice(0, 0)) == {}
