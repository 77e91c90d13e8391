"""The markdown judge (issue 14): a Markdown document's missing sections, broken
relative links and anchors, code blocks that do not parse, and misspellings.

Suite format: docs/suites.md, section "markdown".
"""

from critiquebench.judges.markdown._checks import CHECKS
from critiquebench.judges.markdown._format import MARKDOWN_FORMAT, MarkdownFormat, extract_document
from critiquebench.judges.markdown._judge import MAX_DOCUMENT_CHARS, MarkdownJudge

__all__ = [
    "CHECKS",
    "MARKDOWN_FORMAT",
    "MAX_DOCUMENT_CHARS",
    "MarkdownFormat",
    "MarkdownJudge",
    "extract_document",
]
