"""The markdown judge's artifact format (a reply read back whole, nested fences
included), its suite lines, and the bundled ``markdown`` suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from critiquebench.judges import artifact_format, case_problems
from critiquebench.judges.markdown import MARKDOWN_FORMAT, MarkdownJudge, extract_document
from critiquebench.loop._extract import extract_code
from critiquebench.suites import Case, Check, load_suite, scan_jsonl_suite

SECTIONS = {"type": "sections", "required": ["Installation", {"text": "Usage", "level": 2}]}


def _case(*specs: dict[str, Any], **data: Any) -> Case:
    checks = tuple(
        Check(
            source=spec["name"],
            origin="feedback",
            spec={key: value for key, value in spec.items() if key != "name"},
        )
        for spec in specs
    )
    return Case(id="md", prompt="Write it.", judge="markdown", checks=checks, judge_data=data)


# -- reading the document from a reply --------------------------------------------------

DOC = "# Tool\n\n```python\nx = 1\n```\n\nText after.\n"


@pytest.mark.parametrize(
    "reply",
    [
        DOC,
        f"Here it is:\n```markdown\n{DOC}```\nHope this helps.",
        f"```md\n{DOC}```",
        f"````markdown\n{DOC}````\n",
        f"```\n{DOC}```",
    ],
)
def test_the_document_is_read_whole_with_its_nested_blocks(reply: str) -> None:
    assert extract_document(reply) == DOC


def test_an_unclosed_markdown_or_bare_block_runs_to_the_end() -> None:
    assert extract_document(f"```markdown\n{DOC}") == DOC
    assert extract_document(f"```\n{DOC}") == DOC


def test_a_bare_block_followed_by_more_text_is_part_of_the_document() -> None:
    reply = "```\nsome code\n```\n\n# Title\n"
    assert extract_document(reply) == reply


def test_prompts_show_the_document_in_a_fence_it_cannot_close() -> None:
    shown = MARKDOWN_FORMAT.fenced(DOC)
    assert shown.startswith("````markdown\n") and shown.endswith("\n````")
    assert extract_document(shown) == DOC


def test_the_loop_reads_markdown_cases_with_this_format() -> None:
    case = _case({"name": "s", **SECTIONS})
    assert artifact_format("markdown") is MARKDOWN_FORMAT
    assert extract_code(case, f"```markdown\n{DOC}```") == DOC


# -- suite lines ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "data", "fix"),
    [
        ({"type": "headings"}, {}, "set 'type' to one of sections, links"),
        ({"type": "sections"}, {}, "give 'required'"),
        ({"type": "sections", "required": [{"text": "A", "level": 9}]}, {}, "level 1-6"),
        ({"type": "links", "strict": True}, {}, "remove 'strict'"),
        ({"type": "code_blocks", "languages": ["cobol"]}, {}, "'languages' must be"),
        ({"type": "spelling", "max": 0}, {}, "'max' must be"),
        ({"type": "links"}, {"files": ["/etc/passwd"]}, "make '/etc/passwd' relative"),
        ({"type": "links"}, {"headings": {"a.md": ["A"]}}, "add 'a.md' to judge_data.files"),
        ({"type": "links"}, {"dictionary": "en"}, "remove 'dictionary'"),
        ({"type": "spelling"}, {"words": "qwzx"}, "judge_data.words: give a list"),
    ],
)
def test_case_problems_are_phrased_as_fixes(
    spec: dict[str, Any], data: dict[str, Any], fix: str
) -> None:
    problems = case_problems(_case({"name": "c", **spec}, **data))
    assert len(problems) == 1 and fix in problems[0], problems


def test_check_names_must_differ() -> None:
    links = {"name": "c", "type": "links"}
    problems = case_problems(_case(links, {**links, "type": "spelling"}))
    assert problems == ["check 'c': give each check a name of its own"]


def test_a_bad_suite_line_is_reported_with_file_and_line(tmp_path: Path) -> None:
    good = {
        "id": "m/1",
        "judge": "markdown",
        "prompt": "Write a README.",
        "feedback_checks": [{"name": "sections", "type": "sections", "required": ["Usage"]}],
    }
    bad = {
        **good,
        "id": "m/2",
        "heldout_checks": [{"name": "spell", "type": "spelling", "max": "x"}],
    }
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    scan = scan_jsonl_suite(path)
    assert [case.id for _, case in scan.cases] == ["m/1"]
    (problem,) = scan.problems
    assert problem.location() == f"{path}:2" and "'max' must be" in problem.reason


# -- the bundled suite ------------------------------------------------------------------


def test_bundled_references_are_clean_and_simulated_wrong_answers_are_not() -> None:
    judge = MarkdownJudge()
    cases = load_suite("markdown")
    assert len(cases) >= 8 and all(case.judge == "markdown" for case in cases)
    for case in cases:
        assert not case_problems(case), case.id
        origins = {check.origin for check in case.checks}
        assert origins == {"feedback", "heldout"}, case.id
        right = MARKDOWN_FORMAT.simulated_reply(case, True, 0)
        result = judge(case, extract_document(right))
        assert result.clean and result.checks_passed == len(case.checks), (
            case.id,
            [f.describe() for f in result.failures],
        )
        wrong = judge(case, extract_document(MARKDOWN_FORMAT.simulated_reply(case, False, 1)))
        assert wrong.infrastructure_error is None and wrong.failures, case.id
