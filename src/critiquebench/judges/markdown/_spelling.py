"""Spelling against an English dictionary package (pyspellchecker) plus word lists.

The dictionary is pyspellchecker's English word-frequency list, shipped inside the
PyPI package (nothing is downloaded). Technical words that every software document
uses but a general dictionary lacks are accepted by :data:`TECH_WORDS`; a case adds
its own project words in ``judge_data.words`` and a check in its ``words``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Protocol

_TECH_WORDS_TEXT = """
    api apis app apps args async auth backend bool booleans cli config configs
    csv dataset datasets dict dicts dir dirs docstring docstrings env filename
    filenames frontend github hostname html http https init json jsonl linter
    linters localhost markdown metadata namespace namespaces npm param params
    parsers pipelines plugin plugins pre programmatically py pypi readme repo
    repos runtime sql stderr stdin stdout subcommand subcommands subfolder
    symlink timestamp timestamps toml txt url urls utf uuid venv virtualenv
    workflow workflows yaml yml changelog codebase gitignore lookup lookups
    performant rebase todo unicode username usernames whitespace wildcard
"""

TECH_WORDS: frozenset[str] = frozenset(_TECH_WORDS_TEXT.split())
"""Words of software documents that the general English dictionary lacks."""

MAX_SUGGESTED_LETTERS = 30
"""Longest word the dictionary is asked to correct: finding a correction builds every
word one edit away, about 54 per letter, each as long as the word, so a 60,000-letter
"word" would cost gigabytes. Longer words are still misspellings, without a suggestion."""


class _Dictionary(Protocol):
    def known(self, words: Iterable[str]) -> set[str]: ...

    def correction(self, word: str) -> str | None: ...


class Speller:
    """Decides which words are misspelled; loads the dictionary once, on first use.

    Raises (from :meth:`unknown`) ``ImportError`` when pyspellchecker is missing: the
    judge turns that into an infrastructure error, never a count of misspellings.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dictionary: _Dictionary | None = None

    def _load(self) -> _Dictionary:
        with self._lock:
            if self._dictionary is None:
                from spellchecker import SpellChecker

                # distance 1 keeps suggestions cheap on long words.
                self._dictionary = SpellChecker(language="en", distance=1)
            return self._dictionary

    def unknown(self, words: Iterable[str], accepted: frozenset[str]) -> set[str]:
        """The words (as given) that neither the dictionary nor ``accepted`` (lower
        case) nor :data:`TECH_WORDS` knows."""
        dictionary = self._load()
        accepted = accepted | TECH_WORDS
        candidates = {word for word in words if word.lower() not in accepted}
        known = dictionary.known(word.lower() for word in candidates)
        return {word for word in candidates if word.lower() not in known}

    def suggestion(self, word: str) -> str | None:
        """The dictionary's most likely correction of ``word``, if it has one (none for
        a word longer than :data:`MAX_SUGGESTED_LETTERS`)."""
        if len(word) > MAX_SUGGESTED_LETTERS:
            return None
        found = self._load().correction(word.lower())
        return found if found and found != word.lower() else None
