"""The "asked" line of an escalation summary: the request, cut at a word, never mid-word."""

from __future__ import annotations

import re

from critiquebench.suites import Case

_DOCSTRING = re.compile(r'(?:"""|\'\'\')\s*(.+?)\s*(?:"""|\'\'\'|$)', re.S)
_ELLIPSIS = "…"


def clip_words(text: str, width: int) -> str:
    """``text`` on one line, at most ``width`` characters, cut between words with "…".

    A single word longer than ``width`` is the one case cut inside a word, as there is
    no boundary to cut at.
    """
    words = text.split()
    line = " ".join(words)
    if len(line) <= width:
        return line
    kept = ""
    for word in words:
        candidate = f"{kept} {word}" if kept else word
        if len(candidate) + len(_ELLIPSIS) > width:
            break
        kept = candidate
    if not kept:
        return line[: width - len(_ELLIPSIS)] + _ELLIPSIS
    return kept.rstrip(",;:") + _ELLIPSIS


def request_line(case: Case, width: int = 100) -> str:
    """What the case asks, in one line: a code stub's docstring, else the prompt's first line."""
    prompt = case.prompt.strip()
    if not prompt:
        return ""
    if case.prompt_is_code:
        found = _DOCSTRING.search(prompt)
        if found and found.group(1).strip():
            # The docstring's first paragraph says what is wanted; the stub only names it.
            described = found.group(1).strip().split("\n\n")[0]
            return clip_words(f"{case.entry_point}: {described}", width)
    first = next(line for line in prompt.splitlines() if line.strip())
    return clip_words(first, width)
