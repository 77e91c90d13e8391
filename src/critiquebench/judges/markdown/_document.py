"""A Markdown document read once into what the checks look at: headings, links,
fenced code blocks and the words of its prose, each with its line and section.

The structure comes from a CommonMark parser (markdown-it-py), never from regexes,
so a ``#`` inside a code block is no heading and a link inside a code span is no
link. Parsing executes nothing; the caller bounds the input's size.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token

TOP = "(top)"
"""The location of whatever comes before the first heading."""

FRONT_MATTER = "front matter"
"""The location (and block label) of a leading YAML front matter block."""

MAX_NESTING = 20
"""Deepest nesting of blocks (quotes, lists) the parser follows: bounds its work."""


@dataclass(frozen=True)
class Heading:
    """One heading: its level (1-6), plain text, line and GitHub-style anchor."""

    level: int
    text: str
    line: int
    slug: str

    @property
    def label(self) -> str:
        """How a location under this heading is named in defects, e.g. ``## Usage``."""
        return f"{'#' * self.level} {self.text}"


@dataclass(frozen=True)
class Link:
    """A link or image target as written, with where it is."""

    target: str
    line: int
    where: str
    image: bool = False


@dataclass(frozen=True)
class CodeBlock:
    """A fenced code block: its language (lower case, "" when none), body and line."""

    language: str
    body: str
    line: int
    where: str


@dataclass(frozen=True)
class Word:
    """A word of prose to spell-check, as written."""

    text: str
    line: int
    where: str


@dataclass(frozen=True)
class Document:
    """Everything the markdown checks read from one document."""

    headings: tuple[Heading, ...] = ()
    links: tuple[Link, ...] = ()
    blocks: tuple[CodeBlock, ...] = ()
    words: tuple[Word, ...] = ()
    slugs: frozenset[str] = field(default_factory=frozenset)


def github_slug(text: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces
    to hyphens (duplicates get ``-1``, ``-2``: see :func:`slugs_of`)."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def slugs_of(texts: list[str]) -> list[str]:
    """The anchors of headings in document order, numbering repeats as GitHub does."""
    seen: dict[str, int] = {}
    slugs: list[str] = []
    for text in texts:
        base = github_slug(text)
        count = seen.get(base, 0)
        slugs.append(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return slugs


def split_front_matter(text: str) -> tuple[str | None, str]:
    """A leading ``---`` YAML block and the body, blanked so lines keep their numbers."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            front = "\n".join(lines[1:index])
            return front, "\n".join([""] * (index + 1) + lines[index + 1 :])
    return None, text


_PATHLIKE = re.compile(r"://|[/\\@_\d]|\w\.\w")
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*")


def prose_words(text: str) -> Iterator[str]:
    """The words of a run of prose worth spell-checking.

    Skipped: chunks that look like paths, URLs, e-mail addresses, file names or
    identifiers (``SKILL.md``, ``a_b``, ``v2``), acronyms and CamelCase names
    (a capital after the first letter), which no dictionary holds.
    """
    for chunk in text.split():
        if _PATHLIKE.search(chunk):
            continue
        for word in _WORD.findall(chunk):
            word = word.removesuffix("'s")
            if len(word) > 1 and not any(letter.isupper() for letter in word[1:]):
                yield word


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"maxNesting": MAX_NESTING}).enable("table")


def _plain(inline: Token) -> str:
    """The visible text of an inline token (code spans included, markup dropped)."""
    parts = [
        child.content
        for child in inline.children or []
        if child.type in ("text", "code_inline", "softbreak")
    ]
    return " ".join(" ".join(parts).split())


class _Reader:
    """Walks the token stream once, keeping the current section."""

    def __init__(self) -> None:
        self.where = TOP
        self.headings: list[Heading] = []
        self.links: list[Link] = []
        self.blocks: list[CodeBlock] = []
        self.words: list[Word] = []

    def read(self, tokens: list[Token]) -> None:
        line = 1
        for index, token in enumerate(tokens):
            if token.map is not None:
                line = token.map[0] + 1
            if token.type == "heading_open" and index + 1 < len(tokens):
                text = _plain(tokens[index + 1])
                heading = Heading(int(token.tag[1]), text, line, "")
                self.headings.append(heading)
                self.where = heading.label
            elif token.type == "fence":
                language = token.info.split()[0].lower() if token.info.strip() else ""
                self.blocks.append(CodeBlock(language, token.content, line, self.where))
            elif token.type == "inline":
                self._inline(token, line)

    def _inline(self, inline: Token, line: int) -> None:
        in_autolink = False
        for child in inline.children or []:
            if child.type in ("softbreak", "hardbreak"):
                line += 1
            elif child.type == "link_open":
                in_autolink = child.markup == "autolink"
                self.links.append(Link(str(child.attrGet("href") or ""), line, self.where))
            elif child.type == "link_close":
                in_autolink = False
            elif child.type == "image":
                self.links.append(Link(str(child.attrGet("src") or ""), line, self.where, True))
            elif child.type == "text" and not in_autolink:
                self.words.extend(Word(w, line, self.where) for w in prose_words(child.content))


def read_document(text: str) -> Document:
    """Parse ``text`` (already bounded in size) into a :class:`Document`."""
    front, body = split_front_matter(text)
    reader = _Reader()
    if front is not None:
        reader.blocks.append(CodeBlock("yaml", front, 1, FRONT_MATTER))
    reader.read(_parser().parse(body))
    slugs = slugs_of([heading.text for heading in reader.headings])
    headings = tuple(
        Heading(h.level, h.text, h.line, slug)
        for h, slug in zip(reader.headings, slugs, strict=True)
    )
    return Document(
        headings=headings,
        links=tuple(reader.links),
        blocks=tuple(reader.blocks),
        words=tuple(reader.words),
        slugs=frozenset(slugs),
    )
