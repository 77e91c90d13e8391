"""The old entry-point path of the markdown judge
(``critiquebench.judges._markdown:MarkdownJudge``), which installed metadata from before
judges/markdown/ still names; the judge lives in :mod:`critiquebench.judges.markdown`."""

from critiquebench.judges.markdown import MarkdownJudge

__all__ = ["MarkdownJudge"]
