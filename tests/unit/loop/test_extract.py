from __future__ import annotations

import difflib
from collections.abc import Iterator

import pytest

from critiquebench.loop import MAX_DIFF_LINES, diff_summary, extract_code, line_changes, normalise
from critiquebench.suites import Case, Check
from tests.helpers import make_case

CODE_CASE = Case(
    id="c",
    prompt='def inc(x):\n    """Add one."""\n',
    entry_point="inc",
    checks=(Check(source="assert inc(1) == 2", origin="feedback"),),
    prompt_is_code=True,
)


def test_picks_the_block_that_defines_the_entry_point() -> None:
    reply = "```python\nprint(1)\n```\ntext\n```python\ndef add(a, b):\n    return a + b\n```"
    assert extract_code(make_case(), reply) == "def add(a, b):\n    return a + b\n"


def test_unterminated_block_is_taken_to_the_end() -> None:
    assert extract_code(make_case(), "```python\ndef add(a, b):\n    return 1").startswith(
        "def add"
    )


def test_plain_reply_is_used_as_is() -> None:
    assert extract_code(make_case(), "def add(a, b): return a+b") == "def add(a, b): return a+b\n"


def test_body_only_reply_is_appended_to_a_code_prompt() -> None:
    code = extract_code(CODE_CASE, "```python\n    return x + 1\n```")
    assert code == CODE_CASE.prompt + "    return x + 1\n"


def test_normalise_and_diff_summary() -> None:
    assert normalise("a =  1\n\n  b") == normalise("a = 1\nb")
    assert diff_summary(None, "x") == ""
    assert diff_summary("a\nb", "a\nc\nd") == "+2 -1 lines"
    assert diff_summary("a", "a") == "no change"


def _judged(judge: str) -> Case:
    return Case(id="j", prompt="p", entry_point="f", checks=(), judge=judge)


BOM_REPLIES = [
    "\ufeffdef add(a, b):\n    return a + b",
    "\ufeff```python\ndef add(a, b):\n    return a + b\n```",
    "```python\n\ufeffdef add(a, b):\n    return a + b\n```",
    "\u200b\ufeff\n```python\n\u2060def add(a, b):\n    return a + b\n```",
]


def test_a_byte_order_mark_or_zero_width_prefix_is_not_part_of_the_answer() -> None:
    for reply in BOM_REPLIES:
        assert extract_code(make_case(), reply) == "def add(a, b):\n    return a + b\n", reply
    assert extract_code(_judged("sql"), "\ufeff```sql\nSELECT 1\n```") == "SELECT 1\n"
    assert extract_code(_judged("json"), '\ufeff{"a": 1}') == '{"a": 1}\n'
    assert extract_code(_judged("json"), '```json\n\ufeff{"a": 1}\n```') == '{"a": 1}\n'
    assert extract_code(_judged("markdown"), "\ufeff```markdown\n# T\n```") == "# T\n"
    assert extract_code(_judged("markdown"), "\ufeff# T\n") == "# T\n"


def test_a_body_only_reply_with_a_byte_order_mark_is_appended_to_the_prompt() -> None:
    code = extract_code(CODE_CASE, "```python\n\ufeff    return x + 1\n```")
    assert code == CODE_CASE.prompt + "    return x + 1\n"


def test_replies_with_one_very_long_line_are_read_in_one_pass() -> None:
    # Lines that made the old fence patterns backtrack for 37-52 s.
    spaces = "~~~" + " " * 60_000 + "`"
    markdown = f"```markdown\n# T\n{spaces}\n```"
    assert extract_code(_judged("markdown"), markdown) == f"# T\n{spaces}\n"
    tildes = "```markdown\n" + "~" * 60_000 + "`\n```"
    assert extract_code(_judged("markdown"), tildes) == "~" * 60_000 + "`\n"
    python = "```" + " " * 200_000
    assert extract_code(make_case(), python) == python + "\n"
    many = "```" * 66_000
    assert extract_code(make_case(), many) == many + "\n"


def test_long_artifacts_are_not_diffed_line_by_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # Lines that repeat made difflib take 27 s on 8,000 of them; past the bound the
    # changes are counted, never diffed.
    def refuse(*args: object, **kwargs: object) -> Iterator[str]:
        raise AssertionError("difflib was asked to diff a long artifact")

    monkeypatch.setattr(difflib, "unified_diff", refuse)
    before = "\n".join(f"x{i % 150}" for i in range(8000))
    after = "\n".join(reversed(before.split("\n"))) + "\nnew\nnew"
    assert diff_summary(before, after) == "+2 -0 lines"
    assert diff_summary(before, before) == "no change"
    assert line_changes("a\n" * 2000, "b\n" * 2000) == (2000, 2000)
    assert MAX_DIFF_LINES < 8000
