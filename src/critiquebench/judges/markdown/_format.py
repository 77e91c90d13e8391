"""The markdown judge's artifact: one Markdown document, asked for in a
```markdown block and read back whole even when it holds fenced blocks itself."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from critiquebench.judges._artifact import MAX_REPLY_CHARS, ArtifactFormat, strip_invisible
from critiquebench.judges.markdown._code import PARSERS, canonical

if TYPE_CHECKING:
    from critiquebench.judges._case import Case

_WRAPPERS = ("markdown", "md")


def _fence(line: str) -> tuple[str, str] | None:
    """(fence, info) when ``line`` is a fence line, else None.

    A fence line is up to three spaces, a run of three or more backticks or tildes,
    then an info string without backticks; the info's first word is returned in lower
    case. Read with plain string operations, linear in the line: a regular expression
    for this backtracks over a long line of spaces or tildes (a 60,000-character line
    took 52 s).
    """
    indent = len(line) - len(line.lstrip(" "))
    if indent > 3 or len(line) < indent + 3:
        return None
    marker_char = line[indent]
    if marker_char not in "`~":
        return None
    rest = line[indent:].lstrip(marker_char)
    marker = line[indent : len(line) - len(rest)]
    if len(marker) < 3 or "`" in rest or "\n" in rest:
        return None
    words = rest.lstrip(" \t").split(maxsplit=1)
    return marker, (words[0].lower() if words and not rest.lstrip(" \t")[:1].isspace() else "")


def _closing(lines: list[str], start: int, opening: str) -> int:
    """The index of the line closing the block opened at ``start - 1``; ``len(lines)``
    when it never closes.

    A fence longer than three characters closes as CommonMark says (a line of at least
    as many of its characters). A ```` ``` ```` fence is what models write even around
    a document that holds ```` ```python ```` blocks, so there an inner fence with a
    language opens a nested block, and a bare fence closes the innermost open one.
    """
    depth = 0
    for index in range(start, len(lines)):
        fence = _fence(lines[index])
        if fence is None or fence[0][0] != opening[0]:
            continue
        marker, info = fence
        if len(opening) > 3:
            if not info and len(marker) >= len(opening):
                return index
        elif info:
            depth += 1
        elif depth:
            depth -= 1
        else:
            return index
    return len(lines)


def extract_document(reply: str) -> str:
    """The document in a reply: the first ```markdown (or ```md) block, read whole
    with its nested blocks; else the body of a reply that is one bare fenced block
    (closed on its last line, or never: small models often stop before closing it);
    else the whole reply."""
    text = strip_invisible(reply[:MAX_REPLY_CHARS].strip("\n"))
    lines = text.split("\n")
    for index, line in enumerate(lines):
        fence = _fence(line)
        if fence is not None and fence[1] in _WRAPPERS:
            end = _closing(lines, index + 1, fence[0])
            return "\n".join(lines[index + 1 : end]).strip("\n") + "\n"
    first = _fence(lines[0])
    if first is not None and not first[1]:
        end = _closing(lines, 1, first[0])
        if end >= len(lines) - 1:
            return "\n".join(lines[1:end]).strip("\n") + "\n"
    return text.strip("\n") + "\n"


def _break(reference: str) -> str:
    """A wrong answer made from the reference: every heading's first long word gets a
    typo (a missing section and a misspelling), every relative link's target a wrong
    extension, and every checked code block an unclosed bracket."""
    out: list[str] = []
    opened: tuple[str, str] | None = None
    for line in reference.split("\n"):
        fence = _fence(line)
        if opened is None and fence is not None:
            opened = fence
        elif opened is not None:
            marker = fence[0] if fence is not None and not fence[1] else ""
            if marker[:1] == opened[0][0] and len(marker) >= len(opened[0]):
                if canonical(opened[1]) in PARSERS:
                    out.append("(")
                opened = None
        elif line.lstrip().startswith("#"):
            line = re.sub(r"\b([A-Za-z])([a-z]{3,})", r"\1x\2", line, count=1)
        else:
            line = re.sub(r"\]\((?![a-z]+:|#)([^)#\s]+)", r"](\1x", line)
        out.append(line)
    return "\n".join(out)


@dataclass(frozen=True)
class MarkdownFormat(ArtifactFormat):
    """One Markdown document."""

    def extract(self, case: Case, reply: str) -> str:
        """See :func:`extract_document`."""
        return extract_document(reply)

    def fenced(self, artifact: str) -> str:
        """The document in a fence longer than any backtick fence inside it, so the
        prompt shows it whole."""
        runs = [len(run) for run in re.findall(r"^[ ]{0,3}(`{3,})", artifact, re.MULTILINE)]
        fence = "`" * max(3, *(run + 1 for run in runs)) if runs else "```"
        return f"{fence}{self.fence}\n{artifact.strip(chr(10))}\n{fence}"

    def simulated_reply(self, case: Case, correct: bool, attempt: int) -> str:
        """The reference when ``correct``; else the reference with planted defects."""
        reference = case.reference_solution.strip("\n")
        return self.fenced(reference if correct else _break(reference))


MARKDOWN_FORMAT = MarkdownFormat(
    fence="markdown",
    aliases=("md",),
    noun="document",
    system=(
        "You are a careful technical writer. Reply with the complete Markdown document "
        "in one ```markdown block, and nothing else. Use # headings for its sections, "
        "link only to files that exist, give every code block its language, and spell "
        "every word correctly."
    ),
)
"""The markdown judge's artifact format."""
