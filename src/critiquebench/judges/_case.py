"""The unit a judge judges and a suite holds: one task with its feedback and held-out checks.

It lives with the judges because the :class:`~critiquebench.judges.Judge` interface is
defined on it; ``critiquebench.suites`` reads suite files into it and offers it too.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CheckOrigin = Literal["feedback", "heldout"]


class Check(BaseModel):
    """One check, judged on its own.

    For the Python judge, ``source`` is a single Python statement (usually an
    ``assert``) that may call the function under test by its name or as
    ``candidate``. Other judges read their parameters from ``spec`` and use
    ``source`` as the check's name in findings.
    """

    model_config = ConfigDict(frozen=True)

    source: str = Field(
        description="Python judge: one statement, usually an assert. Others: the check's name."
    )
    origin: CheckOrigin = Field(
        description="feedback: visible to the loop; heldout: measured only."
    )
    line: int = Field(default=0, description="Line in the original test text (0 if unknown).")
    spec: dict[str, Any] = Field(
        default_factory=dict,
        description="The check's parameters for judges other than Python (see docs/suites.md).",
    )


class Case(BaseModel):
    """A task given to the loop and the checks that judge its answer."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Unique id within the suite, e.g. 'basic/001_add_two'.")
    prompt: str = Field(description="What the model is asked to write.")
    entry_point: str = Field(
        default="", description="Python judge: name of the function the checks call."
    )
    setup: str = Field(default="", description="Test-side code run before the checks.")
    checks: tuple[Check, ...] = Field(description="Feedback and held-out checks, in order.")
    reference_solution: str = Field(default="", description="A known-good answer, if any.")
    tags: tuple[str, ...] = Field(default=(), description="Free-form labels.")
    judge: str = Field(
        default="python",
        description="Name of the registered judge (entry-point group critiquebench.judges).",
    )
    judge_data: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "What the judge reads besides the checks (a database fixture, a JSON Schema, "
            "a skill description); never shown to the loop, which sees only the prompt."
        ),
    )
    prompt_is_code: bool = Field(
        default=False,
        description="True when the prompt is a code stub to complete (HumanEval style).",
    )

    def checks_from(self, origins: frozenset[CheckOrigin]) -> tuple[Check, ...]:
        """The checks whose origin is in ``origins``, in suite order."""
        return tuple(check for check in self.checks if check.origin in origins)
