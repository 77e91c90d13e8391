"""Precision, recall and false-trigger rates of the trigger judge's decisions.

A trigger case asks whether a skill's description should trigger for a query, and
is labelled ``trigger`` (it must), ``near_miss`` (close, but it must not) or
``clear_miss`` (plainly unrelated). Each unit (case x rep) is one decision; a reply
that made no decision (``''``) did not trigger. Per skill and arm:

- precision = triggers on ``trigger`` cases / all triggers; undefined (None) when
  nothing triggered;
- recall = triggers on ``trigger`` cases / ``trigger`` cases; None without such cases;
- near-miss false-trigger rate = triggers on ``near_miss`` cases / ``near_miss``
  cases; None without near misses (likewise for clear misses).

Units whose label is none of the three are left out (the suite's validation
rejects them; an older run could still hold one).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

LABELS = ("trigger", "near_miss", "clear_miss")


@dataclass(frozen=True, kw_only=True)
class TriggerRates:
    """The decisions of one set of answers (first drafts, or answers kept), counted and rated."""

    triggered: int
    """Units whose decision was ``trigger``."""
    true_triggers: int
    """Units labelled ``trigger`` that triggered."""
    near_miss_triggers: int
    clear_miss_triggers: int
    no_decision: int
    """Units whose reply made no decision (counted as not triggering)."""
    precision: float | None
    recall: float | None
    near_miss_false_trigger_rate: float | None
    clear_miss_false_trigger_rate: float | None


@dataclass(frozen=True, kw_only=True)
class TriggerMetrics:
    """One skill description in one arm: its units by label, and the rates of its
    first drafts and of the answers kept (what the loop changed)."""

    skill: str
    arm: str
    units: int
    should_trigger: int
    """Units labelled ``trigger``."""
    near_misses: int
    clear_misses: int
    first_draft: TriggerRates
    kept: TriggerRates


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def trigger_rates(labelled: list[tuple[str, str]]) -> TriggerRates:
    """The rates of ``(expect, decision)`` pairs whose ``expect`` is one of :data:`LABELS`."""

    def triggers(label: str | None) -> int:
        return sum(1 for e, d in labelled if d == "trigger" and (label is None or e == label))

    counts = {label: sum(1 for e, _ in labelled if e == label) for label in LABELS}
    true, near, clear = triggers("trigger"), triggers("near_miss"), triggers("clear_miss")
    return TriggerRates(
        triggered=triggers(None),
        true_triggers=true,
        near_miss_triggers=near,
        clear_miss_triggers=clear,
        no_decision=sum(1 for _, d in labelled if d not in ("trigger", "no_trigger")),
        precision=_ratio(true, triggers(None)),
        recall=_ratio(true, counts["trigger"]),
        near_miss_false_trigger_rate=_ratio(near, counts["near_miss"]),
        clear_miss_false_trigger_rate=_ratio(clear, counts["clear_miss"]),
    )


def trigger_metrics(
    rows: Iterable[tuple[str, str, str, str, str]],
) -> tuple[TriggerMetrics, ...]:
    """Metrics per (skill, arm) from ``(skill, arm, expect, first decision, kept decision)``
    rows (the view ``trigger_decisions``), sorted by skill then arm."""
    grouped: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for skill, arm, expect, first, kept in rows:
        if expect in LABELS:
            grouped.setdefault((skill or "", arm), []).append((expect, first or "", kept or ""))
    result = []
    for (skill, arm), units in sorted(grouped.items()):
        result.append(
            TriggerMetrics(
                skill=skill,
                arm=arm,
                units=len(units),
                should_trigger=sum(1 for e, _, _ in units if e == "trigger"),
                near_misses=sum(1 for e, _, _ in units if e == "near_miss"),
                clear_misses=sum(1 for e, _, _ in units if e == "clear_miss"),
                first_draft=trigger_rates([(e, first) for e, first, _ in units]),
                kept=trigger_rates([(e, kept) for e, _, kept in units]),
            )
        )
    return tuple(result)
