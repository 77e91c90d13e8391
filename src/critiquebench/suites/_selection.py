"""Choosing a suite's cases for a run: by id pattern, by tag, a seeded sample, a list."""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from critiquebench.judges import Case


class SelectionError(ValueError):
    """A selection that picks nothing or asks for what is not there; says which option."""


@dataclass(frozen=True)
class CaseSelection:
    """Which cases of a suite a run uses; every part empty/None keeps them all.

    Applied in this order: id patterns, tags, the named ids (an earlier run's failed
    cases), the seeded sample, then the limit (the first N of what is left).
    """

    patterns: tuple[str, ...] = ()
    """Glob patterns (``fnmatch``) of case ids; a case matching any one is kept."""
    tags: tuple[str, ...] = ()
    """A case carrying any one of these tags is kept."""
    ids: frozenset[str] | None = None
    """Only these case ids (None: no such restriction)."""
    ids_source: str = ""
    """Where ``ids`` came from, for messages (e.g. ``--only-failed RUN``)."""
    sample: int | None = None
    """Keep this many cases, drawn without replacement with ``seed``."""
    seed: int = 0
    limit: int | None = None

    @property
    def chooses(self) -> bool:
        """True when anything beyond a limit is asked for."""
        return bool(self.patterns or self.tags or self.ids is not None or self.sample)


def _known(values: Collection[str], limit: int = 8) -> str:
    shown = sorted(values)[:limit]
    return ", ".join(shown) + (" ..." if len(values) > limit else "")


def select_cases(cases: Sequence[Case], selection: CaseSelection) -> list[Case]:
    """The cases of ``cases`` that ``selection`` keeps, in suite order.

    Raises :class:`SelectionError` for a pattern or tag that matches no case (a typo
    would otherwise silently shrink the run), an empty result, or a sample larger
    than what is left.
    """
    chosen = list(cases)
    if selection.patterns:
        for pattern in selection.patterns:
            if not any(fnmatch.fnmatchcase(case.id, pattern) for case in cases):
                raise SelectionError(
                    f"--case {pattern}: no case id matches it; ids look like "
                    f"{_known([case.id for case in cases], 3)}"
                )
        chosen = [
            c for c in chosen if any(fnmatch.fnmatchcase(c.id, p) for p in selection.patterns)
        ]
    if selection.tags:
        known = {tag for case in cases for tag in case.tags}
        for tag in selection.tags:
            if tag not in known:
                raise SelectionError(
                    f"--tag {tag}: no case has it; the suite's tags: {_known(known)}"
                )
        wanted = set(selection.tags)
        chosen = [case for case in chosen if wanted & set(case.tags)]
    if selection.ids is not None:
        chosen = [case for case in chosen if case.id in selection.ids]
    if not chosen:
        source = f" and {selection.ids_source}" if selection.ids_source else ""
        raise SelectionError(f"no case is left after --case/--tag{source}")
    if selection.sample is not None:
        if selection.sample > len(chosen):
            raise SelectionError(
                f"--sample {selection.sample}: only {len(chosen)} case(s) are selected"
            )
        # A Random of its own: the same seed picks the same cases on every machine.
        keep = set(random.Random(selection.seed).sample(range(len(chosen)), selection.sample))
        chosen = [case for index, case in enumerate(chosen) if index in keep]
    if selection.limit is not None:
        chosen = chosen[: selection.limit]
    return chosen
