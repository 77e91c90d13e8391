"""Whether a run's design can decide: the power calculation (``critiquebench power``)
for the run's cases, reps and fix rounds, said before it starts and with its verdict."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from critiquebench.suites import Case

DECIDING_POWER = 0.8
"""A design decides when a true effect above the target is called met this often."""
MARGIN = 0.1
"""The true reduction assumed: this far above the target (capped at 0.99)."""
_EXPERIMENTS = 100
_RESAMPLES = 200  # the check needs a share to within a few points, not a CI to 0.1%


@dataclass(frozen=True)
class DesignNote:
    """A design that is unlikely to decide, in words."""

    n_cases: int
    reps: int
    effect: float
    target: float
    met_share: float

    def line(self) -> str:
        """One line: the chance, and how to check or change it."""
        return (
            f"design: {self.n_cases} case(s) x {self.reps} rep(s) would call a true "
            f"{self.effect:.0%} reduction 'met' against the {self.target:.0%} target only "
            f"{self.met_share:.0%} of the time (simulated; `critiquebench power --effect "
            f"{self.effect:.2f} --target {self.target:g} --reps {self.reps}` finds the cases "
            "needed): the verdict is likely inconclusive"
        )


def compared_cases(cases: Iterable[Case]) -> int:
    """The distinct cases whose units the verdict compares: canaries are in no verdict
    (they give the cheating rate alone), so they add nothing to the design's power."""
    from critiquebench.suites import CANARY_PREFIX

    return len({case.id for case in cases if not case.id.startswith(CANARY_PREFIX)})


def design_note(n_cases: int, reps: int, retry_limit: int, target: float) -> DesignNote | None:
    """The note for a design whose chance of deciding is below ``DECIDING_POWER``; None
    when it is likely to decide (under the ``sim:`` model's default case spread)."""
    from critiquebench.analysis import estimate_power, params_for_effect

    effect = min(target + MARGIN, 0.99)
    result = estimate_power(
        params_for_effect(effect, retry_limit), target=target, n_cases=n_cases, reps=reps,
        retry_limit=retry_limit, experiments=_EXPERIMENTS, resamples=_RESAMPLES,
    )  # fmt: skip
    if result.met >= DECIDING_POWER:
        return None
    return DesignNote(n_cases, reps, effect, target, result.met)
