"""The json judge (being built: see issue 14)."""

from __future__ import annotations

from critiquebench.judges._artifact import ArtifactFormat
from critiquebench.judges._failure import JudgeResult
from critiquebench.suites import Case


class JsonJudge:
    """Counts the defects of a JSON document."""

    artifact_format = ArtifactFormat(
        fence="json", noun="JSON document", system="Reply with one JSON document."
    )

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        raise NotImplementedError("the json judge is being built")
