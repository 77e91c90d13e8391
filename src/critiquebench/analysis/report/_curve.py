"""The iteration curve: what each extra critique round buys, and when to stop."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class IterationCurve:
    """Mean defects after each round of the loop, over units of one arm.

    Index ``r`` is round ``r`` (0 = first draft). A unit that halted before round
    ``r`` counts with its last value, so every round averages the same units.
    ``marginal_gain[0]`` is None (round 0 has no previous round); ``flips[r]``
    counts units with zero defects at ``r - 1`` and some at ``r``; ``active[r]``
    counts units that really ran round ``r``.
    """

    n_units: int
    mean_defects: tuple[float, ...]
    marginal_gain: tuple[float | None, ...]
    flips: tuple[int, ...]
    active: tuple[int, ...]
    threshold_fraction: float
    recommended_max_iters: int


def iteration_curve(
    units: Sequence[Sequence[int]], *, threshold_fraction: float = 0.05
) -> IterationCurve:
    """Build the curve from each unit's defects per iteration (index 0 = first draft).

    ``recommended_max_iters`` is the last round ``r >= 1`` whose gain exceeds
    ``threshold_fraction * mean_defects[0]``, or 0 when no round does.
    """
    if threshold_fraction < 0:
        raise ValueError(f"threshold_fraction must be non-negative, got {threshold_fraction}")
    if not units:
        return IterationCurve(0, (), (), (), (), threshold_fraction, 0)
    return carried_curve(*_carried(units), threshold_fraction=threshold_fraction)


def carried_curve(
    matrix: NDArray[np.float64], lengths: NDArray[np.int64], *, threshold_fraction: float = 0.05
) -> IterationCurve:
    """``iteration_curve`` of the units already in a carried matrix (``carried``)."""
    if (matrix < 0).any():
        raise ValueError("defect counts must be non-negative")
    rounds = matrix.shape[1]

    means = matrix.mean(axis=0)
    gains = means[:-1] - means[1:]
    flips = ((matrix[:, :-1] == 0) & (matrix[:, 1:] > 0)).sum(axis=0)
    active = (lengths[:, None] > np.arange(rounds)[None, :]).sum(axis=0)

    above = np.flatnonzero(gains > threshold_fraction * means[0])
    # gains[i] is round i + 1's gain.
    recommended = int(above[-1]) + 1 if above.size else 0
    return IterationCurve(
        n_units=int(lengths.size),
        mean_defects=tuple(float(m) for m in means),
        marginal_gain=(None, *(float(g) for g in gains)),
        flips=(0, *(int(f) for f in flips)),
        active=tuple(int(a) for a in active),
        threshold_fraction=threshold_fraction,
        recommended_max_iters=recommended,
    )


@dataclass(frozen=True, kw_only=True)
class TokensPoint:
    """After round ``round``: mean tokens spent per unit so far, and the pass rate then."""

    round: int
    mean_tokens: float
    pass_rate: float


def pass_rate_vs_tokens(
    defects: Sequence[Sequence[int]], tokens: Sequence[Sequence[float]]
) -> tuple[TokensPoint, ...]:
    """What each round costs for what it fixes, over units of one arm.

    ``defects[u][r]`` are unit ``u``'s defects after round ``r`` (of the answer kept,
    for a pass rate of what the loop returns) and ``tokens[u][r]`` the tokens it spent
    up to and including round ``r``. A unit that stopped early keeps its last values.
    """
    if [len(unit) for unit in defects] != [len(unit) for unit in tokens]:
        raise ValueError("defects and tokens need one value per unit and round each")
    if not defects:
        return ()
    passed, _ = _carried([[1.0 if d == 0 else 0.0 for d in unit] for unit in defects])
    spent, _ = _carried(tokens)
    return carried_points(passed, spent)


def carried_points(
    passed: NDArray[np.float64], spent: NDArray[np.float64]
) -> tuple[TokensPoint, ...]:
    """``pass_rate_vs_tokens`` of units already in carried matrices (``carried``):
    1.0 where a unit's answer kept passed, and its tokens spent, per round."""
    rates, means = passed.mean(axis=0), spent.mean(axis=0)
    return tuple(
        TokensPoint(round=r, mean_tokens=float(means[r]), pass_rate=float(rates[r]))
        for r in range(rates.size)
    )


@dataclass(frozen=True)
class ArmRounds:
    """One arm's units round by round, as flat arrays rather than a list per unit: a
    report of a 100,000-unit run holds a few numbers per attempt, not objects.

    Units are in order of case, then rep; ``lengths[u]`` is unit ``u``'s attempts, and
    the flat arrays hold every unit's values one unit after the other.
    """

    lengths: NDArray[np.int64]
    latest: NDArray[np.float64]
    """Defects of each attempt."""
    kept: NDArray[np.float64]
    """Defects of the answer kept after each round."""
    tokens: NDArray[np.float64]
    """Tokens spent up to each round."""
    case_sizes: NDArray[np.int64]
    """Units of each case, cases in order."""


def carried(flat: NDArray[np.float64], lengths: NDArray[np.int64]) -> NDArray[np.float64]:
    """The (units, rounds) matrix of flat values (see ``ArmRounds``) where a unit that
    stopped early repeats its last value."""
    if (lengths == 0).any():
        raise ValueError("every unit needs at least its first draft (iteration 0)")
    starts = np.cumsum(lengths) - lengths
    column = np.minimum(np.arange(int(lengths.max()))[None, :], lengths[:, None] - 1)
    matrix: NDArray[np.float64] = flat[starts[:, None] + column]
    return matrix


def _carried(
    units: Sequence[Sequence[float]],
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """A (units, rounds) matrix where a unit that stopped early repeats its last value.

    Built by indexing the flat values: column r of a short unit points at its last value.
    """
    lengths = np.fromiter((len(unit) for unit in units), dtype=np.int64, count=len(units))
    if (lengths == 0).any():
        raise ValueError("every unit needs at least its first draft (iteration 0)")
    flat = np.fromiter(
        (value for unit in units for value in unit), dtype=np.float64, count=int(lengths.sum())
    )
    return carried(flat, lengths), lengths
