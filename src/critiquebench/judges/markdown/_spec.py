"""What is wrong with a markdown case's judge data and check objects, as fixes."""

from __future__ import annotations

import posixpath
from typing import Any

from critiquebench.judges._case import Case, Check
from critiquebench.judges.markdown._checks import CHECKS
from critiquebench.judges.markdown._code import PARSERS, canonical

DATA_KEYS = ("files", "headings", "words")
_PARAMETERS: dict[str, tuple[str, ...]] = {
    "sections": ("required",),
    "links": (),
    "code_blocks": ("languages",),
    "spelling": ("words", "max"),
}


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and item for item in value)


def _data_problems(data: dict[str, Any]) -> list[str]:
    problems = [
        f"judge_data: remove '{key}' (the markdown judge reads {', '.join(DATA_KEYS)})"
        for key in data
        if key not in DATA_KEYS
    ]
    files = data.get("files", [])
    if not _strings(files):
        problems.append('judge_data.files: give a list of relative paths, e.g. ["docs/usage.md"]')
        files = []
    for path in files:
        if path.startswith("/") or posixpath.normpath(path).startswith(".."):
            problems.append(f"judge_data.files: make {path!r} relative to the document's folder")
    headings = data.get("headings", {})
    if not isinstance(headings, dict) or not all(_strings(v) for v in headings.values()):
        problems.append(
            "judge_data.headings: give an object mapping a listed file to its heading texts, "
            'e.g. {"docs/usage.md": ["Install", "Options"]}'
        )
    else:
        problems.extend(
            f"judge_data.headings: add {path!r} to judge_data.files (or drop its headings)"
            for path in headings
            if path not in files
        )
    if not _strings(data.get("words", [])):
        problems.append('judge_data.words: give a list of words, e.g. ["critiquebench"]')
    return problems


def _required_problem(item: Any) -> str | None:
    if isinstance(item, str) and item.strip():
        return None
    if isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"].strip():
        level = item.get("level")
        if set(item) <= {"text", "level"} and (
            level is None or (isinstance(level, int) and 1 <= level <= 6)
        ):
            return None
    return (
        f"'required' entry {item!r}: give a heading text or "
        '{"text": "Usage", "level": 2} (level 1-6)'
    )


def _check_problems(check: Check) -> list[str]:
    where = f"check {check.source!r}"
    kind = check.spec.get("type")
    if kind not in CHECKS:
        return [f"{where}: set 'type' to one of {', '.join(CHECKS)}"]
    allowed = _PARAMETERS[kind]
    problems = [
        f"{where}: remove '{key}' (a {kind} check reads {', '.join(allowed) or 'no parameters'})"
        for key in check.spec
        if key not in ("type", *allowed)
    ]
    spec = check.spec
    if kind == "sections":
        required = spec.get("required")
        if not isinstance(required, list) or not required:
            problems.append(f"{where}: give 'required', a non-empty list of headings")
        else:
            problems.extend(f"{where}: {p}" for p in map(_required_problem, required) if p)
    elif kind == "code_blocks" and "languages" in spec:
        languages = spec["languages"]
        if (
            not _strings(languages)
            or not languages
            or any(canonical(language) not in PARSERS for language in languages)
        ):
            known = ", ".join(PARSERS)
            problems.append(f"{where}: 'languages' must be a non-empty list of {known}")
    elif kind == "spelling":
        if not _strings(spec.get("words", [])):
            problems.append(f"{where}: 'words' must be a list of words")
        limit = spec.get("max", 1)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 100:
            problems.append(f"{where}: 'max' must be a whole number from 1 to 100")
    return problems


def case_problems(case: Case) -> list[str]:
    """Every problem of the case's ``judge_data`` and check objects, phrased as a fix."""
    problems = _data_problems(dict(case.judge_data))
    seen: set[str] = set()
    for check in case.checks:
        problems.extend(_check_problems(check))
        if check.source in seen:  # defects name their check: names must tell them apart
            problems.append(f"check {check.source!r}: give each check a name of its own")
        seen.add(check.source)
    return problems
