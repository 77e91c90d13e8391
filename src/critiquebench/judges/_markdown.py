"""The markdown judge (being built: see issue 14)."""

from __future__ import annotations

from critiquebench.judges._artifact import ArtifactFormat
from critiquebench.judges._failure import JudgeResult
from critiquebench.suites import Case


class MarkdownJudge:
    """Counts the defects of a document."""

    artifact_format = ArtifactFormat(
        fence="markdown", noun="document", system="Reply with one document."
    )

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        raise NotImplementedError("the markdown judge is being built")
