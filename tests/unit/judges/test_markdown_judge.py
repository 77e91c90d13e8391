"""The markdown judge: each defect sort found (and not found where there is none),
reading a reply back whole, the word lists, bounded work, and the bundled suite."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from critiquebench.judges import Failure, JudgeResult
from critiquebench.judges.markdown import (
    MAX_DOCUMENT_CHARS,
    MarkdownJudge,
)
from critiquebench.judges.markdown._document import github_slug
from critiquebench.suites import Case, Check


@pytest.fixture(scope="module")
def judge() -> MarkdownJudge:
    return MarkdownJudge()  # one per module: the dictionary loads once


def _case(*specs: dict[str, Any], heldout: bool = False, **data: Any) -> Case:
    origin = "heldout" if heldout else "feedback"
    checks = tuple(
        Check(source=spec.get("name", spec["type"]), origin=origin, spec=spec) for spec in specs
    )
    return Case(id="md", prompt="Write it.", judge="markdown", checks=checks, judge_data=data)


def _codes(result: JudgeResult) -> list[str]:
    assert result.infrastructure_error is None, result.infrastructure_error
    return [failure.code for failure in result.failures]


def _only(result: JudgeResult, code: str) -> Failure:
    found = [failure for failure in result.failures if failure.code == code]
    assert len(found) == 1, [f.describe() for f in result.failures]
    return found[0]


# -- sections ---------------------------------------------------------------------------

SECTIONS = {"type": "sections", "required": ["Installation", {"text": "Usage", "level": 2}]}


def test_required_sections_present_in_any_case_numbering_or_colon_pass(
    judge: MarkdownJudge,
) -> None:
    doc = "# Tool\n\n## 1. INSTALLATION:\n\ntext\n\n## usage\n\ntext\n"
    result = judge(_case(SECTIONS), doc)
    assert _codes(result) == [] and result.checks_passed == result.checks_total == 1


def test_a_missing_section_is_one_defect_naming_what_to_add(judge: MarkdownJudge) -> None:
    result = judge(_case(SECTIONS), "# Tool\n\n## Installation\n\ntext\n")
    failure = _only(result, "missing_section")
    assert failure.kind == "markdown" and failure.origin == "feedback"
    assert failure.source == "sections" and failure.expected == "## Usage"
    assert "## Installation" in (failure.actual or "") and result.checks_passed == 0


def test_a_section_at_the_wrong_level_is_missing_and_points_at_its_line(
    judge: MarkdownJudge,
) -> None:
    result = judge(_case(SECTIONS), "# Tool\n\n## Installation\n\n### Usage\n")
    failure = _only(result, "missing_section")
    assert failure.line == 5 and failure.actual == "### Usage" and "level-2" in failure.message


def test_a_hash_line_inside_a_code_block_is_no_heading(judge: MarkdownJudge) -> None:
    doc = "# Tool\n\n## Installation\n\n```sh\n## Usage\n```\n"
    assert _codes(judge(_case(SECTIONS), doc)) == ["missing_section"]


# -- links and anchors ------------------------------------------------------------------

FILES = {
    "files": ["docs/install.md", "docs/config.md", "LICENSE"],
    "headings": {"docs/config.md": ["Configuration", "Options", "Options"]},
}
LINKS = {"type": "links"}


def test_links_to_listed_files_folders_anchors_and_the_web_pass(judge: MarkdownJudge) -> None:
    doc = (
        "# Read me\n\n## Setup steps\n\n"
        "[a](docs/install.md) [b](./docs/../docs/config.md#options-1) [c](/LICENSE)\n"
        "[d](docs/) [e](#setup-steps) [f](https://example.org/nope#x) [g](mailto:a@b.c)\n"
        "[h](docs/install.md#anything) ![logo](docs/config.md) [root](./)\n"
    )
    result = judge(_case(LINKS, **FILES), doc)
    assert _codes(result) == [] and result.checks_passed == 1


def test_a_link_to_a_file_not_listed_is_a_broken_link_at_its_line_and_section(
    judge: MarkdownJudge,
) -> None:
    doc = "# Read me\n\n## Docs\n\nSee the\n[guide](docs/guide.md) and [x](../LICENSE).\n"
    result = judge(_case(LINKS, **FILES), doc)
    assert _codes(result) == ["broken_link", "broken_link"]
    first = result.failures[0]
    assert (first.file, first.line, first.actual) == ("## Docs", 6, "docs/guide.md")
    assert "docs/install.md" in (first.expected or "")


def test_an_anchor_no_heading_has_is_a_broken_anchor(judge: MarkdownJudge) -> None:
    doc = "# Read me\n\n[own](#read-mee) [other](docs/config.md#environment)\n"
    result = judge(_case(LINKS, **FILES), doc)
    assert _codes(result) == ["broken_anchor", "broken_anchor"]
    assert "#read-me" in (result.failures[0].expected or "")


def test_every_field_of_link_defects_in_one_document(judge: MarkdownJudge) -> None:
    doc = (
        "# Read me\n\n## Docs\n\n"
        "![pic]( img/a%20b.png?raw=1 ) [own](#nope)\n"
        "[cfg](docs/config.md#missing) [dead](gone.md#x)\n"
    )
    result = judge(_case(LINKS, **FILES), doc)
    listed = "LICENSE, docs/config.md, docs/install.md"
    assert [
        (f.code, f.file, f.line, f.expected, f.actual, f.message) for f in result.failures
    ] == [
        (
            "broken_link", "## Docs", 5, f"a file next to the document (files: {listed})",
            "img/a%20b.png?raw=1", "the image points to 'img/a%20b.png', which does not exist",
        ),
        (
            "broken_anchor", "## Docs", 5, "an anchor of a heading (anchors: #docs, #read-me)",
            "#nope", "no heading of 'this document' has the anchor #nope",
        ),
        (
            "broken_anchor", "## Docs", 6,
            "an anchor of a heading (anchors: #configuration, #options, #options-1)",
            "docs/config.md#missing", "no heading of 'docs/config.md' has the anchor #missing",
        ),
        (
            "broken_link", "## Docs", 6, f"a file next to the document (files: {listed})",
            "gone.md#x", "the link points to 'gone.md', which does not exist",
        ),
    ]  # fmt: skip
    assert {(f.kind, f.source, f.origin) for f in result.failures} == {
        ("markdown", "links", "feedback")
    }


def test_a_link_inside_a_code_span_is_not_a_link(judge: MarkdownJudge) -> None:
    doc = "# Read me\n\nWrite `[x](missing.md)` to link.\n"
    assert _codes(judge(_case(LINKS, **FILES), doc)) == []


def test_github_slugs_drop_punctuation_and_number_repeats() -> None:
    assert github_slug("What's new? (v2.0)") == "whats-new-v20"
    assert github_slug("Set-up & run") == "set-up--run"


# -- code blocks ------------------------------------------------------------------------

CODE = {"type": "code_blocks"}


@pytest.mark.parametrize(
    ("language", "bad"),
    [
        ("python", "def f(:\n    pass"),
        ("py", "x = (1,"),
        ("json", '{"a": 1,}'),
        ("yaml", "a: [1, 2"),
        ("toml", "a = = 1"),
        ("sql", "SELEC 1 FRM t"),
    ],
)
def test_a_block_that_does_not_parse_in_its_language_is_a_defect(
    judge: MarkdownJudge, language: str, bad: str
) -> None:
    doc = f"# Doc\n\n## Example\n\n```{language}\n{bad}\n```\n"
    failure = _only(judge(_case(CODE), doc), "bad_code_block")
    assert failure.file == "## Example" and failure.line >= 5


def test_blocks_that_parse_and_unknown_languages_pass(judge: MarkdownJudge) -> None:
    doc = (
        "# Doc\n\n```python\ndef f(x: int) -> int:\n    return x\n```\n"
        '```json\n{"a": [1, 2]}\n```\n```yaml\na: [1, 2]\n---\nb: 3\n```\n'
        '```toml\n[tool]\nname = "x"\n```\n```sql\nSELECT 1 AS one;\n```\n'
        "```bash\nif then fi ((\n```\n```\nnot code at all (\n```\n"
    )
    result = judge(_case(CODE), doc)
    assert _codes(result) == [] and result.checks_passed == 1


def test_a_python_syntax_error_points_at_its_document_line(judge: MarkdownJudge) -> None:
    doc = "# Doc\n\n```python\nx = 1\ny = (\n```\n"
    assert _only(judge(_case(CODE), doc), "bad_code_block").line == 5


def test_languages_restrict_the_blocks_checked(judge: MarkdownJudge) -> None:
    doc = "# Doc\n\n```json\n{bad\n```\n\n```python\nx = (\n```\n"
    only_python = {"type": "code_blocks", "languages": ["py"]}
    failure = _only(judge(_case(only_python), doc), "bad_code_block")
    assert "python" in (failure.expected or "")


def test_front_matter_is_read_as_yaml_and_never_as_headings(judge: MarkdownJudge) -> None:
    good = "---\nname: x\ndescription: y\n---\n\n# Skill\n"
    bad = "---\nname: [x\n---\n\n# Skill\n"
    both = _case(CODE, {"type": "sections", "required": [{"text": "Skill", "level": 1}]})
    assert _codes(judge(both, good)) == []
    failure = _only(judge(both, bad), "bad_code_block")
    assert failure.file == "front matter"


def test_code_blocks_are_parsed_never_run(judge: MarkdownJudge, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    doc = f"# Doc\n\n```python\nopen({str(marker)!r}, 'w').write('x')\n```\n"
    assert _codes(judge(_case(CODE), doc)) == [] and not marker.exists()


# -- spelling ---------------------------------------------------------------------------

SPELLING = {"type": "spelling"}


def test_a_misspelling_is_reported_with_its_word_line_and_suggestion(judge: MarkdownJudge) -> None:
    doc = "# Notes\n\nWe recieve the file.\n"
    failure = _only(judge(_case(SPELLING, heldout=True), doc), "misspelling")
    assert (failure.actual, failure.line, failure.expected) == ("recieve", 3, "receive")
    assert failure.origin == "heldout" and failure.file == "# Notes"


def test_code_urls_paths_acronyms_and_known_words_are_not_misspellings(
    judge: MarkdownJudge,
) -> None:
    doc = (
        "# Notes\n\nThe `recieve` span, <https://exmaple.org/qwzx> and [link](https://qwzx.io).\n"
        "Edit SKILL.md and src/qwzx_mod.py; the HTTPX and LangGraph names; a JSON config.\n\n"
        "```\nqwzx recieve\n```\n\n    indented qwzx code\n"
    )
    assert _codes(judge(_case(SPELLING), doc)) == []


def test_the_project_word_list_and_the_checks_words_are_accepted(judge: MarkdownJudge) -> None:
    doc = "# Qwzx\n\nRun qwzx with Blorp.\n"
    assert _codes(judge(_case(SPELLING), doc)) == ["misspelling", "misspelling"]
    assert _codes(judge(_case(SPELLING, words=["qwzx"]), doc)) == ["misspelling"]
    with_words = {"type": "spelling", "words": ["blorp"]}
    assert _codes(judge(_case(with_words, words=["qwzx"]), doc)) == []


def test_misspellings_are_counted_once_per_word_and_capped(judge: MarkdownJudge) -> None:
    doc = "# Notes\n\nqwzxa qwzxb qwzxa qwzxc qwzxd\n"
    assert len(judge(_case(SPELLING), doc).failures) == 4
    capped = {"type": "spelling", "max": 2}
    assert [f.actual for f in judge(_case(capped), doc).failures] == ["qwzxa", "qwzxb"]


# -- the whole document -----------------------------------------------------------------


def test_a_document_over_the_size_limit_is_one_defect_and_no_check_passes(
    judge: MarkdownJudge,
) -> None:
    result = judge(_case(SPELLING), "# Big\n\n" + "word " * MAX_DOCUMENT_CHARS)
    assert _codes(result) == ["too_large"] and result.checks_passed == 0
    assert result.failures[0].origin == ""  # the loop always sees it


def test_an_empty_reply_is_a_defect(judge: MarkdownJudge) -> None:
    assert "empty_document" in _codes(judge(_case(SECTIONS), "  \n"))


@pytest.mark.parametrize(
    "hostile",
    [
        "[" * (MAX_DOCUMENT_CHARS - 10),
        ">" * (MAX_DOCUMENT_CHARS - 10),
        "*a" * (MAX_DOCUMENT_CHARS // 2 - 10),
        "```python\n" + "(" * 50_000 + "\n```\n",
        "```json\n" + "[" * 50_000 + "\n```\n",
        "```yaml\n" + "[" * 50_000 + "\n```\n",
        "```sql\nSELECT " + "(" * 20_000 + "1" + ")" * 20_000 + "\n```\n",
    ],
)
def test_hostile_documents_are_judged_quickly_and_never_raise(
    judge: MarkdownJudge, hostile: str
) -> None:
    case = _case(SECTIONS, CODE, LINKS, SPELLING)
    started = time.perf_counter()
    result = judge(case, hostile)
    assert result.infrastructure_error is None
    assert time.perf_counter() - started < 20
    assert result.checks_total == 4


def test_the_judges_own_failure_is_an_infrastructure_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    judge = MarkdownJudge()

    def broken(*args: object) -> set[str]:
        raise ImportError("No module named 'spellchecker'")

    monkeypatch.setattr(judge.speller, "unknown", broken)
    result = judge(_case(SPELLING), "# Notes\n")
    assert result.infrastructure_error and "spellchecker" in result.infrastructure_error
    assert result.failures == () and not result.passed
