from __future__ import annotations

from critiquebench.loop import diff_summary, extract_code, normalise
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
