"""The trigger judge (being built: see issue 14)."""

from __future__ import annotations

from critiquebench.judges._artifact import ArtifactFormat
from critiquebench.judges._failure import JudgeResult
from critiquebench.suites import Case


class TriggerJudge:
    """Counts the defects of a decision."""

    artifact_format = ArtifactFormat(
        fence="trigger", noun="decision", system="Reply with one decision."
    )

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        raise NotImplementedError("the trigger judge is being built")
