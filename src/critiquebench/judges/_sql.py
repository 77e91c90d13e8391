"""The sql judge (being built: see issue 14)."""

from __future__ import annotations

from critiquebench.judges._artifact import ArtifactFormat
from critiquebench.judges._failure import JudgeResult
from critiquebench.suites import Case


class SqlJudge:
    """Counts the defects of a query."""

    artifact_format = ArtifactFormat(fence="sql", noun="query", system="Reply with one query.")

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        raise NotImplementedError("the sql judge is being built")
