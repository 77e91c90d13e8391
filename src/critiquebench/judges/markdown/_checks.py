"""The markdown checks: each reads the parsed document and returns its defects.

A check object's ``type`` picks one of :data:`CHECKS`; its other fields are the
parameters documented in docs/suites.md (validated by ``_spec.case_problems``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from critiquebench.judges._case import Check
from critiquebench.judges._failure import Failure
from critiquebench.judges._plain import inert_text
from critiquebench.judges.markdown._code import canonical, parse_error
from critiquebench.judges.markdown._document import Document, Heading, Link, slugs_of
from critiquebench.judges.markdown._spelling import Speller

DEFAULT_MAX_MISSPELLINGS = 10
"""Misspellings reported per spelling check unless its ``max`` says otherwise."""


@dataclass(frozen=True)
class JudgeData:
    """A case's ``judge_data`` as the checks read it."""

    files: frozenset[str]
    """Paths that exist next to the document (relative, normalised)."""
    anchors: dict[str, frozenset[str]]
    """Anchors of the listed files whose headings the case gives."""
    words: frozenset[str]
    """Project words (lower case) accepted by the spelling check."""

    @classmethod
    def read(cls, data: dict[str, Any]) -> JudgeData:
        """From a validated ``judge_data`` (see ``_spec.case_problems``)."""
        files = frozenset(normalise_path(str(path)) for path in data.get("files", []))
        anchors = {
            normalise_path(str(path)): frozenset(slugs_of([str(text) for text in texts]))
            for path, texts in dict(data.get("headings", {})).items()
        }
        words = frozenset(str(word).lower() for word in data.get("words", []))
        return cls(files, anchors, words)


def normalise_path(path: str) -> str:
    """A relative path as compared with ``judge_data.files``: ``./a/../b.md`` -> ``b.md``;
    a leading ``/`` means the repository root, where the document is."""
    cleaned = posixpath.normpath(unquote(path).lstrip("/")) if path.strip("/") else "."
    return cleaned


def _defect(check: Check, code: str, where: str, line: int, **details: str) -> Failure:
    return Failure(
        kind="markdown",
        code=code,
        origin=check.origin,
        source=check.source,
        file=where,
        line=line,
        expected=details.get("expected"),
        actual=details.get("actual"),
        message=details.get("message", ""),
    )


def _normal_heading(text: str) -> str:
    """Heading text as required sections compare it: case, spacing, numbering and a
    trailing colon ignored (``2. Usage:`` matches ``usage``)."""
    text = re.sub(r"^\d+(\.\d+)*\.?\s+", "", " ".join(text.split()))
    return text.rstrip(":").strip().casefold()


def check_sections(check: Check, doc: Document, data: JudgeData, speller: Speller) -> list[Failure]:
    """One ``missing_section`` defect per required heading the document lacks."""
    found: list[Failure] = []
    present = ", ".join(h.label for h in doc.headings[:12]) or "no headings"
    for item in check.spec.get("required", []):
        text, level = (item, 0) if isinstance(item, str) else (item["text"], item.get("level", 0))
        wanted = _normal_heading(text)
        same: list[Heading] = [h for h in doc.headings if _normal_heading(h.text) == wanted]
        if any(not level or h.level == level for h in same):
            continue
        expected = f"{'#' * level} {text}" if level else f"a heading '{text}'"
        if same:
            actual, fix = same[0].label, f"make it a level-{level} heading ({'#' * level})"
            line = same[0].line
        else:
            actual, fix, line = f"no such heading (found: {present})", f"add a section '{text}'", 0
        found.append(
            _defect(
                check,
                "missing_section",
                "(document)",
                line,
                expected=expected,
                actual=actual,
                message=f"required section: {fix}",
            )
        )
    return found


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")


def check_links(check: Check, doc: Document, data: JudgeData, speller: Speller) -> list[Failure]:
    """``broken_link`` for a relative target that is not a listed file (or folder of
    one); ``broken_anchor`` for a ``#fragment`` no heading of its file has. Links
    with a scheme (http, mailto) are not followed: judging needs no network."""
    found: list[Failure] = []
    folders = {posixpath.dirname(path) for path in data.files}
    for link in doc.links:
        problem = _link_problem(link, doc, data, folders)
        if problem is not None:
            code, expected, message = problem
            found.append(
                _defect(
                    check,
                    code,
                    link.where,
                    link.line,
                    expected=expected,
                    actual=inert_text(link.target.strip()),
                    message=message,
                )
            )
    return found


def _link_problem(
    link: Link, doc: Document, data: JudgeData, folders: set[str]
) -> tuple[str, str, str] | None:
    """What is wrong with one link, as (code, expected, message), or None."""
    target = link.target.strip()
    if not target or _SCHEME.match(target):
        return None
    path, _, anchor = target.partition("#")
    path = path.split("?", 1)[0]
    if path:
        resolved = normalise_path(path)
        exists = resolved in (*data.files, ".") or any(
            folder == resolved or folder.startswith(resolved + "/") for folder in folders
        )
        if not exists:
            listed = ", ".join(sorted(data.files)[:12]) or "none"
            what = "image" if link.image else "link"
            # The target as written: decoding it would let %0A or %1B into the message.
            return (
                "broken_link",
                f"a file next to the document (files: {listed})",
                f"the {what} points to '{inert_text(path)}', which does not exist",
            )
        anchors = data.anchors.get(resolved)
    else:
        anchors = doc.slugs
    if anchor and anchors is not None and unquote(anchor).lower() not in anchors:
        known = ", ".join(sorted(f"#{slug}" for slug in anchors)[:12]) or "none"
        return (
            "broken_anchor",
            f"an anchor of a heading (anchors: {known})",
            f"no heading of '{inert_text(path) or 'this document'}' has the anchor "
            f"#{inert_text(anchor)}",
        )
    return None


def check_code_blocks(
    check: Check, doc: Document, data: JudgeData, speller: Speller
) -> list[Failure]:
    """``bad_code_block`` for each fenced block that does not parse in its language."""
    wanted = {canonical(str(language)) for language in check.spec.get("languages", [])}
    found: list[Failure] = []
    for block in doc.blocks:
        language = canonical(block.language)
        if wanted and language not in wanted:
            continue
        error = parse_error(language, block.body)
        if error is None:
            continue
        line = block.line + error.line if error.line else block.line
        found.append(
            _defect(
                check,
                "bad_code_block",
                block.where,
                line,
                expected=f"a {language} block that parses",
                actual=error.message,
                message=f"the {language} block at line {block.line} does not parse",
            )
        )
    return found


def check_spelling(check: Check, doc: Document, data: JudgeData, speller: Speller) -> list[Failure]:
    """``misspelling`` for each distinct unknown word of the prose (first use), at most
    ``max`` of them; code, links' targets and URLs are not prose."""
    accepted = data.words | {str(word).lower() for word in check.spec.get("words", [])}
    unknown = speller.unknown((word.text for word in doc.words), accepted)
    limit = int(check.spec.get("max", DEFAULT_MAX_MISSPELLINGS))
    found: list[Failure] = []
    reported: set[str] = set()
    for word in doc.words:
        key = word.text.lower()
        if word.text not in unknown or key in reported:
            continue
        reported.add(key)
        if len(found) == limit:
            break
        suggestion = speller.suggestion(word.text)
        found.append(
            _defect(
                check,
                "misspelling",
                word.where,
                word.line,
                expected=suggestion or "a dictionary word (or add it to the project word list)",
                actual=word.text,
                message=f"'{word.text}' is not in the dictionary",
            )
        )
    return found


CheckFunction = Callable[[Check, Document, JudgeData, Speller], list[Failure]]

CHECKS: dict[str, CheckFunction] = {
    "sections": check_sections,
    "links": check_links,
    "code_blocks": check_code_blocks,
    "spelling": check_spelling,
}
"""The check types a markdown check object's ``type`` names."""
