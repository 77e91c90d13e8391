"""The markdown judge: counts a document's missing sections, broken links and
anchors, code blocks that do not parse, and misspellings.

It parses and never executes (code blocks are parsed, not run), so it runs in the
judge's own process; its work is bounded by :data:`MAX_DOCUMENT_CHARS` and the
parser's nesting limit.
"""

from __future__ import annotations

import time

from critiquebench.judges._case import Case
from critiquebench.judges._failure import Failure, JudgeResult
from critiquebench.judges.markdown._checks import CHECKS, JudgeData
from critiquebench.judges.markdown._document import read_document
from critiquebench.judges.markdown._format import MARKDOWN_FORMAT
from critiquebench.judges.markdown._spec import case_problems
from critiquebench.judges.markdown._spelling import Speller

MAX_DOCUMENT_CHARS = 60_000
"""A longer document is one ``too_large`` defect and is not read further: it bounds
the parser's work (about a second at this size on hostile input)."""


def _whole(code: str, message: str, actual: str) -> Failure:
    """A defect of the whole document, which the loop always sees (origin "")."""
    return Failure(kind="markdown", code=code, message=message, actual=actual, file="(document)")


class MarkdownJudge:
    """Counts the defects of one Markdown document against a case's check objects.

    Never raises: the document's problems are failures; the judge's own (a check
    that errs, a missing dictionary package) are ``infrastructure_error``.
    """

    artifact_format = MARKDOWN_FORMAT
    case_problems = staticmethod(case_problems)

    def __init__(self) -> None:
        self.speller = Speller()

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        """Judge ``artifact`` with every check of ``case``."""
        started = time.perf_counter()
        total = len(case.checks)
        if len(artifact) > MAX_DOCUMENT_CHARS:
            failure = _whole(
                "too_large",
                f"the document must be at most {MAX_DOCUMENT_CHARS} characters: shorten it",
                f"{len(artifact)} characters",
            )
            return JudgeResult((failure,), total, 0, time.perf_counter() - started)
        try:
            failures = self._judge(case, artifact)
        except Exception as exc:  # the judge's own failure, never the document's defect
            return JudgeResult(
                failures=(),
                checks_total=total,
                checks_passed=0,
                duration_s=time.perf_counter() - started,
                infrastructure_error=f"markdown judge: {type(exc).__name__}: {exc}",
            )
        failed = {(f.source, f.origin) for f in failures if f.origin}
        passed = sum(1 for check in case.checks if (check.source, check.origin) not in failed)
        if any(not f.origin for f in failures):
            passed = 0
        return JudgeResult(tuple(failures), total, passed, time.perf_counter() - started)

    def _judge(self, case: Case, artifact: str) -> list[Failure]:
        failures: list[Failure] = []
        if not artifact.strip():
            failures.append(_whole("empty_document", "write the document", "an empty reply"))
        document = read_document(artifact)
        data = JudgeData.read(dict(case.judge_data))
        for check in case.checks:
            failures.extend(CHECKS[str(check.spec["type"])](check, document, data, self.speller))
        return failures
